"""Checking a task's fields before a write: each refusal names its field and what it accepts."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any

from crewboard.domain.board.tasks import (
    MAX_CYCLE,
    MAX_IDS,
    MAX_LONG_TEXT,
    MAX_OUTPUT_DESTINATION,
    MAX_STORY_POINTS,
    MAX_TITLE,
    AssigneeType,
    Priority,
    Task,
    TaskStatus,
    TaskType,
    check_tags,
)
from crewboard.domain.identity.access import parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project, SeatKind
from crewboard.domain.validation import check_text
from crewboard.errors import (
    LimitExceeded,
    PermissionDenied,
    ValidationFailed,
)
from crewboard.storage.uow import UnitOfWork


def _date(field: str, value: str | date | None) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValidationFailed.field(field, f"{value!r} is not a date (YYYY-MM-DD).") from None


def _ids(field: str, values: list[str] | None) -> tuple[str, ...]:
    items = list(values or [])
    if len(items) > MAX_IDS:
        raise LimitExceeded(
            f"{field}: {len(items)} items is over the limit of {MAX_IDS}.",
            {"field": field, "limit": MAX_IDS},
        )
    return tuple(dict.fromkeys(check_text(field, v, max_length=200, required=True) for v in items))


def _story_points(value: int | None) -> int | None:
    if value is not None and not 0 <= value <= MAX_STORY_POINTS:
        raise ValidationFailed.field(
            "storyPoints", f"must be between 0 and {MAX_STORY_POINTS}; got {value}."
        )
    return value


CHECKS: dict[str, Any] = {
    "title": lambda v: check_text("title", v, max_length=MAX_TITLE, required=True),
    "description": lambda v: check_text("description", v or "", max_length=MAX_LONG_TEXT),
    "brief": lambda v: check_text("brief", v or "", max_length=MAX_LONG_TEXT),
    "type": lambda v: parse_enum(v, TaskType, "type"),
    "status": lambda v: parse_enum(v, TaskStatus, "status"),
    "priority": lambda v: parse_enum(v, Priority, "priority"),
    "assignee_id": lambda v: _optional_id("assigneeId", v),
    "assignee_type": lambda v: (
        parse_enum(v, AssigneeType, "assigneeType") if v is not None else None
    ),
    "human_owner_id": lambda v: _optional_id("humanOwnerId", v),
    "tags": lambda v: check_tags("tags", v or []),
    "labels": lambda v: check_tags("labels", v or []),
    "due_date": lambda v: _date("dueDate", v),
    "start_date": lambda v: _date("startDate", v),
    "story_points": _story_points,
    "cycle": lambda v: (
        check_text("cycle", v, max_length=MAX_CYCLE) or None if v is not None else None
    ),
    "parent_task_id": lambda v: _optional_id("parentTaskId", v),
    "blocked_by_task_ids": lambda v: _ids("blockedByTaskIds", v),
    "context_refs": lambda v: tuple(_context_refs(v or [])),
    "context_item_ids": lambda v: _ids("contextItemIds", v),
    "external_reference_ids": lambda v: _ids("externalReferenceIds", v),
    "output_destination": lambda v: (
        check_text("outputDestination", v, max_length=MAX_OUTPUT_DESTINATION) or None
        if v is not None
        else None
    ),
    "board_order": float,
}


def _optional_id(field: str, value: str | None) -> str | None:
    return None if value is None else check_text(field, value, max_length=200, required=True)


def _context_refs(refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(refs) > MAX_IDS:
        raise LimitExceeded(
            f"contextRefs: {len(refs)} items is over the limit of {MAX_IDS}.",
            {"field": "contextRefs", "limit": MAX_IDS},
        )
    return [dict(ref) for ref in refs]


def check_fields(values: dict[str, Any]) -> dict[str, Any]:
    """Validate the named fields (snake_case); each refusal names its field."""
    return {name: CHECKS[name](value) for name, value in values.items()}


def check_assignment(uow: UnitOfWork, project: Project, task: Task) -> Task:
    """Resolve who does the work: a team role (its kind decides ai/human) or a project member.

    Raises:
        ValidationFailed: unknown assignee, kinds that disagree, AI work without an AI role,
            in-progress work without an assignee.
    """
    kind = task.assignee_type
    if task.assignee_id is not None:
        if task.assignee_id.startswith("rol_"):
            seat = uow.team.get(project.id, task.assignee_id)
            if seat is None or seat.archived_at is not None:
                raise ValidationFailed.field(
                    "assigneeId",
                    f"{task.assignee_id} is not an active role of {project.key}; list_team shows them.",
                )
            seat_kind = AssigneeType.AI if seat.kind is SeatKind.AI else AssigneeType.HUMAN
            if kind is not None and kind is not seat_kind:
                raise ValidationFailed.field(
                    "assigneeType",
                    f"role {seat.name} is {_kind_name(seat_kind)} role, not {_kind_name(kind)} one.",
                    ["ai", "human"],
                )
            kind = seat_kind
        elif task.assignee_id.startswith("usr_"):
            if uow.projects.member_role(project.id, task.assignee_id) is None:
                raise ValidationFailed.field(
                    "assigneeId", f"{task.assignee_id} is not a member of {project.key}."
                )
            if kind is AssigneeType.AI:
                raise ValidationFailed.field(
                    "assigneeType",
                    "a person is not an AI role; name an AI role from list_team.",
                    ["ai", "human"],
                )
            kind = AssigneeType.HUMAN
        else:
            raise ValidationFailed.field(
                "assigneeId", "name a role id (rol_…) from list_team or a person's user id (usr_…)."
            )
    elif kind is AssigneeType.AI:
        raise ValidationFailed.field(
            "assigneeId", "a task for AI names one of the project's AI roles (list_team)."
        )
    if (
        task.status is TaskStatus.IN_PROGRESS
        and task.assignee_id is None
        and task.human_owner_id is None
    ):
        raise ValidationFailed.field(
            "assigneeId",
            "a task in progress names who does the work: give it an assignee (or a human "
            "owner) first, then move it.",
        )
    if (
        task.human_owner_id is not None
        and uow.projects.member_role(project.id, task.human_owner_id) is None
    ):
        raise ValidationFailed.field(
            "humanOwnerId", f"{task.human_owner_id} is not a member of {project.key}."
        )
    return replace(task, assignee_type=kind if task.assignee_id is not None else None)


def _kind_name(kind: AssigneeType) -> str:
    return "an AI" if kind is AssigneeType.AI else "a human"


def check_status_allowed(actor: Actor, status: TaskStatus) -> None:
    if status is TaskStatus.APPROVED and actor.is_agent:
        raise PermissionDenied(
            "Only a person approves a task; an agent token cannot set approved. Hand it in for review.",
            {"field": "status", "status": "approved"},
        )


def check_related(
    uow: UnitOfWork, project: Project, task_id: str, ids: tuple[str, ...], field: str
) -> None:
    found = uow.tasks.get_many(ids)
    for other in ids:
        if other == task_id:
            raise ValidationFailed.field(field, "a task cannot point at itself.")
        if other not in found or found[other].project_id != project.id:
            raise ValidationFailed.field(field, f"{other} is not a task of {project.key}.")
