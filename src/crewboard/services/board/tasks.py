"""Making tasks (create_task, the tasks a tasks.md file adds) and the save every task change
goes through: its links, its lifecycle facts and what changed. Finding a task is in
task_lookup, changing one in task_updates."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from crewboard.domain.board.reads import TaskShown
from crewboard.domain.board.tasks import (
    Priority,
    Relation,
    Task,
    TaskStatus,
    TaskType,
    lifecycle_facts,
)
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.naming import name_of
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.errors import (
    RevisionConflict,
)
from crewboard.services.board.task_checks import (
    CHECKS,
    check_assignment,
    check_fields,
    check_related,
    check_status_allowed,
)
from crewboard.services.board.task_lookup import render_task, task_ids_of
from crewboard.services.board.task_sources import status_moved
from crewboard.services.board.views import task_key, task_view
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import WorkspaceRef, access_project
from crewboard.services.views import actor_stamp, iso
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


# --- writing -------------------------------------------------------------------------------


def apply_links(
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
            "task": event_task(TaskShown(stamped, project, (), {})),
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
        blockers, others = apply_links(uow, proj, task, blocked_by)
    else:  # a new task has no relationships yet: nothing to read back
        blockers, others = (0, 0), {}
    record_lifecycle(uow, actor, None, task, (0, blockers[1]))
    touch_related(uow, actor, proj, others)
    if blocked_by or task.parent_task_id is not None:
        view = render_task(uow, task, proj)
    else:
        view = TaskShown(task, proj, (), {})
    uow.record_event(
        "task.created",
        actor=actor.as_payload(),
        payload={"task": event_task(view)},
        project_id=proj.id,
        workspace_id=proj.workspace_id,
    )
    return Ack(
        {"task": task_view(view)}, resource_type="task", resource_id=task.id, project_id=proj.id
    )


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
        payload={"task": event_task(TaskShown(task, project, (), {}))},
        project_id=project.id,
        workspace_id=project.workspace_id,
    )
    return task


def event_task(shown: TaskShown) -> dict[str, Any]:
    """What the event log keeps of a task (a live-event payload): enough to show it, not its
    long texts."""
    task = shown.task
    return {
        "id": task.id,
        "key": task_key(shown.project, task),
        "number": task.number,
        "title": task.title,
        "status": str(task.status),
        "assigneeId": task.assignee_id,
        "revision": task.revision,
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
            arguments=jsonable(arguments),
            perform=lambda: do_create_task(
                uow, actor, project=project, workspace_id=workspace_id, fields=checked
            ),
        )
    )


def jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return {
        k: (v if not isinstance(v, date | datetime) else v.isoformat()) for k, v in values.items()
    }


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


def revision_conflict(current: Task, expected: int) -> RevisionConflict:
    who = name_of(current.updated_by)
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
