"""Shift handoffs: what one person hands to the next shift, once per project and day.

A handoff belongs to its author, a project and a date. The date is a day in the source time
zone (the shift that hands over), so "today" for a person in Berlin at 00:30 is already the
next day while it is still yesterday in New York. Its four bodies (completed, in progress,
blockers, next steps) are plain text of at most MAX_BODY characters each; it links tasks and
names recipients (people of the project). Action items are its follow-ups, each with its own
id, text, assignee, status and due date.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

from crewboard.domain.identity.records import User
from crewboard.errors import ValidationFailed

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
MAX_BODY = 4000  # characters of each of the four bodies
BODIES = ("completed", "in_progress", "blockers", "next_steps")
WIRE_BODIES = {"completed": "completed", "in_progress": "inProgress",
               "blockers": "blockers", "next_steps": "nextSteps"}  # fmt: skip
MAX_LINKED_TASKS = 50
MAX_RECIPIENTS = 50
MAX_ITEM_TEXT = 2000
MAX_ITEMS = 200  # action items of one handoff
BODY_LABELS = (("completed", "Completed"), ("in_progress", "In progress"),
               ("blockers", "Blockers"), ("next_steps", "Next steps"))  # fmt: skip


class ItemStatus(StrEnum):
    OPEN = "open"
    IN_PROGRESS = "in_progress"
    DONE = "done"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class Handoff:
    id: str
    project_id: str
    author_user_id: str
    author: dict[str, Any]
    day: date
    source_zone: str
    destination_zone: str
    completed: str
    in_progress: str
    blockers: str
    next_steps: str
    linked_task_ids: tuple[str, ...]
    recipient_user_ids: tuple[str, ...]
    created_at: datetime
    updated_at: datetime
    updated_by: dict[str, Any]


@dataclass(frozen=True)
class ActionItem:
    id: str
    handoff_id: str
    project_id: str
    day: date
    text: str
    assignee_user_id: str | None
    status: ItemStatus
    due_date: date | None
    created_by: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    updated_by: dict[str, Any]


@dataclass(frozen=True)
class Bodies:
    """The four bodies a handoff is written with."""

    completed: str = ""
    in_progress: str = ""
    blockers: str = ""
    next_steps: str = ""


@dataclass(frozen=True)
class LinkedTask:
    """A linked task as a reader who may open it sees it."""

    id: str
    key: str
    title: str


@dataclass(frozen=True)
class HandoffRead:
    """A handoff as one reader sees it: the linked tasks they may open, the people it names
    (`users`, by id), its first action items (one more than are shown, so a reader can tell
    whether more follow) and how many it has in all."""

    handoff: Handoff
    project_key: str
    users: Mapping[str, User]
    linked_tasks: tuple[LinkedTask, ...]
    first_items: tuple[ActionItem, ...]
    item_count: int


@dataclass(frozen=True)
class HandoffPage:
    """One page of a project's handoffs (metadata), with their action item counts."""

    rows: tuple[Handoff, ...]
    item_counts: Mapping[str, int]
    users: Mapping[str, User]
    total: int
    offset: int


@dataclass(frozen=True)
class ItemRead:
    """An action item with the people it names."""

    item: ActionItem
    users: Mapping[str, User]


@dataclass(frozen=True)
class ItemPage:
    """Action items oldest first: up to `limit` of them plus one, which tells whether more
    follow; `binding` is what a cursor to the next page is bound to."""

    rows: tuple[ActionItem, ...]
    users: Mapping[str, User]
    limit: int
    binding: Mapping[str, str | None]


@dataclass(frozen=True)
class Told:
    """Whom a new handoff's notification reached: counts, and why no email went out, or
    (`note`) why nobody was told at all."""

    in_app: int
    emails_queued: int
    email_not_sent: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class HandoffMade:
    """A new handoff and whom it told."""

    read: HandoffRead
    told: Told


@dataclass(frozen=True)
class DaySheet:
    """One day of a project's handoffs as the web app shows it: the two shift zones, the
    reader's role, every handoff of the day (newest first) and the people of the project."""

    day: date
    zone_a: str
    zone_b: str
    role: str
    handoffs: tuple[HandoffRead, ...]
    people: tuple[User, ...]


def local_day(now: datetime, zone: ZoneInfo) -> date:
    """The date it is at `now` in `zone`."""
    return now.astimezone(zone).date()


def parse_day(field: str, value: str) -> date:
    """A calendar date as YYYY-MM-DD.

    Raises:
        ValidationFailed: naming the field and the form.
    """
    wrong = ValidationFailed.field(
        field, f"{value[:40]!r} is not a date; send YYYY-MM-DD, e.g. 2026-12-03."
    )
    if not _DAY.fullmatch(value):
        raise wrong
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise wrong from None


def check_body(field: str, value: str) -> str:
    """A body of at most MAX_BODY characters, with no NUL.

    Raises:
        ValidationFailed: over the limit or holding NUL.
    """
    if "\x00" in value:
        raise ValidationFailed.field(field, "must not contain NUL characters.")
    if len(value) > MAX_BODY:
        raise ValidationFailed.field(
            field, f"{len(value)} characters is over the limit of {MAX_BODY}; shorten it."
        )
    return value


def unique_ids(field: str, values: list[str], limit: int) -> tuple[str, ...]:
    """The values in first-seen order without repeats, at most `limit` of them.

    Raises:
        ValidationFailed: too many.
    """
    seen = tuple(dict.fromkeys(values))
    if len(seen) > limit:
        raise ValidationFailed.field(field, f"at most {limit} entries; {len(seen)} were sent.")
    return seen
