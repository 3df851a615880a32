"""Changing a task once it is made: update_task's patch, assign_task and set_task_parent."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from crewboard.domain.board.tasks import (
    Relation,
    Task,
)
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.errors import (
    ValidationFailed,
)
from crewboard.services.board.claims import check_claim_fence
from crewboard.services.board.task_checks import (
    CHECKS,
    check_assignment,
    check_related,
    check_status_allowed,
)
from crewboard.services.board.task_lookup import access_task, render_task, task_ids_of
from crewboard.services.board.task_sources import status_moved
from crewboard.services.board.tasks import (
    PATCH_FIELDS,
    apply_links,
    camel,
    event_task,
    field_changes,
    jsonable,
    record_lifecycle,
    revision_conflict,
    touch_related,
)
from crewboard.services.board.views import task_view
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import WorkspaceRef
from crewboard.services.views import actor_stamp
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


def do_update_task(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project: str | None,
    workspace_id: WorkspaceRef,
    task_ref: str,
    expected_revision: int,
    patch: dict[str, Any],
    claim_fence: int | None = None,
) -> Ack:
    current, proj = access_task(
        uow,
        actor,
        task_ref,
        project=project,
        scope=Scope.TASKS_MANAGE,
        role=Role.WRITE,
        workspace_id=workspace_id,
    )
    check_claim_fence(uow, actor, current, claim_fence)
    if current.revision != expected_revision:
        raise revision_conflict(current, expected_revision)
    if "status" in patch:
        check_status_allowed(actor, patch["status"])
    blocked_by = patch.pop("blocked_by_task_ids", None)
    if blocked_by is not None:
        blocked_by = task_ids_of(uow, proj, blocked_by)
    blockers_before = blocker_ids(uow, current.id) if blocked_by is not None else ()
    changes = dict(patch)
    if changes.get("parent_task_id") is not None:
        (changes["parent_task_id"],) = task_ids_of(uow, proj, (changes["parent_task_id"],))
    if "assignee_id" in changes and "assignee_type" not in changes:
        changes["assignee_type"] = None  # the new assignee decides it (check_assignment)
    for clearable in (
        "tags",
        "labels",
        "context_item_ids",
        "external_reference_ids",
        "context_refs",
    ):
        if clearable in changes and changes[clearable] is None:
            changes[clearable] = ()
    if "description" in changes and changes["description"] is None:
        changes["description"] = ""
    if "brief" in changes and changes["brief"] is None:
        changes["brief"] = ""
    updated = replace(
        current,
        **changes,
        revision=current.revision + 1,
        updated_by=actor_stamp(actor),
        updated_at=uow.now,
    )
    if updated.status is not current.status and "board_order" not in changes:
        updated = replace(
            updated, board_order=uow.tasks.next_board_order(proj.id, updated.status.value)
        )
    updated = check_assignment(uow, proj, updated)
    if updated.parent_task_id is not None and updated.parent_task_id != current.parent_task_id:
        check_related(uow, proj, updated.id, (updated.parent_task_id,), "parentTaskId")
        check_no_parent_cycle(uow, proj, updated.id, updated.parent_task_id)
    if not uow.tasks.replace(updated, expected_revision):
        latest = uow.tasks.get(current.id)
        raise revision_conflict(latest or current, expected_revision)
    blockers, others = apply_links(uow, proj, updated, blocked_by)
    record_lifecycle(uow, actor, current, updated, blockers)
    touch_related(uow, actor, proj, others)
    status_moved(uow, actor, proj, [updated], before=[current])  # its box in tasks.md, if any
    view = render_task(uow, updated, proj)
    changed, changes = _what_changed(current, updated, patch, blockers_before, blocked_by)
    uow.record_event(
        "task.updated",
        actor=actor.as_payload(),
        payload={
            "task": event_task(view),
            "changed": changed,
            "changes": changes,
            "by": actor_stamp(actor),
        },
        project_id=proj.id,
        workspace_id=proj.workspace_id,
    )
    return Ack(
        {"task": task_view(view)}, resource_type="task", resource_id=updated.id, project_id=proj.id
    )


def _what_changed(
    current: Task,
    updated: Task,
    patch: dict[str, Any],
    blockers_before: tuple[str, ...],
    blocked_by: tuple[str, ...] | None,
) -> tuple[list[str], dict[str, Any]]:
    """A task.updated event's `changed` (the fields whose value differs) and `changes` (their
    values from → to, where kept)."""
    changed = _changed_fields(current, updated, patch)
    changes = field_changes(current, updated, changed)
    if blocked_by is not None and set(blocked_by) != set(blockers_before):
        changed.append("blockedByTaskIds")
        changes["blockedByTaskIds"] = {"from": list(blockers_before), "to": list(blocked_by)}
    return changed, changes


def _changed_fields(current: Task, updated: Task, patch: dict[str, Any]) -> list[str]:
    """The patched fields whose value differs: a form or a client that sends every field
    leaves an activity naming only what changed."""

    def plain(value: Any) -> Any:
        return tuple(value) if isinstance(value, list | tuple) else value

    return sorted(
        camel(k)
        for k in patch
        if not hasattr(current, k) or plain(getattr(current, k)) != plain(getattr(updated, k))
    )


def blocker_ids(uow: UnitOfWork, task_id: str) -> tuple[str, ...]:
    """The ids of the tasks this one is blocked by."""
    links = uow.tasks.links_of([task_id])[task_id]
    return tuple(link.other_id for link in links if link.relation is Relation.BLOCKED_BY)


MAX_PARENT_DEPTH = 1000  # a chain of parents longer than this is refused as if it looped


def check_no_parent_cycle(uow: UnitOfWork, project: Project, task_id: str, parent_id: str) -> None:
    """Refuse a parent that is the task's own subtask (at any depth).

    Raises:
        ValidationFailed: naming parentTaskId.
    """
    step: str | None = parent_id
    for _ in range(MAX_PARENT_DEPTH):
        if step is None:
            return
        if step == task_id:
            parent = uow.tasks.get(parent_id)
            key = f"{project.key}-{parent.number}" if parent else parent_id
            raise ValidationFailed.field(
                "parentTaskId",
                f"{key} is a subtask of this task (or below one), so it cannot be its parent "
                "too; that would make a loop.",
            )
        found = uow.tasks.get(step)
        step = found.parent_task_id if found else None
    raise ValidationFailed.field("parentTaskId", "the chain of parents is too long or loops.")


def update_task(
    db: Database,
    actor: Actor,
    *,
    project: str | None,
    workspace_id: WorkspaceRef,
    idempotency_key: str | None,
    task_id: str,
    expected_revision: int,
    patch: dict[str, Any],
    operation: str = "update_task",
    claim_fence: int | None = None,
) -> KeyedResult:
    """Change a task from the revision the caller read (keyed).

    `operation` names the write in the idempotency ledger (a tool that patches a few fields
    through here, such as assign_task, keys its own calls).

    Raises:
        RevisionConflict: the task moved on; details name the revision, who and when.
        ClaimLost: `claim_fence` is not the task's live claim of the caller's.
        NotFound, PermissionDenied, ValidationFailed, LimitExceeded, IdempotencyConflict.
    """
    unknown = sorted(set(patch) - set(PATCH_FIELDS))
    if unknown:
        raise ValidationFailed.field(
            f"patch.{camel(unknown[0])}", "is not a task field.", [camel(f) for f in PATCH_FIELDS]
        )
    if not patch:
        raise ValidationFailed.field(
            "patch", "name at least one field to change.", [camel(f) for f in PATCH_FIELDS]
        )
    for name, value in patch.items():
        if value is None and name not in _CLEARABLE:
            raise ValidationFailed.field(
                camel(name), "cannot be cleared; send a value or leave it out."
            )
    checked = {
        name: (None if value is None else CHECKS[name](value)) for name, value in patch.items()
    }
    arguments = {
        "project": project,
        "workspaceId": workspace_id,
        "taskId": task_id,
        "expectedRevision": expected_revision,
        "patch": jsonable(patch),
    }
    return db.write(
        lambda uow: do_keyed_write(
            uow,
            actor,
            key=idempotency_key,
            operation=operation,
            arguments=arguments,
            perform=lambda: do_update_task(
                uow,
                actor,
                project=project,
                workspace_id=workspace_id,
                task_ref=task_id,
                expected_revision=expected_revision,
                patch=dict(checked),
                claim_fence=claim_fence,
            ),
        )
    )


ASSIGNMENT_FIELDS = ("assignee_id", "assignee_type", "human_owner_id")


def assign_task(
    db: Database,
    actor: Actor,
    *,
    workspace_id: WorkspaceRef,
    idempotency_key: str | None,
    task_id: str,
    expected_revision: int,
    assignment: dict[str, Any],
) -> KeyedResult:
    """Change who does a task (assignee) and who answers for it (human owner), keyed, through
    update_task: the same checks and the same assignment_changed lifecycle event.

    `assignment` holds only the fields the caller sent (snake_case); None clears one.

    Raises:
        ValidationFailed: no assignment field sent; as update_task.
        RevisionConflict, NotFound, PermissionDenied, LimitExceeded, IdempotencyConflict.
    """
    if not assignment:
        raise ValidationFailed.field(
            "assigneeId",
            "send assigneeId, assigneeType or humanOwnerId (null clears one).",
            [camel(name) for name in ASSIGNMENT_FIELDS],
        )
    unknown = sorted(set(assignment) - set(ASSIGNMENT_FIELDS))
    if unknown:
        raise ValidationFailed.field(
            camel(unknown[0]), "is not an assignment field.", [camel(f) for f in ASSIGNMENT_FIELDS]
        )
    return update_task(
        db,
        actor,
        project=None,
        workspace_id=workspace_id,
        idempotency_key=idempotency_key,
        task_id=task_id,
        expected_revision=expected_revision,
        patch=assignment,
        operation="assign_task",
    )


def set_task_parent(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    idempotency_key: str | None,
    task_id: str,
    parent_id: str | None,
    from_parent: str | None = None,
) -> KeyedResult:
    """Make a task a subtask of `parent_id` (None: of no task), keyed, through update_task's
    checks and events, at the revision it has now: the parent's page adds and removes subtasks
    it has not read. With `from_parent`, only while the task is still a subtask of that one.

    Raises:
        ValidationFailed: the task is no longer a subtask of `from_parent`; as update_task.
        NotFound, PermissionDenied, LimitExceeded, IdempotencyConflict.
    """
    parent = CHECKS["parent_task_id"](parent_id)

    def perform(uow: UnitOfWork) -> Ack:
        current, proj = access_task(
            uow,
            actor,
            task_id,
            project=project,
            scope=Scope.TASKS_MANAGE,
            role=Role.WRITE,
            workspace_id=workspace_id,
        )
        if from_parent is not None:
            (was,) = task_ids_of(uow, proj, (from_parent,))
            if current.parent_task_id != was:
                raise ValidationFailed.field(
                    "parentTaskId",
                    f"{proj.key}-{current.number} is not a subtask of {from_parent} any more.",
                )
        return do_update_task(
            uow,
            actor,
            project=project,
            workspace_id=workspace_id,
            task_ref=current.id,
            expected_revision=current.revision,
            patch={"parent_task_id": parent},
        )

    arguments = {
        "project": project,
        "workspaceId": workspace_id,
        "taskId": task_id,
        "parentTaskId": parent_id,
        "fromParent": from_parent,
    }
    return db.write(
        lambda uow: do_keyed_write(
            uow,
            actor,
            key=idempotency_key,
            operation="set_task_parent",
            arguments=arguments,
            perform=lambda: perform(uow),
        )
    )


_CLEARABLE = frozenset(
    {
        "assignee_id",
        "assignee_type",
        "human_owner_id",
        "due_date",
        "start_date",
        "story_points",
        "cycle",
        "parent_task_id",
        "output_destination",
        "description",
        "brief",
        "tags",
        "labels",
        "context_refs",
        "context_item_ids",
        "external_reference_ids",
        "blocked_by_task_ids",
    }
)
