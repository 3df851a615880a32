"""Reading the board: one task (with lifecycle, checklist, relationships, readiness) and lists."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from crewboard.domain.board.tasks import Task, TaskStatus, parse_task_key, search_words
from crewboard.domain.identity.access import parse_enum_list
from crewboard.domain.models import Actor, Project
from crewboard.errors import ValidationFailed
from crewboard.services.board.context import context_for_task, named_records, needs_receipt
from crewboard.services.board.tasks import access_task, render_task, task_ids_of
from crewboard.services.board.views import (
    DEFAULT_LIST_FIELDS,
    FINISHED,
    LIST_FIELDS,
    agent_brief,
    checklist,
    list_row,
    readiness,
    task_view,
)
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, open_projects
from crewboard.services.paging import check_page
from crewboard.services.projects.team import team_role_view
from crewboard.services.views import iso
from crewboard.storage.board.tasks import TaskFilter
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_LIST = 200
MAX_Q = 200


def get_task(
    db: Database,
    actor: Actor,
    *,
    task: str | None = None,
    number: int | None = None,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    include_context_pack: bool = True,
    format: str | None = None,  # the wire name of the field
) -> dict[str, Any] | str:
    """A task with its lifecycle summary, checklist, relationships and readiness.

    `format="agent_brief"` returns plain text (at most 3000 characters) instead.

    Raises:
        ValidationFailed: neither `task` nor `number`, or `number` without a project when the
            actor has several. NotFound.
    """
    if format is not None and format != "agent_brief":
        raise ValidationFailed.field("format", f"{format!r} is not a format.", ["agent_brief"])
    if task is None and number is None:
        raise ValidationFailed.field(
            "taskId", "pass taskId (or a key such as CRW-12), or number with projectId."
        )

    def work(uow: UnitOfWork) -> dict[str, Any] | str:
        ref = task if task is not None else str(number)
        found, project_ = access_task(
            uow,
            actor,
            ref,
            project=project or _only_project(uow, actor, number),
            workspace_id=workspace_id,
        )
        view = render_task(uow, found, project_)
        blockers = list(uow.tasks.get_many(view["blockedByTaskIds"]).values())
        parent = uow.tasks.get(found.parent_task_id) if found.parent_task_id else None
        role = _assignee_role(uow, project_, found)
        if format == "agent_brief":
            named = [(r.title, r.summary or r.content) for r in named_records(uow, project_, found)]
            state = uow.state.get(project_.id).content
            return agent_brief(project_, found, parent, blockers, state, named=named, role=role)
        subtasks, _ = uow.tasks.search(
            TaskFilter(project_ids=[project_.id], parent_task_id=found.id), limit=MAX_LIST
        )
        items = checklist(found)
        events, latest = uow.tasks.lifecycle_summary(found.id)
        answer: dict[str, Any] = {
            "task": view,
            "lifecycle": {
                "coverage": found.coverage,
                "createdAt": iso(found.created_at),
                "latestEventAt": iso(latest),
                "eventCount": events,
                "status": str(found.status),
                "assigneeId": found.assignee_id,
                "assigneeType": found.assignee_type and str(found.assignee_type),
                "humanOwnerId": found.human_owner_id,
            },
            "assigneeRole": role,
            "checklist": items,
            "relationships": view["relationships"],
            "subtasks": [
                {"id": s.id, "number": s.number, "title": s.title, "status": str(s.status)}
                for s in subtasks
            ],
            "readiness": readiness(
                found, blockers, sum(1 for s in subtasks if s.status not in FINISHED), items
            ),
        }
        if include_context_pack:
            answer.update(
                context_for_task(uow, actor, project_, found, parent=parent, blockers=blockers)
            )
        return answer

    # A full read by a token that can hand in writes its context receipt.
    if include_context_pack and format is None and needs_receipt(actor):
        return db.write(work)
    return db.read(work)


ROLE_FIELDS = ("id", "name", "kind", "model", "effort", "rank")


def _assignee_role(uow: UnitOfWork, project: Project, task: Task) -> dict[str, Any] | None:
    """The team role the task is assigned to, with the model, effort and rank it asks for."""
    if task.assignee_id is None or not task.assignee_id.startswith("rol_"):
        return None
    seat = uow.team.get(project.id, task.assignee_id)
    if seat is None:
        return None
    view = team_role_view(seat)
    return {name: view[name] for name in ROLE_FIELDS}


def _only_project(uow: UnitOfWork, actor: Actor, number: int | None) -> str | None:
    """A bare task number needs a project; with exactly one open project, that one."""
    if number is None:
        return None
    page = uow.projects.list_for_user(
        actor.user_id, only_project_id=actor.project_cap, limit=2, offset=0
    )
    if page.total != 1:
        raise ValidationFailed.field(
            "projectId", "a task number needs projectId when you can open several projects."
        )
    return page.rows[0][0].id


def list_tasks(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    statuses: list[str] | None = None,
    numbers: list[int] | None = None,
    q: str | None = None,
    parent_task_id: str | None = None,
    tag: str | None = None,
    label: str | None = None,
    assignee: str | None = None,
    cycle: str | None = None,
    updated_since: datetime | None = None,
    fields: list[str] | None = None,
    order: str = "asc",
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[dict[str, Any]], int]:
    """Tasks matching every filter, by number; rows carry the chosen fields and a description preview.

    Raises:
        ValidationFailed, LimitExceeded: a bad filter, named with its accepted values. NotFound.
    """
    chosen = _fields(fields) if fields else DEFAULT_LIST_FIELDS
    filters = _filters(
        statuses=statuses, numbers=numbers, q=q, order=order, limit=limit, offset=offset
    )

    def work(uow: UnitOfWork) -> tuple[list[dict[str, Any]], int]:
        projects = open_projects(uow, actor, project, workspace_id)
        if not projects:
            return [], 0
        assignee_id, unassigned = assignee_filter(actor, assignee)
        found, total = uow.tasks.search(
            TaskFilter(
                project_ids=list(projects),
                statuses=filters["statuses"],
                numbers=numbers or (),
                words=filters["words"],
                parent_task_id=_parent_id(uow, projects, parent_task_id),
                tag=tag,
                label=label,
                assignee_id=assignee_id,
                unassigned=unassigned,
                cycle=cycle,
                updated_since=updated_since,
            ),
            descending=order == "desc",
            limit=limit,
            offset=offset,
        )
        links = uow.tasks.links_of(t.id for t in found)
        related = {o.other_id for ls in links.values() for o in ls} | {
            t.parent_task_id for t in found if t.parent_task_id
        }
        numbers_ = uow.tasks.numbers_of(related)
        rows = [
            list_row(task_view(t, projects[t.project_id], links[t.id], numbers_), chosen)
            for t in found
        ]
        return rows, total

    return db.read(work)


def _parent_id(uow: UnitOfWork, projects: dict[str, Project], ref: str | None) -> str | None:
    """The parent filter as a task id: a key (CRW-12) names that task of an open project."""
    if ref is None or (key := parse_task_key(ref)) is None:
        return ref
    for project in projects.values():
        if project.key == key[0]:
            return task_ids_of(uow, project, (ref,))[0]
    return ref


def _fields(names: list[str]) -> tuple[str, ...]:
    for name in names:
        if name not in LIST_FIELDS:
            raise ValidationFailed.field("fields", f"{name!r} is not a column.", list(LIST_FIELDS))
    return tuple(dict.fromkeys(names))


def _filters(
    *,
    statuses: list[str] | None,
    numbers: list[int] | None,
    q: str | None,
    order: str,
    limit: int,
    offset: int,
) -> dict[str, Any]:
    check_page(limit, offset, MAX_LIST)
    if order not in ("asc", "desc"):
        raise ValidationFailed.field("order", f"{order!r} is not an order.", ["asc", "desc"])
    if numbers is not None and len(numbers) > MAX_LIST:
        raise ValidationFailed.field("number", f"at most {MAX_LIST} numbers.")
    if q is not None and len(q) > MAX_Q:
        raise ValidationFailed.field("q", f"at most {MAX_Q} characters.")
    return {
        "statuses": [s.value for s in parse_enum_list(statuses or [], TaskStatus, "status")],
        "words": search_words(q or ""),
    }


def assignee_filter(actor: Actor, assignee: str | None) -> tuple[str | None, bool]:
    """`me` is the caller's AI seat (agent token) or user; `none` is unassigned."""
    if assignee is None:
        return None, False
    if assignee == "none":
        return None, True
    if assignee == "me":
        return actor.user_id, False
    return assignee, False
