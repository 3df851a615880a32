"""list_task_events and get_week through the services, on SQLite and PostgreSQL.

Time moves with the ManualClock and tasks change through the real update_task use case, so
every stretch below comes from lifecycle events written the way production writes them.
"""

from __future__ import annotations

import base64
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import text

from crewboard.contract.projects import present
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import LimitExceeded, NotFound, ValidationFailed
from crewboard.services.board import task_updates, tasks, week
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import task_reads
from tests.support.factories import grant, make_project, make_user

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
KEYS = iter(range(1_000_000))
WINDOW = {
    "since": datetime(2026, 1, 1, tzinfo=UTC),
    "until": datetime(2027, 1, 1, tzinfo=UTC),
}


@pytest.fixture
def owner_user(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def owner(owner_user: User) -> Actor:
    return person_actor(owner_user)


@pytest.fixture
def coder(db: Database, owner: Actor) -> str:
    return str(present.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")["id"])


@pytest.fixture
def colleague(db: Database, owner_user: User) -> Actor:
    """A second person with write access to CRW."""
    user = make_user(db, "ben@example.com")
    grant(db, owner_user, "CRW", user, Role.WRITE)
    return person_actor(user)


def new(db: Database, actor: Actor, title: str = "A task", **fields: Any) -> dict[str, Any]:
    result = tasks.create_task(
        db,
        actor,
        project=fields.pop("project", "CRW"),
        workspace_id=None,
        idempotency_key=f"k{next(KEYS)}",
        title=title,
        **fields,
    )
    return dict(result.body["task"])


def change(db: Database, actor: Actor, task: dict[str, Any], **patch: Any) -> dict[str, Any]:
    """Apply `patch` to the task at its latest revision (`task` is updated in place)."""
    result = task_updates.update_task(
        db,
        actor,
        project=task["projectId"],
        workspace_id=None,
        idempotency_key=f"k{next(KEYS)}",
        task_id=task["id"],
        expected_revision=task["revision"],
        patch=patch,
    )
    task.update(result.body["task"])
    return task


def move_to(clock: ManualClock, when: datetime) -> None:
    clock.advance(when.astimezone(UTC) - clock.now())


def local(zone: ZoneInfo, day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)


def day_of(body: dict[str, Any], day: date) -> dict[str, Any]:
    [found] = [d for d in body["days"] if d["date"] == day.isoformat()]
    return found


def events_of(page: week.EventPage) -> list[tuple[str, str, str]]:
    return [(e["taskKey"], e["type"], e["status"]) for e in page.events]


# --- list_task_events: bounds ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "taskId"),
        ({"project": "CRW"}, "taskId"),
        ({"since": WINDOW["since"]}, "until"),
        ({"until": WINDOW["until"]}, "since"),
        ({"event_types": ["status_changed"], "limit": 10}, "taskId"),
    ],
)
def test_an_unbounded_request_is_refused_naming_the_accepted_bounds(
    db: Database, owner: Actor, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationFailed) as caught:
        week.list_task_events(db, owner, **arguments)
    assert caught.value.details["field"] == field
    assert caught.value.details["accepted"] == [
        "taskId",
        "humanAssigneeId",
        "agentAssigneeId",
        "since+until",
    ]


def test_each_bound_alone_is_enough(db: Database, owner: Actor, coder: str) -> None:
    task = new(db, owner, assignee_id=coder, human_owner_id=owner.user_id)
    for bound in (
        {"task": task["key"]},
        {"human_assignee_id": owner.user_id},
        {"agent_assignee_id": coder},
        WINDOW,
    ):
        page = week.list_task_events(db, owner, **bound)
        assert [e["taskId"] for e in page.events] == [task["id"], task["id"]], bound


def test_times_need_an_offset_and_until_must_follow_since(db: Database, owner: Actor) -> None:
    naive = datetime(2026, 3, 1)  # noqa: DTZ001 - the refusal under test
    with pytest.raises(ValidationFailed) as caught:
        week.list_task_events(db, owner, since=naive, until=WINDOW["until"])
    assert caught.value.details["field"] == "since"
    with pytest.raises(ValidationFailed) as caught:
        week.list_task_events(db, owner, since=WINDOW["until"], until=WINDOW["since"])
    assert caught.value.details["field"] == "until"
    with pytest.raises(ValidationFailed) as caught:
        week.list_task_events(db, owner, since=WINDOW["since"], until=WINDOW["since"])
    assert caught.value.details["field"] == "until"


def test_bad_limits_types_and_ids_are_refused_naming_the_field(db: Database, owner: Actor) -> None:
    for limit in (0, 101):
        with pytest.raises(ValidationFailed) as caught:
            week.list_task_events(db, owner, task="CRW-1", limit=limit)
        assert caught.value.details["field"] == "limit"
    with pytest.raises(ValidationFailed) as caught:
        week.list_task_events(db, owner, task="CRW-1", event_types=["comment_added"])
    assert caught.value.details["field"] == "eventTypes"
    assert "status_changed" in caught.value.details["accepted"]
    with pytest.raises(LimitExceeded) as limit:
        week.list_task_events(db, owner, agent_assignee_id="r" * 201)
    assert limit.value.details["field"] == "agentAssigneeId"
    with pytest.raises(ValidationFailed) as empty:
        week.list_task_events(db, owner, human_assignee_id=" ")
    assert empty.value.details["field"] == "humanAssigneeId"


# --- list_task_events: what it lists ----------------------------------------------------------


def test_a_tasks_events_come_oldest_first_with_key_status_actor_and_utc_time(
    db: Database, owner: Actor, coder: str, clock: ManualClock
) -> None:
    task = new(db, owner, assignee_id=coder)
    clock.advance(timedelta(minutes=5))
    change(db, owner, task, status="in_progress")
    clock.advance(timedelta(minutes=5))
    other = new(db, owner, title="Blocker")
    change(db, owner, task, status="review", blocked_by_task_ids=[other["id"]])
    page = week.list_task_events(db, owner, task="CRW-1")
    assert events_of(page) == [
        ("CRW-1", "status_changed", "backlog"),
        ("CRW-1", "assignment_changed", "backlog"),
        ("CRW-1", "status_changed", "in_progress"),
        ("CRW-1", "status_changed", "review"),
        ("CRW-1", "blocker_changed", "review"),
    ]
    first, _, started, _, blocked = page.events
    assert first["occurredAt"] == "2026-03-02T09:00:00+00:00"
    assert started["occurredAt"] == "2026-03-02T09:05:00+00:00"
    assert started["data"] == {"from": "backlog", "to": "in_progress"}
    assert blocked["data"] == {"from": 0, "to": 1}
    assert started["actor"]["userId"] == owner.user_id
    assert [e["id"] for e in page.events] == sorted(e["id"] for e in page.events)
    assert not page.has_more
    assert page.coverage(page.events) == "complete"


def test_filters_narrow_by_assignee_time_and_type(
    db: Database, owner: Actor, colleague: Actor, coder: str, clock: ManualClock
) -> None:
    mine = new(db, owner, assignee_id=coder)
    clock.advance(timedelta(hours=1))
    theirs = new(db, owner, title="Theirs", human_owner_id=colleague.user_id)
    clock.advance(timedelta(hours=1))
    change(db, owner, mine, status="in_progress")
    by_agent = week.list_task_events(db, owner, agent_assignee_id=coder)
    assert {e["taskId"] for e in by_agent.events} == {mine["id"]}
    by_person = week.list_task_events(db, owner, human_assignee_id=colleague.user_id)
    assert {e["taskId"] for e in by_person.events} == {theirs["id"]}
    hour = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    window = week.list_task_events(db, owner, since=hour, until=hour + timedelta(hours=1))
    assert {e["taskId"] for e in window.events} == {theirs["id"]}
    later = week.list_task_events(
        db, owner, since=hour + timedelta(hours=1), until=hour + timedelta(hours=2)
    )
    assert events_of(later) == [("CRW-1", "status_changed", "in_progress")]
    statuses = week.list_task_events(db, owner, **WINDOW, event_types=["status_changed"])
    assert {e["type"] for e in statuses.events} == {"status_changed"}
    assert len(statuses.events) == 3


def test_cursor_pages_return_every_event_once_in_order(
    db: Database, owner: Actor, coder: str, clock: ManualClock
) -> None:
    for n in range(4):
        task = new(db, owner, f"Task {n}", assignee_id=coder)
        clock.advance(timedelta(minutes=1))
        change(db, owner, task, status="in_progress")
        clock.advance(timedelta(minutes=1))
    everything = week.list_task_events(db, owner, **WINDOW, limit=100).events
    assert len(everything) == 12
    seen: list[dict[str, Any]] = []
    cursor = None
    for _ in range(10):
        page = week.list_task_events(db, owner, **WINDOW, limit=5, cursor=cursor)
        seen += page.events
        if not page.has_more:
            break
        assert len(page.events) == 5
        cursor = page.cursor_after(page.events[-1]["id"])
    assert seen == everything
    assert len(seen) == 12


def test_a_cursor_is_refused_with_other_filters_or_for_another_caller(
    db: Database, owner: Actor, colleague: Actor, coder: str
) -> None:
    for n in range(3):
        new(db, owner, f"Task {n}", assignee_id=coder)
    page = week.list_task_events(db, owner, **WINDOW, limit=2)
    cursor = page.cursor_after(page.events[-1]["id"])
    # The same request with the cursor (any page size) goes on.
    assert week.list_task_events(db, owner, **WINDOW, limit=3, cursor=cursor).events
    refusals = [
        (owner, {**WINDOW, "event_types": ["status_changed"]}),
        (owner, {**WINDOW, "project": "CRW"}),
        (owner, {"since": WINDOW["since"], "until": WINDOW["until"] + timedelta(days=1)}),
        (owner, {"agent_assignee_id": coder}),
        (colleague, WINDOW),
    ]
    for actor, filters in refusals:
        with pytest.raises(ValidationFailed) as caught:
            week.list_task_events(db, actor, **filters, cursor=cursor)
        assert caught.value.details["field"] == "cursor", filters
    version, event_id, issued_for = _decode(cursor).split(":")
    older = _encode(f"e0:{event_id}:{issued_for}")  # a format this server no longer reads
    for garbage in ("nonsense", "", cursor[:-3], older, _encode(f"{version}:x:{issued_for}")):
        with pytest.raises(ValidationFailed) as caught:
            week.list_task_events(db, owner, **WINDOW, cursor=garbage)
        assert caught.value.details["field"] == "cursor"


def _decode(cursor: str) -> str:
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()


def _encode(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def test_coverage_is_complete_only_when_every_listed_task_is(
    db: Database, owner: Actor, coder: str
) -> None:
    tracked = new(db, owner, assignee_id=coder)
    imported = new(db, owner, title="Imported", assignee_id=coder)
    with db.engine.begin() as conn:  # as an import of older history would leave it
        conn.execute(
            text("UPDATE tasks SET coverage = 'partial' WHERE id = :id"), {"id": imported["id"]}
        )
    assert week.list_task_events(db, owner, task=tracked["id"]).coverage([]) == "complete"
    page = week.list_task_events(db, owner, task=tracked["id"])
    assert page.coverage(page.events) == "complete"
    both = week.list_task_events(db, owner, **WINDOW)
    assert both.coverage(both.events) == "partial"
    alone = week.list_task_events(db, owner, task=imported["id"])
    assert alone.coverage(alone.events) == "partial"


def test_projects_without_a_role_are_not_found_or_left_out(db: Database, owner: Actor) -> None:
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "OTH")
    theirs = new(db, person_actor(stranger), "Secret", project="OTH")
    new(db, owner, "Ours")
    with pytest.raises(NotFound):
        week.list_task_events(db, owner, task=theirs["id"])
    with pytest.raises(NotFound):
        week.list_task_events(db, owner, task="OTH-1")
    with pytest.raises(NotFound):
        week.list_task_events(db, owner, **WINDOW, project="OTH")
    listed = week.list_task_events(db, owner, **WINDOW)
    assert {e["taskKey"] for e in listed.events} == {"CRW-1"}
    with pytest.raises(NotFound):
        week.list_task_events(db, owner, task="CRW-1", project="OTH")


# --- get_week: stretches across DST ---------------------------------------------------------------

# (zone, the Sunday the clocks change, hours that Sunday has)
DST_NIGHTS = [
    pytest.param((BERLIN, date(2026, 3, 29), 23), id="berlin-spring"),
    pytest.param((BERLIN, date(2026, 10, 25), 25), id="berlin-autumn"),
    pytest.param((NEW_YORK, date(2026, 3, 8), 23), id="new-york-spring"),
    pytest.param((NEW_YORK, date(2026, 11, 1), 25), id="new-york-autumn"),
]


@pytest.mark.parametrize("night", DST_NIGHTS)
def test_work_over_the_night_the_clocks_change_counts_real_minutes(
    db: Database, owner: Actor, coder: str, clock: ManualClock, night: tuple[ZoneInfo, date, int]
) -> None:
    zone, sunday, hours = night
    saturday = sunday - timedelta(days=1)
    move_to(clock, local(zone, saturday, 22))
    task = new(db, owner, status="in_progress", assignee_id=coder)
    move_to(clock, local(zone, sunday, 4))
    change(db, owner, task, status="review")
    body = task_reads.get_week(db, owner, week=saturday, time_zone=str(zone))
    assert body["week"]["from"] == (sunday - timedelta(days=6)).isoformat()
    assert body["week"]["to"] == sunday.isoformat()
    assert day_of(body, sunday)["hours"] == hours
    sat, sun = day_of(body, saturday), day_of(body, sunday)
    night_minutes = (4 + hours - 24) * 60  # midnight to 04:00 on the clock: 3 h or 5 h
    assert [p["minutes"] for p in sat["inProgress"]] == [120]
    assert [p["minutes"] for p in sun["inProgress"]] == [night_minutes]
    assert sun["inProgress"][0]["from"] == local(zone, sunday, 0).isoformat()
    assert sun["inProgress"][0]["to"] == local(zone, sunday, 4).isoformat()
    assert sun["inProgress"][0]["stretch"] == {
        "startedAt": local(zone, saturday, 22).isoformat(),
        "endedAt": local(zone, sunday, 4).isoformat(),
        "ongoing": False,
        "minutes": 120 + night_minutes,
    }
    assert body["minutes"] == {"people": 0, "ai": 120 + night_minutes}
    assert body["assignees"] == [
        {"assigneeId": coder, "assigneeType": "ai", "minutes": 120 + night_minutes}
    ]


def test_the_berlin_spring_day_counts_23_hours_and_utc_days_differ(
    db: Database, owner: Actor, clock: ManualClock
) -> None:
    move_to(clock, local(BERLIN, date(2026, 3, 28), 20))
    task = new(db, owner, status="in_progress", assignee_id=owner.user_id)
    move_to(clock, local(BERLIN, date(2026, 3, 30), 6))
    change(db, owner, task, status="done")
    berlin = task_reads.get_week(db, owner, week=date(2026, 3, 25), time_zone="Europe/Berlin")
    assert [d["minutes"]["people"] for d in berlin["days"]] == [0, 0, 0, 0, 0, 240, 23 * 60]
    assert berlin["minutes"] == {"people": 240 + 23 * 60, "ai": 0}
    assert berlin["week"]["startsAt"] == "2026-03-23T00:00:00+01:00"
    assert berlin["week"]["endsAt"] == "2026-03-30T00:00:00+02:00"
    following = task_reads.get_week(db, owner, week=date(2026, 3, 30), time_zone="Europe/Berlin")
    assert following["days"][0]["minutes"] == {"people": 360, "ai": 0}
    utc = task_reads.get_week(db, owner, week=date(2026, 3, 25))
    assert [d["minutes"]["people"] for d in utc["days"]] == [0, 0, 0, 0, 0, 300, 1440]
    assert utc["week"]["timeZone"] == "UTC"


# --- get_week: stretches from real changes ----------------------------------------------------------


def test_a_new_assignee_splits_the_stretch_between_ai_and_people(
    db: Database, owner: Actor, colleague: Actor, coder: str, clock: ManualClock
) -> None:
    task = new(db, owner, status="in_progress", assignee_id=coder)  # Mon 2026-03-02 09:00 UTC
    clock.advance(timedelta(hours=3))
    change(db, owner, task, assignee_id=colleague.user_id, assignee_type="human")
    clock.advance(timedelta(hours=2))
    change(db, owner, task, status="review")
    body = task_reads.get_week(db, owner, week=date(2026, 3, 4))
    monday = body["days"][0]
    assert [(p["assigneeId"], p["assigneeType"], p["minutes"]) for p in monday["inProgress"]] == [
        (coder, "ai", 180),
        (colleague.user_id, "human", 120),
    ]
    assert monday["minutes"] == body["minutes"] == {"people": 120, "ai": 180}
    assert [a["assigneeId"] for a in body["assignees"]] == [coder, colleague.user_id]


def test_a_task_still_in_progress_runs_until_now_and_the_week_defaults_to_this_one(
    db: Database, owner: Actor, coder: str, clock: ManualClock
) -> None:
    new(db, owner, status="in_progress", assignee_id=coder)  # Mon 2026-03-02 09:00 UTC
    clock.advance(timedelta(hours=26))
    body = task_reads.get_week(db, owner)
    assert body["week"]["from"] == "2026-03-02"
    assert body["now"] == "2026-03-03T11:00:00+00:00"
    assert [d["minutes"]["ai"] for d in body["days"]] == [900, 660, 0, 0, 0, 0, 0]
    tuesday = body["days"][1]["inProgress"][0]
    assert tuesday["to"] == "2026-03-03T11:00:00+00:00"
    assert tuesday["stretch"] == {
        "startedAt": "2026-03-02T09:00:00+00:00",
        "endedAt": None,
        "ongoing": True,
        "minutes": 1560,
    }


def test_work_begun_before_the_week_fills_the_days_it_covers(
    db: Database, owner: Actor, coder: str, clock: ManualClock
) -> None:
    quiet = new(db, owner, "Long job", status="in_progress", assignee_id=coder)
    finished = new(db, owner, "Finished later", status="in_progress", assignee_id=coder)
    move_to(clock, datetime(2026, 3, 12, 12, 0, tzinfo=UTC))  # Thursday of the next week
    body = task_reads.get_week(db, owner, week=date(2026, 3, 9))
    per_day = [[p["taskKey"] for p in d["inProgress"]] for d in body["days"]]
    assert per_day == [["CRW-1", "CRW-2"]] * 4 + [[]] * 3
    assert [d["minutes"]["ai"] for d in body["days"]] == [2880, 2880, 2880, 1440, 0, 0, 0]
    move_to(clock, datetime(2026, 3, 20, 9, 0, tzinfo=UTC))
    change(db, owner, finished, status="done")
    past = task_reads.get_week(db, owner, week=date(2026, 3, 9))
    assert [d["minutes"]["ai"] for d in past["days"]] == [2880] * 7
    ended = next(p for p in past["days"][6]["inProgress"] if p["taskKey"] == "CRW-2")
    assert ended["stretch"]["endedAt"] == "2026-03-20T09:00:00+00:00"
    assert not ended["stretch"]["ongoing"]
    assert quiet["status"] == "in_progress"  # never changed: its stretch comes from old events


def test_time_in_other_statuses_counts_nothing(
    db: Database, owner: Actor, coder: str, clock: ManualClock
) -> None:
    task = new(db, owner, assignee_id=coder)
    clock.advance(timedelta(hours=1))
    change(db, owner, task, status="in_progress")
    clock.advance(timedelta(hours=1))
    change(db, owner, task, status="blocked")
    clock.advance(timedelta(hours=5))
    change(db, owner, task, status="in_progress")
    clock.advance(timedelta(minutes=30))
    change(db, owner, task, status="review")
    clock.advance(timedelta(days=1))
    body = task_reads.get_week(db, owner)
    assert [p["minutes"] for p in body["days"][0]["inProgress"]] == [60, 30]
    assert body["minutes"] == {"people": 0, "ai": 90}
    assert body["coverage"] == "complete"


# --- get_week: the plan --------------------------------------------------------------------------


def test_due_tasks_fall_on_their_day_and_open_undated_tasks_are_listed(
    db: Database, owner: Actor
) -> None:
    new(db, owner, "Monday", due_date="2026-03-09")
    new(db, owner, "Wednesday A", due_date="2026-03-11")
    new(db, owner, "Wednesday B", due_date="2026-03-11", status="done")
    new(db, owner, "Next week", due_date="2026-03-16")
    new(db, owner, "Last week", due_date="2026-03-08")
    new(db, owner, "Someday")
    new(db, owner, "In review", status="review")
    new(db, owner, "Finished", status="done")
    body = task_reads.get_week(db, owner, week=date(2026, 3, 13), time_zone="America/New_York")
    due = {d["date"]: [t["title"] for t in d["due"]] for d in body["days"]}
    assert due == {
        "2026-03-09": ["Monday"],
        "2026-03-10": [],
        "2026-03-11": ["Wednesday A", "Wednesday B"],
        "2026-03-12": [],
        "2026-03-13": [],
        "2026-03-14": [],
        "2026-03-15": [],
    }
    assert body["dueTotal"] == 3
    assert [t["title"] for t in body["undated"]] == ["Someday", "In review"]
    assert body["undatedTotal"] == 2
    row = body["days"][0]["due"][0]
    assert row["key"] == "CRW-1"
    assert row["revision"] == 1
    assert row["workspaceId"] is None
    assert row["dueDate"] == "2026-03-09"


def test_the_assignee_filter_keeps_one_assignees_plan_and_work(
    db: Database, owner: Actor, colleague: Actor, coder: str, clock: ManualClock
) -> None:
    new(db, owner, "AI job", status="in_progress", assignee_id=coder, due_date="2026-03-03")
    new(db, owner, "Ben's job", status="in_progress", assignee_id=colleague.user_id)
    new(db, owner, "AI later", assignee_id=coder)
    new(db, owner, "Nobody's")
    clock.advance(timedelta(hours=2))
    everyone = task_reads.get_week(db, owner)
    assert everyone["minutes"] == {"people": 120, "ai": 120}
    assert len(everyone["undated"]) == 3
    body = task_reads.get_week(db, owner, assignee_id=coder)
    assert body["minutes"] == {"people": 0, "ai": 120}
    assert [p["title"] for p in body["days"][0]["inProgress"]] == ["AI job"]
    assert [t["title"] for t in body["days"][1]["due"]] == ["AI job"]
    assert [t["title"] for t in body["undated"]] == ["AI later"]
    theirs = task_reads.get_week(db, owner, assignee_id=colleague.user_id)
    assert theirs["minutes"] == {"people": 120, "ai": 0}
    assert [t["title"] for t in theirs["undated"]] == ["Ben's job"]
    assert all(not d["due"] for d in theirs["days"])


def test_the_default_week_is_this_week_in_the_time_zone(
    db: Database, owner: Actor, clock: ManualClock
) -> None:
    move_to(clock, datetime(2026, 3, 8, 23, 30, tzinfo=UTC))  # Monday 00:30 in Berlin
    assert task_reads.get_week(db, owner)["week"]["from"] == "2026-03-02"
    berlin = task_reads.get_week(db, owner, time_zone="Europe/Berlin")
    assert berlin["week"] == {
        "from": "2026-03-09",
        "to": "2026-03-15",
        "timeZone": "Europe/Berlin",
        "startsAt": "2026-03-09T00:00:00+01:00",
        "endsAt": "2026-03-16T00:00:00+01:00",
    }
    assert berlin["now"] == "2026-03-09T00:30:00+01:00"


@pytest.mark.parametrize(
    ("zone", "error"),
    [
        ("Mars/Olympus_Mons", ValidationFailed),
        ("Europe", ValidationFailed),
        ("../../etc/passwd", ValidationFailed),
        ("x" * 65, LimitExceeded),
    ],
)
def test_an_unknown_or_overlong_time_zone_is_refused(
    db: Database, owner: Actor, zone: str, error: type[Exception]
) -> None:
    with pytest.raises(error) as caught:
        task_reads.get_week(db, owner, time_zone=zone)
    assert caught.value.details["field"] == "timeZone"  # type: ignore[attr-defined]


def test_the_week_shows_only_projects_the_caller_can_open(db: Database, owner: Actor) -> None:
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "OTH")
    new(
        db,
        person_actor(stranger),
        "Secret",
        project="OTH",
        status="in_progress",
        assignee_id=stranger.id,
        due_date="2026-03-03",
    )
    new(db, owner, "Ours", due_date="2026-03-03")
    with pytest.raises(NotFound):
        task_reads.get_week(db, owner, project="OTH")
    body = task_reads.get_week(db, owner)
    assert [t["title"] for t in body["days"][1]["due"]] == ["Ours"]
    assert body["minutes"] == {"people": 0, "ai": 0}
    assert body["undated"] == []
    only = task_reads.get_week(db, owner, project="CRW", workspace_id=None)
    assert [t["title"] for t in only["days"][1]["due"]] == ["Ours"]


def test_an_overlong_or_empty_assignee_is_refused(db: Database, owner: Actor) -> None:
    with pytest.raises(LimitExceeded) as caught:
        task_reads.get_week(db, owner, assignee_id="r" * 201)
    assert caught.value.details["field"] == "assigneeId"
    with pytest.raises(ValidationFailed) as empty:
        task_reads.get_week(db, owner, assignee_id="")
    assert empty.value.details["field"] == "assigneeId"
