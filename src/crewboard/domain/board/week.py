"""The week view's pure rules: in-progress stretches from lifecycle events, cut at local midnight.

A stretch is the time a task sat in `in_progress` under one assignee. It is built only from the
task's lifecycle events (never from `updatedAt` or the current status): it opens when an event
leaves the task in progress, ends when one takes it out (or hands it to someone else, which opens
the next stretch), and a stretch still open ends at "now".

Days begin and end at midnight in the reader's time zone, so a day that changes clocks has 23 or
25 hours. Minutes are whole minutes counted from the stretch's start, which makes the minutes of
a stretch's day pieces add up exactly to the minutes of the whole stretch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from itertools import groupby
from typing import Any
from zoneinfo import ZoneInfo

from crewboard.domain.board.tasks import AssigneeType, LifecycleType, Task, TaskStatus
from crewboard.domain.projects import Project
from crewboard.domain.validation import zone_of

DAYS_IN_WEEK = 7


@dataclass(frozen=True)
class Worker:
    """Who a stretch counts for: a role or a person, AI or human."""

    id: str
    kind: AssigneeType


@dataclass(frozen=True)
class LifecycleRecord:
    """One stored lifecycle event: the task's status and assignees are those after it."""

    id: int
    type: str
    at: datetime
    status: str
    data: Mapping[str, Any]
    agent_assignee_id: str | None = None
    human_assignee_id: str | None = None


@dataclass(frozen=True)
class Stretch:
    task_id: str
    worker: Worker | None
    start: datetime
    end: datetime
    ongoing: bool  # still in progress: `end` is "now"

    @property
    def minutes(self) -> int:
        return _minutes_from(self.start, self.end)


@dataclass(frozen=True)
class Piece:
    """The part of a stretch that falls on one local day."""

    stretch: Stretch
    day: date
    start: datetime
    end: datetime
    minutes: int


@dataclass(frozen=True)
class WeekRead:
    """get_week's read: the week's local days in `zone` and their bounds, the tasks due in it
    and the open ones with no due date (each with its total), and the in-progress pieces per
    day with the tasks (`held`) they belong to."""

    days: tuple[date, ...]
    zone: ZoneInfo
    time_zone: str
    start: datetime
    end: datetime
    now: datetime
    projects: Mapping[str, Project]
    due: tuple[Task, ...]
    due_total: int
    undated: tuple[Task, ...]
    undated_total: int
    pieces: tuple[Piece, ...]
    held: Mapping[str, Task]


def load_zone(name: str) -> ZoneInfo:
    """An IANA time zone by name (e.g. Europe/Berlin), for the field `timeZone`.

    Raises:
        LimitExceeded, ValidationFailed: see `domain.validation.zone_of`.
    """
    return zone_of("timeZone", name)


def week_days(day: date) -> list[date]:
    """Monday to Sunday of the week that holds `day`."""
    monday = day - timedelta(days=day.weekday())
    return [monday + timedelta(days=offset) for offset in range(DAYS_IN_WEEK)]


def day_bounds(day: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The UTC instants where local `day` begins and the next day begins."""
    start = datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)
    end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=zone).astimezone(UTC)
    return start, end


def day_hours(day: date, zone: ZoneInfo) -> float:
    """How long local `day` lasts: 24, or 23/25 on the days the clocks change."""
    start, end = day_bounds(day, zone)
    return (end - start).total_seconds() / 3600


def build_stretches(
    task_id: str, events: Iterable[LifecycleRecord], now: datetime
) -> list[Stretch]:
    """The in-progress stretches of one task, oldest first, from its lifecycle events.

    Events that share an instant (one change records several) are applied together before the
    task's state is read, so a change that both starts the work and assigns it opens a single
    stretch for the new assignee.
    """
    stretches: list[Stretch] = []
    opened: tuple[datetime, Worker | None] | None = None
    for at, in_progress, worker in _states(events):
        if opened is not None and (not in_progress or worker != opened[1]):
            stretches.extend(_stretch(task_id, opened, at, ongoing=False))
            opened = None
        if in_progress and opened is None:
            opened = (at, worker)
    if opened is not None:
        stretches.extend(_stretch(task_id, opened, now, ongoing=True))
    return stretches


def _stretch(
    task_id: str, opened: tuple[datetime, Worker | None], end: datetime, *, ongoing: bool
) -> list[Stretch]:
    start, worker = opened
    return [Stretch(task_id, worker, start, end, ongoing)] if end > start else []


def _states(events: Iterable[LifecycleRecord]) -> Iterator[tuple[datetime, bool, Worker | None]]:
    """(instant, in progress?, worker) after each instant that has events, in time order."""
    assignment: tuple[str | None, str | None, str | None] | None = None
    ordered = sorted(events, key=lambda event: (event.at, event.id))
    for at, group in groupby(ordered, key=lambda event: event.at):
        batch = list(group)
        for event in batch:
            if event.type == LifecycleType.ASSIGNMENT_CHANGED:
                data = event.data
                assignment = (
                    data.get("toAssigneeId"),
                    data.get("assigneeType"),
                    data.get("toHumanOwnerId"),
                )
        last = batch[-1]
        worker = _worker(*assignment) if assignment is not None else _worker_from_columns(last)
        yield at, last.status == TaskStatus.IN_PROGRESS, worker


def _worker(assignee_id: str | None, kind: str | None, owner_id: str | None) -> Worker | None:
    """The assignee does the work; a task with only a human owner is that person's."""
    if assignee_id is not None:
        is_ai = kind == AssigneeType.AI
        return Worker(assignee_id, AssigneeType.AI if is_ai else AssigneeType.HUMAN)
    return Worker(owner_id, AssigneeType.HUMAN) if owner_id is not None else None


def _worker_from_columns(event: LifecycleRecord) -> Worker | None:
    """Before any assignment event (history that starts late), the event row's own assignees."""
    if event.agent_assignee_id is not None:
        return Worker(event.agent_assignee_id, AssigneeType.AI)
    if event.human_assignee_id is not None:
        return Worker(event.human_assignee_id, AssigneeType.HUMAN)
    return None


def split_by_day(
    stretch: Stretch, zone: ZoneInfo, first: date | None = None, last: date | None = None
) -> list[Piece]:
    """Cut a stretch at each local midnight; keep the pieces on days `first`..`last` (inclusive)."""
    day = stretch.start.astimezone(zone).date()
    final = (stretch.end - timedelta(microseconds=1)).astimezone(zone).date()
    if first is not None:
        day = max(day, first)
    if last is not None:
        final = min(final, last)
    pieces: list[Piece] = []
    while day <= final:
        day_start, day_end = day_bounds(day, zone)
        start, end = max(stretch.start, day_start), min(stretch.end, day_end)
        if end > start:
            minutes = _minutes_from(stretch.start, end) - _minutes_from(stretch.start, start)
            pieces.append(Piece(stretch, day, start, end, minutes))
        day += timedelta(days=1)
    return pieces


def _minutes_from(origin: datetime, moment: datetime) -> int:
    return int((moment - origin).total_seconds() // 60)


def minutes_by_kind(pieces: Iterable[Piece]) -> dict[str, int]:
    """Minutes for people and for AI (a stretch nobody held counts for neither)."""
    totals = {"people": 0, "ai": 0}
    for piece in pieces:
        worker = piece.stretch.worker
        if worker is not None:
            totals["ai" if worker.kind is AssigneeType.AI else "people"] += piece.minutes
    return totals


def minutes_by_worker(pieces: Sequence[Piece]) -> list[tuple[Worker, int]]:
    """Minutes per worker, most first (ties by id)."""
    totals: dict[Worker, int] = {}
    for piece in pieces:
        worker = piece.stretch.worker
        if worker is not None:
            totals[worker] = totals.get(worker, 0) + piece.minutes
    return sorted(totals.items(), key=lambda item: (-item[1], item[0].id))


def combined_coverage(coverages: Iterable[str]) -> str:
    """The history coverage of several tasks: complete when every one is (or there are none),
    unavailable when none has any, partial otherwise."""
    seen = set(coverages)
    if seen <= {"complete"}:
        return "complete"
    return "unavailable" if seen == {"unavailable"} else "partial"
