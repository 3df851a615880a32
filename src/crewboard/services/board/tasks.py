"""The task board's core use cases: create, update, read, list."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from crewboard.domain.board.tasks import (
    Priority,
    Relation,
    Task,
    TaskStatus,
    TaskType,
    lifecycle_facts,
    parse_task_key,
)
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.errors import (
    NotFound,
    RevisionConflict,
    ValidationFailed,
)
from crewboard.services.board.task_checks import (
    CHECKS,
    check_assignment,
    check_fields,
    check_related,
    check_status_allowed,
)
from crewboard.services.board.task_sources import status_moved
from crewboard.services.board.views import task_view
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.services.views import actor_stamp, iso
from crewboard.storage.board.tasks import TaskFilter
from crewboard.storage.database import Database, LostRace
from crewboard.storage.sequences import TASK_NUMBERS
from crewboard.storage.uow import UnitOfWork

# Patchable fields, snake_case, as update_task's `patch` names them (camelCase on the wire).
PATCH_FIELDS = (
    "title",
    "description",
    "brief",
    "type",
    "status",
    "priority",
    "assignee_id",
    "assignee_type",
    "human_owner_id",
    "tags",
    "labels",
    "due_date",
    "start_date",
    "story_points",
    "cycle",
    "parent_task_id",
    "blocked_by_task_ids",
    "context_refs",
    "context_item_ids",
    "external_reference_ids",
    "output_destination",
    "board_order",
)


# --- finding tasks -------------------------------------------------------------------------


def task_not_found(ref: str) -> NotFound:
    return NotFound(
        f"No task {ref!r} is open to you; list_tasks finds tasks by number, text or status.",
        {"resource": "task", "ref": ref},
    )


def access_task(
    uow: UnitOfWork,
    actor: Actor,
    ref: str,
    *,
    project: str | None = None,
    scope: Scope = Scope.READ,
    role: Role = Role.READ,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> tuple[Task, Project]:
    """A task by id (tsk_…), key (CRW-12) or number (with `project`), permission-checked.

    Raises:
        NotFound: no such task, or it is in a project the actor cannot open.
        PermissionDenied, ValidationFailed: as `access_project`.
    """
    task: Task | None = None
    if "\x00" in ref:
        raise task_not_found(ref)
    if ref.startswith("tsk_"):
        task = uow.tasks.get(ref)
    elif (key := parse_task_key(ref)) is not None:
        found = uow.projects.get_by_key(key[0])
        task = uow.tasks.get_by_number(found.id, key[1]) if found else None
    elif ref.isdigit() and project is not None:
        access = access_project(uow, actor, project)
        task = uow.tasks.get_by_number(access.project.id, int(ref))
    if task is None:
        raise task_not_found(ref)
    try:
        access = access_project(
            uow, actor, task.project_id, scope=scope, role=role, workspace_id=workspace_id
        )
    except NotFound:
        raise task_not_found(ref) from None
    if project is not None and project not in (access.project.id, access.project.key):
        raise task_not_found(ref)
    return task, access.project


def find_project_tasks(uow: UnitOfWork, project: Project, refs: Iterable[str]) -> dict[str, Task]:
    """The tasks of `project` named by id, key (CRW-12) or number, by ref; unknown refs absent."""
    refs = list(refs)
    by_id = uow.tasks.get_many(ref for ref in refs if ref.startswith("tsk_"))
    numbers: dict[str, int] = {}
    for ref in refs:
        key = parse_task_key(ref)
        if key is not None and key[0] == project.key:
            numbers[ref] = key[1]
        elif ref.isascii() and ref.isdigit():
            numbers[ref] = int(ref)
    by_number: dict[int, Task] = {}
    if numbers:
        wanted = sorted(set(numbers.values()))
        rows, _ = uow.tasks.search(
            TaskFilter(project_ids=[project.id], numbers=wanted), limit=len(wanted)
        )
        by_number = {task.number: task for task in rows}
    found: dict[str, Task] = {}
    for ref in refs:
        task = by_id.get(ref) if ref in by_id else by_number.get(numbers.get(ref, 0))
        if task is not None and task.project_id == project.id:
            found[ref] = task
    return found


def task_ids_of(uow: UnitOfWork, project: Project, refs: Iterable[str]) -> tuple[str, ...]:
    """Each ref (an id, or a key such as CRW-12) as the id of that task of `project`, once.

    A ref that names no task of the project stays as given: the caller's check refuses it,
    naming its own field.
    """
    refs = tuple(refs)
    # An id needs no look-up here: the caller's check reads it anyway.
    found = find_project_tasks(uow, project, [ref for ref in refs if not ref.startswith("tsk_")])
    return tuple(dict.fromkeys(found[ref].id if ref in found else ref for ref in refs))


def render_task(uow: UnitOfWork, task: Task, project: Project) -> dict[str, Any]:
    links = uow.tasks.links_of([task.id])[task.id]
    related = [link.other_id for link in links] + (
        [task.parent_task_id] if task.parent_task_id else []
    )
    return task_view(task, project, links, uow.tasks.numbers_of(related))


# --- writing -------------------------------------------------------------------------------


def _apply_links(
    uow: UnitOfWork, project: Project, task: Task, blocked_by: tuple[str, ...] | None
) -> tuple[tuple[int, int], dict[str, int]]:
    """Make `blocked_by` the task's blockers (None: leave them).

    Returns the task's blocker counts before and after, and the other tasks whose relationship
    to it changed, each with its own blocker count from before (a pair holds one relationship,
    so making C block A undoes "A blocks C" and changes C too).
    """
    before = uow.tasks.blocker_count(task.id)
    if blocked_by is None:
        return (before, before), {}
    check_related(uow, project, task.id, blocked_by, "blockedByTaskIds")
    links = uow.tasks.links_of([task.id])[task.id]
    current = {link.other_id: link.relation for link in links}
    gone = [o for o, rel in current.items() if rel is Relation.BLOCKED_BY and o not in blocked_by]
    new = [o for o in blocked_by if current.get(o) is not Relation.BLOCKED_BY]
    others = {o: uow.tasks.blocker_count(o) for o in (*gone, *new)}
    for other in gone:
        uow.tasks.remove_link(task.id, other)
    for other in new:
        uow.tasks.set_link(project.id, task.id, other, Relation.BLOCKED_BY, uow.now)
    return (before, uow.tasks.blocker_count(task.id)), others


def save_task(
    uow: UnitOfWork,
    actor: Actor,
    project: Project,
    current: Task,
    updated: Task,
    *,
    changed: list[str],
    blockers: tuple[int, int] = (0, 0),
) -> Task:
    """Write `updated` over `current` (revision +1), its lifecycle events and a task.updated event.

    `current` was read in this transaction; a caller's own expected revision was checked
    against it before. When another writer committed in between (PostgreSQL), the whole unit
    of work runs again on what is committed now, so a call that named no revision does not
    fail for a race it could not see.

    Raises:
        LostRace: the row moved on since it was read in this transaction (Database.write
            retries; RevisionConflict once the attempts run out).
    """
    stamped = replace(
        updated, revision=current.revision + 1, updated_by=actor_stamp(actor), updated_at=uow.now
    )
    if not uow.tasks.replace(stamped, current.revision):
        raise LostRace(revision_conflict(uow.tasks.get(current.id) or current, current.revision))
    record_lifecycle(uow, actor, current, stamped, blockers)
    status_moved(uow, actor, project, [stamped], before=[current])  # its box in tasks.md
    uow.record_event(
        "task.updated",
        actor=actor.as_payload(),
        payload={
            "task": event_task(task_view(stamped, project, [], {})),
            "changed": changed,
            "changes": field_changes(current, stamped, changed),
            "by": actor_stamp(actor),
        },
        project_id=project.id,
        workspace_id=project.workspace_id,
    )
    return stamped


def touch_related(uow: UnitOfWork, actor: Actor, project: Project, others: dict[str, int]) -> None:
    """The other ends of changed relationships: revision +1, and a blocker event if theirs moved."""
    for other_id, count_before in others.items():
        other = uow.tasks.get(other_id)
        if other is not None:
            blockers = (count_before, uow.tasks.blocker_count(other_id))
            save_task(
                uow, actor, project, other, other, changed=["relationships"], blockers=blockers
            )


def record_lifecycle(
    uow: UnitOfWork, actor: Actor, before: Task | None, after: Task, blockers: tuple[int, int]
) -> None:
    for fact in lifecycle_facts(before, after, *blockers):
        uow.tasks.add_lifecycle_event(
            after, fact.type.value, actor=actor_stamp(actor), data=fact.data, at=uow.now
        )


def do_create_task(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    fields: dict[str, Any],
) -> Ack:
    access = access_project(
        uow, actor, project, scope=Scope.TASKS_MANAGE, role=Role.WRITE, workspace_id=workspace_id
    )
    proj = access.project
    values = {
        name: CHECKS[name](None) for name in ("description", "brief", "tags", "labels")
    } | fields
    status = values.get("status", TaskStatus.BACKLOG)
    check_status_allowed(actor, status)
    stamp = actor_stamp(actor)
    task = Task(
        id=new_id("tsk"),
        project_id=proj.id,
        number=0,  # taken last, below: the counter row stays locked until the commit
        title=values["title"],
        description=values["description"],
        brief=values["brief"],
        type=values.get("type", TaskType.GENERAL),
        status=status,
        priority=values.get("priority", Priority.MEDIUM),
        assignee_id=values.get("assignee_id"),
        assignee_type=values.get("assignee_type"),
        human_owner_id=values.get("human_owner_id"),
        tags=values["tags"],
        labels=values["labels"],
        due_date=values.get("due_date"),
        start_date=values.get("start_date"),
        story_points=values.get("story_points"),
        cycle=values.get("cycle"),
        parent_task_id=values.get("parent_task_id"),
        context_refs=values.get("context_refs", ()),
        context_item_ids=values.get("context_item_ids", ()),
        external_reference_ids=values.get("external_reference_ids", ()),
        output_destination=values.get("output_destination"),
        board_order=values.get("board_order") or uow.tasks.next_board_order(proj.id, status.value),
        revision=1,
        coverage="complete",
        created_by=stamp,
        updated_by=stamp,
        created_at=uow.now,
        updated_at=uow.now,
    )
    task = check_assignment(uow, proj, task)
    if task.parent_task_id is not None:
        (parent_id,) = task_ids_of(uow, proj, (task.parent_task_id,))
        task = replace(task, parent_task_id=parent_id)
        check_related(uow, proj, task.id, (parent_id,), "parentTaskId")
    task = replace(task, number=uow.sequences.take_next(proj.id, TASK_NUMBERS))
    uow.tasks.add(task)
    blocked_by = task_ids_of(uow, proj, values.get("blocked_by_task_ids") or ())
    if blocked_by:
        blockers, others = _apply_links(uow, proj, task, blocked_by)
    else:  # a new task has no relationships yet: nothing to read back
        blockers, others = (0, 0), {}
    record_lifecycle(uow, actor, None, task, (0, blockers[1]))
    touch_related(uow, actor, proj, others)
    if blocked_by or task.parent_task_id is not None:
        view = render_task(uow, task, proj)
    else:
        view = task_view(task, proj, [], {})
    uow.record_event(
        "task.created",
        actor=actor.as_payload(),
        payload={"task": event_task(view)},
        project_id=proj.id,
        workspace_id=proj.workspace_id,
    )
    return Ack({"task": view}, resource_type="task", resource_id=task.id, project_id=proj.id)


def do_add_source_task(
    uow: UnitOfWork,
    actor: Actor,
    project: Project,
    *,
    title: str,
    description: str,
    status: TaskStatus,
    source_file_id: str,
    source_line: int,
) -> Task:
    """A task made from a line of a `tasks.md` file (the caller checked its access to the
    file's project): a number, its lifecycle facts and a task.created event. A line already
    started (`in_progress`) has whoever saved the file as its human owner, since a task in
    progress names who does the work."""
    stamp = actor_stamp(actor)
    task = Task(
        id=new_id("tsk"),
        project_id=project.id,
        number=0,  # taken last, below: the counter row stays locked until the commit
        title=CHECKS["title"](title),
        description=CHECKS["description"](description),
        brief="",
        type=TaskType.GENERAL,
        status=status,
        priority=Priority.MEDIUM,
        assignee_id=None,
        assignee_type=None,
        human_owner_id=actor.user_id if status is TaskStatus.IN_PROGRESS else None,
        tags=(),
        labels=(),
        due_date=None,
        start_date=None,
        story_points=None,
        cycle=None,
        parent_task_id=None,
        context_refs=(),
        context_item_ids=(),
        external_reference_ids=(),
        output_destination=None,
        board_order=uow.tasks.next_board_order(project.id, status.value),
        revision=1,
        coverage="complete",
        created_by=stamp,
        updated_by=stamp,
        created_at=uow.now,
        updated_at=uow.now,
        source_file_id=source_file_id,
        source_line=source_line,
    )
    task = replace(task, number=uow.sequences.take_next(project.id, TASK_NUMBERS))
    uow.tasks.add(task)
    uow.tasks.add_source(task)
    record_lifecycle(uow, actor, None, task, (0, 0))
    uow.record_event(
        "task.created",
        actor=actor.as_payload(),
        payload={"task": event_task(task_view(task, project, [], {}))},
        project_id=project.id,
        workspace_id=project.workspace_id,
    )
    return task


def event_task(view: dict[str, Any]) -> dict[str, Any]:
    """What the event log keeps of a task: enough to show it, not its long texts."""
    return {
        k: view[k] for k in ("id", "key", "number", "title", "status", "assigneeId", "revision")
    }


def create_task(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    idempotency_key: str | None,
    **fields: Any,
) -> KeyedResult:
    """Create a task on the board (keyed).

    Raises:
        NotFound, PermissionDenied, ValidationFailed, LimitExceeded, IdempotencyConflict.
    """
    checked = check_fields({k: v for k, v in fields.items() if v is not None or k in ("title",)})
    arguments = {"project": project, "workspaceId": workspace_id, **fields}
    return db.write(
        lambda uow: do_keyed_write(
            uow,
            actor,
            key=idempotency_key,
            operation="create_task",
            arguments=_jsonable(arguments),
            perform=lambda: do_create_task(
                uow, actor, project=project, workspace_id=workspace_id, fields=checked
            ),
        )
    )


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return {
        k: (v if not isinstance(v, date | datetime) else v.isoformat()) for k, v in values.items()
    }


def do_update_task(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project: str | None,
    workspace_id: WorkspaceRef,
    task_ref: str,
    expected_revision: int,
    patch: dict[str, Any],
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
    blockers, others = _apply_links(uow, proj, updated, blocked_by)
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
    return Ack({"task": view}, resource_type="task", resource_id=updated.id, project_id=proj.id)


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


# The fields whose old and new values a task.updated event keeps, so a task's history reads
# "Priority: medium → high". Long texts and structured fields are only named in `changed`.
# Every patchable field but these (the same order).
UNVALUED_FIELDS = frozenset(
    {
        "description",
        "brief",
        "blocked_by_task_ids",  # recorded from the links themselves
        "context_refs",
        "context_item_ids",
        "external_reference_ids",
        "board_order",  # layout, not a change a person reads
    }
)
VALUED_FIELDS = tuple(name for name in PATCH_FIELDS if name not in UNVALUED_FIELDS)


def field_changes(current: Task, updated: Task, changed: Iterable[str]) -> dict[str, Any]:
    """{field: {"from": old, "to": new}} for the changed fields (camelCase) that keep values."""
    valued = {camel(name): name for name in VALUED_FIELDS}
    return {
        name: {
            "from": _plain_value(getattr(current, valued[name])),
            "to": _plain_value(getattr(updated, valued[name])),
        }
        for name in changed
        if name in valued
    }


def _plain_value(value: Any) -> Any:
    """A field's value as JSON keeps it: dates as YYYY-MM-DD, enums as their value."""
    if isinstance(value, list | tuple):
        return [_plain_value(item) for item in value]
    if isinstance(value, date):
        return value.isoformat()
    return str(value) if isinstance(value, StrEnum) else value


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
) -> KeyedResult:
    """Change a task from the revision the caller read (keyed).

    `operation` names the write in the idempotency ledger (a tool that patches a few fields
    through here, such as assign_task, keys its own calls).

    Raises:
        RevisionConflict: the task moved on; details name the revision, who and when.
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
        "patch": _jsonable(patch),
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


def revision_conflict(current: Task, expected: int) -> RevisionConflict:
    who = current.updated_by.get("displayName") or current.updated_by.get("userId") or "someone"
    return RevisionConflict(
        f"The task is at revision {current.revision}, not {expected}: {who} changed it at "
        f"{iso(current.updated_at)}. Read it again with get_task, then retry with that revision.",
        {
            "taskId": current.id,
            "currentRevision": current.revision,
            "expectedRevision": expected,
            "updatedBy": current.updated_by,
            "updatedAt": iso(current.updated_at),
        },
    )


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
