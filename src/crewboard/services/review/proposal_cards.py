"""A proposal card's rules: what each kind may hold, and what accepting it does (the task,
change, deletion or seats it proposed, written in the accepting person's transaction with
the events of each change)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from crewboard.domain.board.tasks import (
    MAX_LONG_TEXT,
    MAX_TITLE,
    Priority,
    Task,
    TaskStatus,
    TaskType,
)
from crewboard.domain.identity.access import parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project, SeatKind, TeamRole
from crewboard.domain.review import (
    CardMade,
    Proposal,
    ProposalKind,
    SeatsMade,
    TaskChanged,
    TaskDeleted,
    TaskMade,
)
from crewboard.domain.validation import check_text
from crewboard.errors import LimitExceeded, NotFound, ValidationFailed
from crewboard.services.board.task_updates import do_update_task
from crewboard.services.board.tasks import camel, do_create_task, save_task, touch_related
from crewboard.services.board.views import task_key
from crewboard.services.identity.access import ANY_WORKSPACE
from crewboard.services.projects.team import MAX_ROLE_NAME, MAX_ROLE_TEXT, team_role_view
from crewboard.storage.review.proposals import ProposalRepository
from crewboard.storage.uow import UnitOfWork

TEAM_KINDS = frozenset({ProposalKind.ROLE, ProposalKind.COMPOSITION})
MAX_REASON = 2000  # a reason, a rationale or a role's description
MAX_SEATS = 12
SEAT_FIELDS = ("role", "name", "typeHint")


# --- checks ------------------------------------------------------------------------------------


def optional_text(field: str, value: str | None, limit: int) -> str:
    return check_text(field, value, max_length=limit) if value is not None else ""


def hint_text(field: str, value: str | None) -> str | None:
    return check_text(field, value, max_length=MAX_ROLE_NAME) or None if value is not None else None


def text_value(field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValidationFailed.field(field, "must be text.")
    return value


CHANGE_CHECKS: dict[str, Callable[[str], str]] = {
    "title": lambda v: check_text("changes.title", v, max_length=MAX_TITLE, required=True),
    "description": lambda v: check_text("changes.description", v, max_length=MAX_LONG_TEXT),
    "status": lambda v: parse_enum(v, TaskStatus, "changes.status").value,
    "priority": lambda v: parse_enum(v, Priority, "changes.priority").value,
    "typeHint": lambda v: parse_enum(v, TaskType, "changes.typeHint").value,
    "roleHint": lambda v: check_text(
        "changes.roleHint", v, max_length=MAX_ROLE_NAME, required=True
    ),
}


def check_changes(changes: dict[str, Any]) -> dict[str, str]:
    """The fields a task change proposes, each checked.

    Raises:
        ValidationFailed: none named, an unknown field or value (naming the accepted ones).
        LimitExceeded: a text over its limit.
    """
    accepted = list(CHANGE_CHECKS)
    if not changes:
        raise ValidationFailed.field("changes", "name at least one field to change.", accepted)
    for name in changes:
        if name not in CHANGE_CHECKS:
            raise ValidationFailed.field(
                f"changes.{name}", "is not a field a proposal can change.", accepted
            )
    return {
        name: CHANGE_CHECKS[name](text_value(f"changes.{name}", value))
        for name, value in changes.items()
    }


def check_seats(seats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """1 to 12 seats, each a role with an optional name (default: the role) and ai/human hint.

    Raises:
        ValidationFailed: no seats, an unknown seat field or typeHint. LimitExceeded: over 12.
    """
    if not seats:
        raise ValidationFailed.field("seats", f"propose between 1 and {MAX_SEATS} seats.")
    if len(seats) > MAX_SEATS:
        raise LimitExceeded(
            f"seats: {len(seats)} seats is over the limit of {MAX_SEATS}; propose fewer.",
            {"field": "seats", "limit": MAX_SEATS, "actual": len(seats)},
        )
    return [_check_seat(f"seats.{i}", seat) for i, seat in enumerate(seats)]


def _check_seat(path: str, seat: dict[str, Any]) -> dict[str, Any]:
    for name in seat:
        if name not in SEAT_FIELDS:
            raise ValidationFailed.field(
                f"{path}.{name}", "is not a seat field.", list(SEAT_FIELDS)
            )
    role = check_text(
        f"{path}.role", text_value(f"{path}.role", seat.get("role", "")), max_length=MAX_ROLE_TEXT
    )
    if not role:
        raise ValidationFailed.field(f"{path}.role", "must not be empty.")
    given = seat.get("name")
    if given is not None:
        given = text_value(f"{path}.name", given)
    clean_name = optional_text(f"{path}.name", given, MAX_ROLE_NAME) or role
    if len(clean_name) > MAX_ROLE_NAME:
        raise ValidationFailed.field(
            f"{path}.name", f"give the seat a name of at most {MAX_ROLE_NAME} characters."
        )
    hint = seat.get("typeHint")
    kind = (
        parse_enum(text_value(f"{path}.typeHint", hint), SeatKind, f"{path}.typeHint").value
        if hint is not None
        else None
    )
    return {"role": role, "name": clean_name, "typeHint": kind}


# --- accepting ---------------------------------------------------------------------------------


def match_role(uow: UnitOfWork, project_id: str, hint: str | None) -> TeamRole | None:
    """The active team role a hint names: by name first, then by role, ignoring case."""
    if not hint:
        return None
    wanted = hint.strip().casefold()
    roles = uow.team.list(project_id)
    by_name = next((r for r in roles if r.name.casefold() == wanted), None)
    return by_name or next((r for r in roles if r.role.casefold() == wanted), None)


def apply_card(uow: UnitOfWork, actor: Actor, project: Project, card: Proposal) -> CardMade:
    """Apply a card; answer what it made (ids), which the card keeps as its result.

    Raises:
        NotFound: the card's task is gone. ValidationFailed, PermissionDenied: as the task and
            team use cases it runs (e.g. a change that no longer fits the task).
    """
    kind = card.kind
    if kind is ProposalKind.TASK:
        return _apply_task(uow, actor, project, card.payload)
    if kind in TEAM_KINDS:
        return _apply_seats(uow, actor, project, card)
    task = uow.tasks.get(card.task_id or "")
    if task is None:
        raise NotFound(
            f"The task of proposal {card.id} no longer exists; dismiss the card.",
            {"resource": "task", "ref": card.task_id},
        )
    if kind is ProposalKind.TASK_UPDATE:
        return _apply_task_update(uow, actor, project, task, card.payload["changes"])
    return _apply_task_delete(uow, actor, project, task)


def _apply_task(
    uow: UnitOfWork, actor: Actor, project: Project, payload: dict[str, Any]
) -> TaskMade:
    fields: dict[str, Any] = {
        "title": payload["title"],
        "description": payload["description"],
        "status": TaskStatus.BACKLOG,
    }
    if payload.get("typeHint"):
        fields["type"] = TaskType(payload["typeHint"])
    seat = match_role(uow, project.id, payload.get("roleHint"))
    if seat is not None:
        fields["assignee_id"] = seat.id
    made = do_create_task(
        uow, actor, project=project.id, workspace_id=ANY_WORKSPACE, fields=fields
    ).body["task"]
    return TaskMade(made["id"], made["key"], made["assigneeId"])


PATCH_OF: dict[str, tuple[str, Callable[[str], Any]]] = {
    "title": ("title", str),
    "description": ("description", str),
    "status": ("status", TaskStatus),
    "priority": ("priority", Priority),
    "typeHint": ("type", TaskType),
}


def _apply_task_update(
    uow: UnitOfWork, actor: Actor, project: Project, task: Task, changes: dict[str, Any]
) -> TaskChanged:
    patch = {
        PATCH_OF[name][0]: PATCH_OF[name][1](diff["to"])
        for name, diff in changes.items()
        if name in PATCH_OF
    }
    if "roleHint" in changes:
        seat = match_role(uow, project.id, changes["roleHint"]["to"])
        if seat is not None:
            patch["assignee_id"] = seat.id
    applied = sorted(camel(name) for name in patch)
    revision = task.revision
    if patch:
        revision = do_update_task(
            uow,
            actor,
            project=None,
            workspace_id=ANY_WORKSPACE,
            task_ref=task.id,
            expected_revision=task.revision,
            patch=patch,
        ).body["task"]["revision"]
    return TaskChanged(task.id, task_key(project, task), applied, revision)


def _apply_task_delete(uow: UnitOfWork, actor: Actor, project: Project, task: Task) -> TaskDeleted:
    """Delete the task; its subtasks lose their parent and linked tasks their link (both +1)."""
    repo = ProposalRepository(uow.conn)
    links = uow.tasks.links_of([task.id])[task.id]
    others = {link.other_id: uow.tasks.blocker_count(link.other_id) for link in links}
    for child_id in repo.child_task_ids(task.id):
        child = uow.tasks.get(child_id)
        if child is not None:
            save_task(
                uow,
                actor,
                project,
                child,
                replace(child, parent_task_id=None),
                changed=["parentTaskId"],
            )
    repo.delete_task(task.id)
    touch_related(uow, actor, project, others)
    key = task_key(project, task)
    uow.record_event(
        "task.deleted",
        actor=actor.as_payload(),
        payload={"taskId": task.id, "taskKey": key, "title": task.title},
        project_id=project.id,
        workspace_id=project.workspace_id,
    )
    return TaskDeleted(task.id, key)


def _apply_seats(uow: UnitOfWork, actor: Actor, project: Project, card: Proposal) -> SeatsMade:
    seats = card.payload["seats"] if card.kind == ProposalKind.COMPOSITION.value else [card.payload]
    made: list[str] = []
    for rank, seat in enumerate(seats):
        role = TeamRole(
            id=new_id("rol"),
            project_id=project.id,
            name=seat["name"],
            role=seat["role"],
            kind=SeatKind(seat.get("typeHint") or SeatKind.HUMAN.value),
            member_user_id=None,
            model=None,
            effort=None,
            rank=rank,
            level=1,
            xp=0,
            archived_at=None,
            created_at=uow.now,
        )
        uow.team.add(role)
        uow.record_event(
            "team.role_added",
            actor=actor.as_payload(),
            payload={"role": team_role_view(role), "proposalId": card.id},
            project_id=project.id,
            workspace_id=project.workspace_id,
        )
        made.append(role.id)
    return SeatsMade(made)
