"""The week's pure rules: stretches from lifecycle events, cut at local midnight, across DST."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from crewboard.domain.board.tasks import AssigneeType
from crewboard.domain.board.week import (
    LifecycleRecord,
    Stretch,
    Worker,
    build_stretches,
    combined_coverage,
    day_bounds,
    day_hours,
    load_zone,
    minutes_by_kind,
    minutes_by_worker,
    split_by_day,
    week_days,
)
from crewboard.errors import LimitExceeded, ValidationFailed

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
CODER = Worker("rol_coder", AssigneeType.AI)
ANNA = Worker("usr_anna", AssigneeType.HUMAN)

# The four nights of 2026 when these clocks change; each is the night before a Sunday.
DST_DAYS = [
    pytest.param(BERLIN, date(2026, 3, 29), 23, id="berlin-spring"),
    pytest.param(BERLIN, date(2026, 10, 25), 25, id="berlin-autumn"),
    pytest.param(NEW_YORK, date(2026, 3, 8), 23, id="new-york-spring"),
    pytest.param(NEW_YORK, date(2026, 11, 1), 25, id="new-york-autumn"),
]


def local(zone: ZoneInfo, day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone).astimezone(UTC)


def stretch(start: datetime, end: datetime, worker: Worker | None = CODER) -> Stretch:
    return Stretch("tsk_1", worker, start, end, ongoing=False)


_ids = iter(range(1, 1_000_000))


def status(at: datetime, to: str, before: str | None = None, **columns: Any) -> LifecycleRecord:
    return LifecycleRecord(
        next(_ids), "status_changed", at, to, {"from": before, "to": to}, **columns
    )


def assign(
    at: datetime,
    state: str,
    to: str | None,
    kind: str | None = None,
    owner: str | None = None,
) -> LifecycleRecord:
    data = {"toAssigneeId": to, "assigneeType": kind, "toHumanOwnerId": owner}
    return LifecycleRecord(next(_ids), "assignment_changed", at, state, data)


T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


# --- weeks and days ----------------------------------------------------------------------------


@pytest.mark.parametrize("day", [date(2026, 3, 23), date(2026, 3, 26), date(2026, 3, 29)])
def test_a_week_runs_monday_to_sunday_around_any_of_its_days(day: date) -> None:
    days = week_days(day)
    assert days[0] == date(2026, 3, 23)
    assert days[-1] == date(2026, 3, 29)
    assert [d.weekday() for d in days] == list(range(7))


@pytest.mark.parametrize(("zone", "day", "hours"), DST_DAYS)
def test_the_day_the_clocks_change_has_23_or_25_hours(
    zone: ZoneInfo, day: date, hours: int
) -> None:
    assert day_hours(day, zone) == hours
    assert day_hours(day - timedelta(days=1), zone) == 24
    assert day_hours(day + timedelta(days=1), zone) == 24
    assert day_hours(day, ZoneInfo("UTC")) == 24


def test_days_begin_at_local_midnight() -> None:
    start, end = day_bounds(date(2026, 3, 29), BERLIN)
    assert start == datetime(2026, 3, 28, 23, 0, tzinfo=UTC)  # CET, +01:00
    assert end == datetime(2026, 3, 29, 22, 0, tzinfo=UTC)  # CEST, +02:00


# --- splitting at midnight ---------------------------------------------------------------------


@pytest.mark.parametrize(("zone", "day", "hours"), DST_DAYS)
def test_a_stretch_over_the_night_the_clocks_change_counts_real_minutes(
    zone: ZoneInfo, day: date, hours: int
) -> None:
    saturday = day - timedelta(days=1)
    whole = stretch(local(zone, saturday, 22), local(zone, day, 4))
    pieces = split_by_day(whole, zone)
    assert [p.day for p in pieces] == [saturday, day]
    # 22:00 to midnight is 2 h; midnight to 04:00 on the clock is 3 h (spring) or 5 h (autumn).
    assert [p.minutes for p in pieces] == [120, (4 + hours - 24) * 60]
    assert sum(p.minutes for p in pieces) == whole.minutes
    assert pieces[0].end == pieces[1].start == local(zone, day, 0)


@pytest.mark.parametrize(("zone", "day", "hours"), DST_DAYS)
def test_a_stretch_covering_the_whole_dst_day_counts_its_23_or_25_hours(
    zone: ZoneInfo, day: date, hours: int
) -> None:
    after = day + timedelta(days=1)
    whole = stretch(local(zone, day, 0) - timedelta(hours=3), local(zone, after, 12))
    pieces = split_by_day(whole, zone)
    assert [p.day for p in pieces] == [day - timedelta(days=1), day, after]
    assert [p.minutes for p in pieces] == [180, hours * 60, 720]
    assert sum(p.minutes for p in pieces) == whole.minutes


def test_a_stretch_over_several_days_is_cut_at_each_midnight_and_adds_up() -> None:
    monday = date(2026, 3, 2)
    whole = stretch(local(BERLIN, monday, 10), local(BERLIN, monday + timedelta(days=3), 15, 30))
    pieces = split_by_day(whole, BERLIN)
    assert [p.minutes for p in pieces] == [14 * 60, 24 * 60, 24 * 60, 15 * 60 + 30]
    assert sum(p.minutes for p in pieces) == whole.minutes == 3 * 24 * 60 + 5 * 60 + 30
    for earlier, later in pairwise(pieces):
        assert earlier.end == later.start


def test_a_stretch_that_ends_at_midnight_leaves_no_empty_piece() -> None:
    monday = date(2026, 3, 2)
    whole = stretch(local(BERLIN, monday, 20), local(BERLIN, monday + timedelta(days=1), 0))
    assert [(p.day, p.minutes) for p in split_by_day(whole, BERLIN)] == [(monday, 240)]


def test_seconds_never_make_the_pieces_disagree_with_the_whole() -> None:
    start = datetime(2026, 3, 2, 23, 59, 40, tzinfo=UTC)
    whole = stretch(start, start + timedelta(seconds=100))
    pieces = split_by_day(whole, ZoneInfo("UTC"))
    assert [p.minutes for p in pieces] == [0, 1]
    assert whole.minutes == 1


def test_pieces_outside_the_asked_days_are_left_out() -> None:
    monday = date(2026, 3, 2)
    whole = stretch(local(BERLIN, monday, 12), local(BERLIN, monday + timedelta(days=4), 12))
    pieces = split_by_day(whole, BERLIN, monday + timedelta(days=1), monday + timedelta(days=2))
    assert [p.day for p in pieces] == [monday + timedelta(days=1), monday + timedelta(days=2)]
    assert [p.minutes for p in pieces] == [1440, 1440]


def test_the_same_instant_falls_on_different_days_in_different_zones() -> None:
    late = datetime(2026, 3, 2, 23, 30, tzinfo=UTC)
    whole = stretch(late, late + timedelta(hours=1))
    assert [p.day for p in split_by_day(whole, ZoneInfo("UTC"))] == [
        date(2026, 3, 2),
        date(2026, 3, 3),
    ]
    assert [p.day for p in split_by_day(whole, BERLIN)] == [date(2026, 3, 3)]
    assert [p.day for p in split_by_day(whole, NEW_YORK)] == [date(2026, 3, 2)]


# --- stretches from events ---------------------------------------------------------------------


def test_a_stretch_opens_on_entering_in_progress_and_closes_on_leaving() -> None:
    events = [
        status(at(0), "backlog"),
        assign(at(0), "backlog", CODER.id, "ai"),
        status(at(1), "in_progress", "backlog"),
        status(at(3), "review", "in_progress"),
        status(at(4), "in_progress", "review"),
        status(at(4.5), "done", "in_progress"),
    ]
    found = build_stretches("tsk_1", events, now=at(10))
    assert [(s.start, s.end, s.worker, s.ongoing) for s in found] == [
        (at(1), at(3), CODER, False),
        (at(4), at(4.5), CODER, False),
    ]
    assert [s.minutes for s in found] == [120, 30]


def test_a_stretch_still_in_progress_ends_now() -> None:
    events = [status(at(0), "in_progress"), assign(at(0), "in_progress", CODER.id, "ai")]
    [only] = build_stretches("tsk_1", events, now=at(2))
    assert (only.start, only.end, only.ongoing, only.minutes) == (at(0), at(2), True, 120)


def test_a_new_assignee_during_a_stretch_splits_it() -> None:
    events = [
        status(at(0), "in_progress"),
        assign(at(0), "in_progress", CODER.id, "ai"),
        assign(at(2), "in_progress", ANNA.id, "human"),
        status(at(5), "review", "in_progress"),
    ]
    found = build_stretches("tsk_1", events, now=at(9))
    assert [(s.worker, s.minutes) for s in found] == [(CODER, 120), (ANNA, 180)]
    pieces = [p for s in found for p in split_by_day(s, ZoneInfo("UTC"))]
    assert minutes_by_kind(pieces) == {"people": 180, "ai": 120}
    assert minutes_by_worker(pieces) == [(ANNA, 180), (CODER, 120)]


def test_starting_and_assigning_in_one_change_opens_one_stretch_for_the_new_assignee() -> None:
    events = [
        status(at(0), "backlog"),
        assign(at(0), "backlog", ANNA.id, "human"),
        status(at(1), "in_progress", "backlog"),
        assign(at(1), "in_progress", CODER.id, "ai"),
        status(at(2), "review", "in_progress"),
    ]
    [only] = build_stretches("tsk_1", events, now=at(3))
    assert (only.worker, only.start, only.end) == (CODER, at(1), at(2))


def test_a_task_held_only_by_its_human_owner_counts_for_that_person() -> None:
    events = [
        status(at(0), "in_progress"),
        assign(at(0), "in_progress", None, None, owner=ANNA.id),
        assign(at(1), "in_progress", None, None, owner="usr_ben"),
        status(at(2), "done", "in_progress"),
    ]
    found = build_stretches("tsk_1", events, now=at(3))
    assert [(s.worker, s.minutes) for s in found] == [
        (ANNA, 60),
        (Worker("usr_ben", AssigneeType.HUMAN), 60),
    ]


def test_a_new_owner_does_not_split_the_assignees_stretch() -> None:
    events = [
        status(at(0), "in_progress"),
        assign(at(0), "in_progress", CODER.id, "ai", owner=ANNA.id),
        assign(at(1), "in_progress", CODER.id, "ai", owner="usr_ben"),
        status(at(2), "done", "in_progress"),
    ]
    [only] = build_stretches("tsk_1", events, now=at(3))
    assert (only.worker, only.minutes) == (CODER, 120)


def test_events_are_read_in_time_order_whatever_order_they_arrive_in() -> None:
    events = [
        status(at(0), "in_progress"),
        assign(at(0), "in_progress", CODER.id, "ai"),
        status(at(1), "review", "in_progress"),
    ]
    assert build_stretches("tsk_1", reversed(events), now=at(5)) == build_stretches(
        "tsk_1", events, now=at(5)
    )


def test_history_without_an_assignment_event_falls_back_to_the_event_columns() -> None:
    events = [
        status(at(0), "in_progress", "ready_for_ai", agent_assignee_id=CODER.id),
        status(at(1), "blocked", "in_progress", agent_assignee_id=CODER.id),
        status(at(2), "in_progress", "blocked", human_assignee_id=ANNA.id),
        status(at(3), "review", "in_progress", human_assignee_id=ANNA.id),
    ]
    found = build_stretches("tsk_1", events, now=at(5))
    assert [(s.worker, s.start, s.end) for s in found] == [
        (CODER, at(0), at(1)),
        (ANNA, at(2), at(3)),
    ]


def test_a_task_never_in_progress_has_no_stretch() -> None:
    events = [status(at(0), "backlog"), status(at(1), "review", "backlog")]
    assert build_stretches("tsk_1", events, now=at(5)) == []
    assert build_stretches("tsk_1", [], now=at(5)) == []


def test_a_stretch_nobody_held_counts_for_neither_people_nor_ai() -> None:
    whole = stretch(at(0), at(1), worker=None)
    assert minutes_by_kind(split_by_day(whole, BERLIN)) == {"people": 0, "ai": 0}
    assert minutes_by_worker(split_by_day(whole, BERLIN)) == []


# --- time zones --------------------------------------------------------------------------------


def test_known_time_zones_load() -> None:
    assert load_zone("Europe/Berlin") == BERLIN
    assert str(load_zone("UTC")) == "UTC"


@pytest.mark.parametrize(
    "name", ["Mars/Olympus_Mons", "", "Europe", "../etc/passwd", "/etc/localtime", "utc"]
)
def test_an_unknown_time_zone_is_refused_naming_the_field(name: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        load_zone(name)
    assert caught.value.details["field"] == "timeZone"
    assert "IANA" in caught.value.message


def test_a_time_zone_over_64_characters_is_refused() -> None:
    with pytest.raises(LimitExceeded) as caught:
        load_zone("A" * 65)
    assert caught.value.details == {"field": "timeZone", "limit": 64}


@pytest.mark.parametrize(
    ("coverages", "combined"),
    [
        ([], "complete"),
        (["complete", "complete"], "complete"),
        (["complete", "partial"], "partial"),
        (["complete", "unavailable"], "partial"),
        (["unavailable", "unavailable"], "unavailable"),
        (["partial"], "partial"),
    ],
)
def test_coverage_is_complete_only_when_every_task_is(coverages: list[str], combined: str) -> None:
    assert combined_coverage(coverages) == combined
