"""Reading the board over time: lifecycle events (list_task_events) and the week (get_week)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from crewboard.domain.board.tasks import OPEN_STATUSES, LifecycleType, Task, TaskStatus
from crewboard.domain.board.week import (
    LifecycleRecord,
    Stretch,
    WeekRead,
    build_stretches,
    combined_coverage,
    day_bounds,
    load_zone,
    split_by_day,
    week_days,
)
from crewboard.domain.identity.access import parse_enum_list
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.errors import LimitExceeded, ValidationFailed
from crewboard.services.board.task_lookup import access_task
from crewboard.services.board.views import task_key
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, open_projects
from crewboard.services.paging import check_limit
from crewboard.services.views import iso
from crewboard.storage.board.tasks import TaskFilter
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_EVENTS_PAGE = 100
MAX_ID = 200
MAX_DUE = 200
MAX_UNDATED = 50
SCAN_PAGE = 500  # rows per query when get_week reads events or tasks in bulk
HISTORY_BATCH = 200  # tasks whose histories one query reads (an IN list of that many ids)
BOUNDS = ["taskId", "humanAssigneeId", "agentAssigneeId", "since+until"]
_CURSOR_VERSION = "e1"


# --- list_task_events ------------------------------------------------------------------------


@dataclass(frozen=True)
class EventPage:
    """One page of lifecycle events; the door may show fewer rows to stay in its budget."""

    events: list[dict[str, Any]]
    has_more: bool
    coverage_of_task: dict[str, str]
    fingerprint: str

    def cursor_after(self, event_id: int) -> str:
        """The cursor that continues after `event_id`, bound to these filters and this caller."""
        raw = f"{_CURSOR_VERSION}:{event_id}:{self.fingerprint}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def coverage(self, events: Sequence[dict[str, Any]]) -> str:
        """The coverage of the tasks these events are about; with none, of the task the list
        is bounded by (an imported task has no events and partial coverage)."""
        if not events:
            return combined_coverage(self.coverage_of_task.values())
        return combined_coverage(self.coverage_of_task[event["taskId"]] for event in events)

    def answer(self, shown: list[dict[str, Any]]) -> dict[str, Any]:
        """The wire answer when a door shows `shown`, a leading part of `events` that fits its
        budget: the cursor then continues after the last event shown."""
        more = self.has_more or len(shown) < len(self.events)
        return {
            "events": shown,
            "nextCursor": self.cursor_after(shown[-1]["id"]) if more else None,
            "hasMore": more,
            "coverage": self.coverage(shown),
        }


def list_task_events(
    db: Database,
    actor: Actor,
    *,
    task: str | None = None,
    human_assignee_id: str | None = None,
    agent_assignee_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    event_types: list[str] | None = None,
    limit: int = 50,
    cursor: str | None = None,
) -> EventPage:
    """Lifecycle events oldest first, bounded by a task, an assignee, or since and until.

    Raises:
        ValidationFailed: no bound, a one-sided time range, times without an offset, a bad
            event type or limit, or a cursor from other filters or another caller.
        LimitExceeded: an id over 200 characters.
        NotFound: the task or project is not open to the actor.
    """
    _check_bounds(task, human_assignee_id, agent_assignee_id, since, until)
    for field, value in (
        ("taskId", task),
        ("humanAssigneeId", human_assignee_id),
        ("agentAssigneeId", agent_assignee_id),
    ):
        _check_id(field, value)
    check_limit(limit, MAX_EVENTS_PAGE)
    types = [t.value for t in parse_enum_list(event_types or [], LifecycleType, "eventTypes")]
    fingerprint = _fingerprint(
        actor,
        task=task,
        human=human_assignee_id,
        agent=agent_assignee_id,
        since=since,
        until=until,
        project=project,
        workspace_id=workspace_id,
        types=types,
    )
    after_id = _read_cursor(cursor, fingerprint) if cursor is not None else 0

    def work(uow: UnitOfWork) -> EventPage:
        task_id: str | None = None
        if task is not None:
            found, found_project = access_task(
                uow, actor, task, project=project, workspace_id=workspace_id
            )
            task_id, projects = found.id, {found_project.id: found_project}
        else:
            projects = open_projects(uow, actor, project, workspace_id)
        if not projects:
            return EventPage([], False, {}, fingerprint)
        rows = uow.tasks.lifecycle_events(
            project_ids=list(projects),
            task_id=task_id,
            agent_assignee_id=agent_assignee_id,
            human_assignee_id=human_assignee_id,
            since=since,
            until=until,
            types=types,
            after_id=after_id,
            limit=limit + 1,
        )
        tasks = uow.tasks.get_many(row["task_id"] for row in rows[:limit])
        events = [_event_view(row, tasks[row["task_id"]], projects) for row in rows[:limit]]
        coverage = {t.id: t.coverage for t in tasks.values()}
        if task is not None:
            coverage[found.id] = found.coverage
        return EventPage(events, len(rows) > limit, coverage, fingerprint)

    return db.read(work)


def _check_bounds(
    task: str | None,
    human: str | None,
    agent: str | None,
    since: datetime | None,
    until: datetime | None,
) -> None:
    for field, moment in (("since", since), ("until", until)):
        if moment is not None and moment.tzinfo is None:
            raise ValidationFailed.field(
                field, "give the moment in ISO 8601 with an offset, e.g. 2026-03-02T00:00:00Z."
            )
    if since is not None and until is not None and until <= since:
        raise ValidationFailed.field("until", "must be later than since (until is exclusive).")
    if task is None and human is None and agent is None and (since is None or until is None):
        missing = "until" if since is not None else "since" if until is not None else "taskId"
        raise ValidationFailed(
            f"{missing}: bound the request by taskId, humanAssigneeId, agentAssigneeId, or both "
            "since and until.",
            {"field": missing, "accepted": BOUNDS},
        )


def _check_id(field: str, value: str | None) -> None:
    if value is not None and not value.strip():
        raise ValidationFailed.field(field, "must not be empty; omit it instead.")
    if value is not None and len(value) > MAX_ID:
        raise LimitExceeded(
            f"{field}: over the limit of {MAX_ID} characters.", {"field": field, "limit": MAX_ID}
        )


def _fingerprint(actor: Actor, **filters: Any) -> str:
    """A digest of the caller and the filters: a cursor is only good for the request it came from."""
    workspace = filters["workspace_id"]
    filters["workspace_id"] = "*" if workspace is ANY_WORKSPACE else workspace
    for name in ("since", "until"):
        moment = filters[name]
        filters[name] = moment.astimezone(UTC).isoformat() if moment is not None else None
    filters["types"] = sorted(filters["types"])
    text = json.dumps({"caller": actor.principal, **filters}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _read_cursor(cursor: str, fingerprint: str) -> int:
    """The event id a cursor continues after.

    Raises:
        ValidationFailed: not a cursor of this tool, or one issued for other filters or caller.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        version, event_id, issued_for = raw.split(":")
        after = int(event_id)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise _not_a_cursor() from None
    if version != _CURSOR_VERSION:
        raise _not_a_cursor()
    if issued_for != fingerprint:
        raise ValidationFailed.field(
            "cursor",
            "belongs to a request with other filters or another caller; repeat that request "
            "exactly, or start again without a cursor.",
        )
    return after


def _not_a_cursor() -> ValidationFailed:
    return ValidationFailed.field(
        "cursor", "is not a cursor from list_task_events; start again without one."
    )


def _event_view(row: dict[str, Any], task: Task, projects: dict[str, Project]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "taskId": row["task_id"],
        "taskKey": task_key(projects[row["project_id"]], task),
        "type": row["type"],
        "occurredAt": iso(row["occurred_at"].astimezone(UTC)),
        "actor": row["actor"],
        "data": row["data"],
        "status": row["status"],
    }


# --- get_week ----------------------------------------------------------------------------------


def get_week(
    db: Database,
    actor: Actor,
    *,
    week: date | None = None,
    time_zone: str = "UTC",
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    assignee_id: str | None = None,
) -> WeekRead:
    """Monday to Sunday: tasks due each day, in-progress stretches per day, undated work
    (contract/board/present_week.py words it with the minutes).

    Raises:
        ValidationFailed: an unknown time zone. LimitExceeded: a time zone over 64 characters
            or an assigneeId over 200. NotFound: the project is not open to the actor.
    """
    zone = load_zone(time_zone)
    _check_id("assigneeId", assignee_id)

    def tasks_where(
        uow: UnitOfWork, projects: dict[str, Project], limit: int, **filters: Any
    ) -> tuple[list[Task], int]:
        if not projects:
            return [], 0
        found = TaskFilter(project_ids=list(projects), assignee_id=assignee_id, **filters)
        return uow.tasks.search(found, limit=limit)

    def work(uow: UnitOfWork) -> WeekRead:
        days = week_days(week or uow.now.astimezone(zone).date())
        start, end = day_bounds(days[0], zone)[0], day_bounds(days[-1], zone)[1]
        projects = open_projects(uow, actor, project, workspace_id)
        due, due_total = tasks_where(uow, projects, MAX_DUE, due_from=days[0], due_until=days[-1])
        undated, undated_total = tasks_where(
            uow,
            projects,
            MAX_UNDATED,
            statuses=[s.value for s in OPEN_STATUSES],
            no_due_date=True,
        )
        stretches, held = _stretches(uow, list(projects), start, end) if projects else ([], {})
        pieces = [
            piece
            for stretch in stretches
            if assignee_id is None or (stretch.worker and stretch.worker.id == assignee_id)
            for piece in split_by_day(stretch, zone, days[0], days[-1])
        ]
        return WeekRead(
            days=tuple(days),
            zone=zone,
            time_zone=time_zone,
            start=start,
            end=end,
            now=uow.now,
            projects=projects,
            due=tuple(due),
            due_total=due_total,
            undated=tuple(undated),
            undated_total=undated_total,
            pieces=tuple(pieces),
            held=held,
        )

    return db.read(work)


def _stretches(
    uow: UnitOfWork, project_ids: list[str], start: datetime, end: datetime
) -> tuple[list[Stretch], dict[str, Task]]:
    """Every in-progress stretch of a task that was in progress at some time in [start, end).

    Only the tasks that can have been in progress in the window have their history read: those
    with events in it or after it that show them in progress at or after `start`, and those in
    progress now without any event since `start`.
    """
    in_window = _in_progress_since(uow, project_ids, start, end)
    quiet = [
        task
        for task in _scan_tasks(
            uow, TaskFilter(project_ids, statuses=[TaskStatus.IN_PROGRESS.value])
        )
        if task.id not in in_window[1]
    ]
    held = uow.tasks.get_many(in_window[0]) | {task.id: task for task in quiet}
    histories: dict[str, list[LifecycleRecord]] = {task_id: [] for task_id in held}
    ids = list(held)
    for at in range(0, len(ids), HISTORY_BATCH):  # a few queries for all, not one per task
        for row in _scan_events(uow, project_ids, task_ids=ids[at : at + HISTORY_BATCH]):
            histories[row["task_id"]].append(_record(row))
    stretches: list[Stretch] = []
    for task_id, history in histories.items():
        stretches.extend(
            s for s in build_stretches(task_id, history, uow.now) if s.end > start and s.start < end
        )
    return sorted(stretches, key=lambda s: (s.start, s.task_id)), held


def _in_progress_since(
    uow: UnitOfWork, project_ids: list[str], start: datetime, end: datetime
) -> tuple[set[str], set[str]]:
    """(tasks in progress at some time in [start, end), tasks with any event since `start`)."""
    first: dict[str, dict[str, Any]] = {}
    working: set[str] = set()
    for row in _scan_events(uow, project_ids, since=start):
        first.setdefault(row["task_id"], row)
        if row["occurred_at"] < end and row["status"] == TaskStatus.IN_PROGRESS:
            working.add(row["task_id"])
    for task_id, row in first.items():
        before = (
            row["data"].get("from")
            if row["type"] == LifecycleType.STATUS_CHANGED
            else row["status"]
        )
        if before == TaskStatus.IN_PROGRESS:
            working.add(task_id)
    return working, set(first)


def _scan_events(
    uow: UnitOfWork, project_ids: list[str], **filters: Any
) -> Iterator[dict[str, Any]]:
    """Status and assignment events, oldest first, read a page at a time."""
    after_id = 0
    while True:
        rows = uow.tasks.lifecycle_events(
            project_ids=project_ids,
            types=[LifecycleType.STATUS_CHANGED.value, LifecycleType.ASSIGNMENT_CHANGED.value],
            after_id=after_id,
            limit=SCAN_PAGE,
            **filters,
        )
        yield from rows
        if len(rows) < SCAN_PAGE:
            return
        after_id = rows[-1]["id"]


def _scan_tasks(uow: UnitOfWork, task_filter: TaskFilter) -> Iterator[Task]:
    offset = 0
    while True:
        tasks, total = uow.tasks.search(task_filter, limit=SCAN_PAGE, offset=offset)
        yield from tasks
        offset += len(tasks)
        if not tasks or offset >= total:
            return


def _record(row: dict[str, Any]) -> LifecycleRecord:
    return LifecycleRecord(
        id=row["id"],
        type=row["type"],
        at=row["occurred_at"],
        status=row["status"],
        data=row["data"],
        agent_assignee_id=row["agent_assignee_id"],
        human_assignee_id=row["human_assignee_id"],
    )
