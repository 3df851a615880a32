"""The task: its fields, enums, limits, and the lifecycle facts a change produces."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from crewboard.errors import LimitExceeded, ValidationFailed


class TaskStatus(StrEnum):
    BACKLOG = "backlog"
    READY_FOR_AI = "ready_for_ai"
    IN_PROGRESS = "in_progress"
    BLOCKED = "blocked"
    REVIEW = "review"
    APPROVED = "approved"
    DONE = "done"


OPEN_STATUSES = frozenset(
    {
        TaskStatus.BACKLOG,
        TaskStatus.READY_FOR_AI,
        TaskStatus.IN_PROGRESS,
        TaskStatus.BLOCKED,
        TaskStatus.REVIEW,
    }
)


class Priority(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class TaskType(StrEnum):
    WRITING = "writing"
    VISUAL = "visual"
    GAME_DESIGN = "game_design"
    DEVELOPMENT = "development"
    MARKETING = "marketing"
    REVIEW = "review"
    RESEARCH = "research"
    PRODUCTION = "production"
    WORLDBUILDING = "worldbuilding"
    GENERAL = "general"


class AssigneeType(StrEnum):
    AI = "ai"
    HUMAN = "human"


class Relation(StrEnum):
    BLOCKS = "blocks"
    BLOCKED_BY = "blocked_by"
    RELATED = "related"


class LifecycleType(StrEnum):
    ASSIGNMENT_CHANGED = "assignment_changed"
    STATUS_CHANGED = "status_changed"
    BLOCKER_CHANGED = "blocker_changed"


MAX_TITLE = 300
MAX_LONG_TEXT = 200_000
MAX_TAGS = 20
MAX_TAG = 48
MAX_IDS = 200
MAX_OUTPUT_DESTINATION = 200
MAX_CYCLE = 64
MAX_STORY_POINTS = 1000
PREVIEW_CHARS = 500
TASK_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9]{1,9})-(\d+)$")


@dataclass(frozen=True)
class Task:
    id: str
    project_id: str
    number: int
    title: str
    description: str
    brief: str
    type: TaskType
    status: TaskStatus
    priority: Priority
    assignee_id: str | None
    assignee_type: AssigneeType | None
    human_owner_id: str | None
    tags: tuple[str, ...]
    labels: tuple[str, ...]
    due_date: date | None
    start_date: date | None
    story_points: int | None
    cycle: str | None
    parent_task_id: str | None
    context_refs: tuple[dict[str, Any], ...]
    context_item_ids: tuple[str, ...]
    external_reference_ids: tuple[str, ...]
    output_destination: str | None
    board_order: float
    revision: int
    coverage: str
    created_by: dict[str, Any]
    updated_by: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    # The spec file (a `tasks.md`) and line this task is kept in sync with, when it has one.
    source_file_id: str | None = None
    source_line: int | None = None


@dataclass(frozen=True)
class Link:
    """How a task stands to another, seen from the task."""

    relation: Relation
    other_id: str


@dataclass(frozen=True)
class LifecycleFact:
    type: LifecycleType
    data: dict[str, Any] = field(default_factory=dict)


def lifecycle_facts(
    before: Task | None, after: Task, blockers_before: int, blockers_after: int
) -> list[LifecycleFact]:
    """The lifecycle events a change from `before` (None: creation) to `after` records."""
    facts: list[LifecycleFact] = []
    old_status = before.status if before else None
    if old_status != after.status:
        facts.append(
            LifecycleFact(
                LifecycleType.STATUS_CHANGED,
                {"from": old_status and str(old_status), "to": str(after.status)},
            )
        )
    old_assignee = (before.assignee_id, before.human_owner_id) if before else (None, None)
    if old_assignee != (after.assignee_id, after.human_owner_id):
        facts.append(
            LifecycleFact(
                LifecycleType.ASSIGNMENT_CHANGED,
                {
                    "fromAssigneeId": old_assignee[0],
                    "toAssigneeId": after.assignee_id,
                    "assigneeType": after.assignee_type and str(after.assignee_type),
                    "fromHumanOwnerId": old_assignee[1],
                    "toHumanOwnerId": after.human_owner_id,
                },
            )
        )
    if blockers_before != blockers_after:
        facts.append(
            LifecycleFact(
                LifecycleType.BLOCKER_CHANGED, {"from": blockers_before, "to": blockers_after}
            )
        )
    return facts


def check_tags(field_name: str, values: list[str]) -> tuple[str, ...]:
    """Tags and labels: at most 20, each 1-48 characters; kept as given, compared lower-cased.

    Raises:
        LimitExceeded, ValidationFailed.
    """
    if len(values) > MAX_TAGS:
        raise LimitExceeded(
            f"{field_name}: {len(values)} is over the limit of {MAX_TAGS}.",
            {"field": field_name, "limit": MAX_TAGS},
        )
    cleaned: dict[str, str] = {}
    for value in values:
        tag = value.strip()
        if not tag:
            raise ValidationFailed.field(field_name, "an empty tag is not allowed.")
        if len(tag) > MAX_TAG:
            raise LimitExceeded(
                f"{field_name}: {tag[:20]!r}… is over the limit of {MAX_TAG} characters.",
                {"field": field_name, "limit": MAX_TAG},
            )
        cleaned.setdefault(tag.lower(), tag)
    return tuple(cleaned.values())


def parse_task_key(value: str) -> tuple[str, int] | None:
    """`CRW-12` → ("CRW", 12); None when it is not a task key."""
    match = TASK_KEY.match(value.strip())
    return (match.group(1).upper(), int(match.group(2))) if match else None


def search_words(query: str) -> list[str]:
    """The words of a `q` search: letters and digits, lower-cased, in order, no repeats."""
    return list(dict.fromkeys(word.lower() for word in re.findall(r"\w+", query)))
