"""Shift handoffs on both databases: one per author, project and day, the day taken in the
source time zone (near midnight it differs from UTC's); HANDOFF_ALREADY_EXISTS naming the one
there is; edits that name a stale updatedAt refused with the current one; bodies only by their
author; linked tasks the reader cannot open left out; recipients and filters; action items
with cursors; keys (a late retry returns the original without undoing later edits); agent
tokens refused everywhere; the project's shift zones."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from crewboard.contract.projects import present
from crewboard.domain.clock import ManualClock
from crewboard.domain.handoffs import (
    MAX_BODY,
    MAX_ITEM_TEXT,
    MAX_ITEMS,
    MAX_LINKED_TASKS,
    MAX_RECIPIENTS,
    Bodies,
)
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.notifications import inbox as notifications_inbox
from crewboard.services.notifications.mailer import Mailer, SmtpServer
from crewboard.services.paging import json_size
from crewboard.storage.database import Database
from tests.conftest import ONLY_POSTGRESQL
from tests.support import handoff_calls
from tests.support.errors import refused
from tests.support.factories import count_rows, grant, make_project, make_task, make_user
from tests.support.server import free_port
from tests.support.smtp import smtp_server

BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    present.update_project(
        db, person_actor(user), project="CRW", workspace_id=None,
        shift_time_zone_a=BERLIN, shift_time_zone_b=NEW_YORK,
    )  # fmt: skip
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


@pytest.fixture
def mate(db: Database, owner: User) -> User:
    user = make_user(db, "mate@example.com")
    grant(db, owner, "CRW", user, Role.WRITE)
    return user


def create(db: Database, actor: Actor, **more: Any) -> dict[str, Any]:
    bodies = more.pop("bodies", Bodies("Shipped the API change.", "Watching the rollout.", "",
                                       "Check the error rate."))  # fmt: skip
    made = handoff_calls.create_handoff(
        db, actor, project=more.pop("project", "CRW"), workspace_id=None, bodies=bodies, **more
    )
    return made.body["handoff"]  # type: ignore[no-any-return]


def test_the_day_is_taken_in_the_source_zone_and_one_slot_holds_one_handoff(
    db: Database, me: Actor, clock: ManualClock
) -> None:
    # 23:30 UTC on 2 March is already 3 March in Berlin (shift A) and still 2 March in New York.
    clock.advance(datetime(2026, 3, 2, 23, 30, tzinfo=UTC) - clock.now())
    berlin = create(db, me)
    assert berlin["date"] == "2026-03-03"
    assert (berlin["sourceTimeZone"], berlin["destinationTimeZone"]) == (BERLIN, NEW_YORK)
    reverse = create(db, me, source_time_zone=NEW_YORK, destination_time_zone=BERLIN)
    assert reverse["date"] == "2026-03-02"  # the reverse shift: its own day, its own slot
    again = refused(ErrorCode.HANDOFF_ALREADY_EXISTS, create, db, me)
    assert again.details["handoffId"] == berlin["id"]
    assert "update_handoff" in again.message
    assert count_rows(db, "handoffs") == 2
    explicit = create(db, me, day="2026-03-01")
    assert explicit["date"] == "2026-03-01"


def test_each_person_has_their_own_slot(db: Database, me: Actor, mate: User) -> None:
    first = create(db, me)
    second = create(db, person_actor(mate))
    assert first["date"] == second["date"]
    assert first["id"] != second["id"]


def test_a_stale_expected_updated_at_is_refused_naming_the_current_one(
    db: Database, me: Actor, clock: ManualClock
) -> None:
    made = create(db, me)
    read = made["updatedAt"]
    clock.advance(timedelta(minutes=5))
    changed = handoff_calls.update_handoff(
        db, me, handoff_id=made["id"], expected_updated_at=read, changes={"blockers": "VPN"}
    )["handoff"]
    assert changed["blockers"] == "VPN"
    assert changed["completed"] == made["completed"]  # left out: unchanged
    assert changed["updatedAt"] > read
    late = refused(
        ErrorCode.REVISION_CONFLICT, handoff_calls.update_handoff, db, me, handoff_id=made["id"],
        expected_updated_at=read, changes={"blockers": "nothing"},
    )  # fmt: skip
    assert late.details["currentUpdatedAt"] == changed["updatedAt"]
    assert changed["updatedAt"] in late.message
    assert handoff_calls.get_handoff(db, me, handoff_id=made["id"])["handoff"]["blockers"] == "VPN"


def test_edits_in_the_same_instant_still_get_versions_of_their_own(db: Database, me: Actor) -> None:
    made = create(db, me)
    first = handoff_calls.update_handoff(
        db, me, handoff_id=made["id"], expected_updated_at=made["updatedAt"],
        changes={"blockers": "one"},
    )["handoff"]  # fmt: skip
    assert first["updatedAt"] != made["updatedAt"]  # the clock did not move
    refused(
        ErrorCode.REVISION_CONFLICT, handoff_calls.update_handoff, db, me, handoff_id=made["id"],
        expected_updated_at=made["updatedAt"], changes={"blockers": "two"},
    )  # fmt: skip


def test_null_clears_and_only_the_author_changes_the_bodies(
    db: Database, me: Actor, mate: User
) -> None:
    task = make_task(db, me_user(db, me), "CRW", "Rollout")
    made = create(db, me, linked_task_ids=[task], recipients=["mate@example.com"])
    cleared = handoff_calls.update_handoff(
        db, me, handoff_id=made["id"], expected_updated_at=made["updatedAt"],
        changes={"next_steps": None, "recipients": None},
    )["handoff"]  # fmt: skip
    assert cleared["nextSteps"] == ""
    assert cleared["recipients"] == []
    assert [t["id"] for t in cleared["linkedTasks"]] == [task]
    other = person_actor(mate)
    denied = refused(
        ErrorCode.PERMISSION_DENIED, handoff_calls.update_handoff, db, other, handoff_id=made["id"],
        expected_updated_at=cleared["updatedAt"], changes={"completed": "not mine to say"},
    )  # fmt: skip
    assert "author" in denied.message
    allowed = handoff_calls.update_handoff(
        db, other, handoff_id=made["id"], expected_updated_at=cleared["updatedAt"],
        changes={"recipients": ["owner@example.com"]},
    )["handoff"]  # fmt: skip
    assert [r["email"] for r in allowed["recipients"]] == ["owner@example.com"]
    assert allowed["completed"] == made["completed"]


def me_user(db: Database, actor: Actor) -> User:
    user = db.read(lambda uow: uow.users.get(actor.user_id))
    assert user is not None
    return user


def test_linked_tasks_the_reader_cannot_open_are_left_out(
    db: Database, me: Actor, owner: User, mate: User
) -> None:
    make_project(db, owner, "SEC")  # mate is not a member
    secret = make_task(db, owner, "SEC", "Rotate the keys")
    public = make_task(db, owner, "CRW", "Update the docs")
    made = create(db, me, linked_task_ids=[public, "SEC-1"], recipients=[mate.id])
    assert {t["id"] for t in made["linkedTasks"]} == {public, secret}
    seen = handoff_calls.get_handoff(db, person_actor(mate), handoff_id=made["id"])["handoff"]
    assert [t["id"] for t in seen["linkedTasks"]] == [public]
    assert "SEC" not in str(seen)
    bad = refused(ErrorCode.VALIDATION, create, db, person_actor(mate), linked_task_ids=["SEC-1"])
    assert bad.details["field"] == "linkedTaskIds[0]"


def test_bad_input_is_refused_naming_the_field(db: Database, me: Actor) -> None:
    too_long = Bodies(completed="x" * (MAX_BODY + 1))
    assert (
        refused(ErrorCode.VALIDATION, create, db, me, bodies=too_long).details["field"]
        == "completed"
    )
    assert (
        refused(ErrorCode.VALIDATION, create, db, me, day="2026-02-30").details["field"] == "date"
    )
    assert (
        refused(ErrorCode.VALIDATION, create, db, me, source_time_zone="Mars/Base").details["field"]
        == "sourceTimeZone"
    )
    stranger = refused(ErrorCode.VALIDATION, create, db, me, recipients=["nobody@example.com"])
    assert stranger.details["field"] == "recipients[0]"
    assert count_rows(db, "handoffs") == 0
    zone = refused(
        ErrorCode.VALIDATION, present.update_project, db, me, project="CRW", workspace_id=None,
        shift_time_zone_b="Berlin",
    )  # fmt: skip
    assert zone.details["field"] == "shiftTimeZoneB"


def test_lists_filter_by_author_recipient_and_inclusive_dates(
    db: Database, me: Actor, mate: User
) -> None:
    for day in ("2026-03-01", "2026-03-02", "2026-03-03"):
        create(db, me, day=day, recipients=[mate.id] if day != "2026-03-02" else [])
    create(db, person_actor(mate), day="2026-03-02")
    every = handoff_calls.list_handoffs(db, me, project="CRW")
    assert every["total"] == 4
    assert every["handoffs"][0]["date"] == "2026-03-03"  # newest day first
    assert "completed" not in every["handoffs"][0]  # metadata only
    mine = handoff_calls.list_handoffs(db, me, project="CRW", author="owner@example.com")
    assert mine["total"] == 3
    to_mate = handoff_calls.list_handoffs(db, me, project="CRW", recipient=mate.id)
    assert sorted(h["date"] for h in to_mate["handoffs"]) == ["2026-03-01", "2026-03-03"]
    window = handoff_calls.list_handoffs(
        db, me, project="CRW", since="2026-03-02", until="2026-03-02"
    )
    assert window["total"] == 2
    paged = handoff_calls.list_handoffs(db, me, project="CRW", limit=3)
    assert (len(paged["handoffs"]), paged["nextOffset"]) == (3, 3)
    refused(ErrorCode.VALIDATION, handoff_calls.list_handoffs, db, me, project="CRW",
            since="2026-03-03", until="2026-03-01")  # fmt: skip


def test_action_items_page_with_cursors_and_follow_project_permissions(
    db: Database, me: Actor, mate: User, owner: User, clock: ManualClock
) -> None:
    made = create(db, me)
    ids = []
    for n in range(25):
        clock.advance(timedelta(seconds=1))
        item = handoff_calls.create_handoff_action_item(
            db, me, handoff_id=made["id"], text=f"item {n}", assignee=mate.email if n else None
        ).body["actionItem"]
        ids.append(item["id"])
    first = handoff_calls.get_handoff(db, me, handoff_id=made["id"])["handoff"]
    assert [i["id"] for i in first["actionItems"]] == ids[:20]
    assert first["actionItemCount"] == 25
    rest = handoff_calls.list_handoff_action_items(
        db, me, handoff_id=made["id"], cursor=first["actionItemsCursor"]
    )
    assert [i["id"] for i in rest["actionItems"]] == ids[20:]
    assert rest["nextCursor"] is None
    by_day = handoff_calls.list_handoff_action_items(
        db, me, project="CRW", day=made["date"], limit=10
    )
    assert [i["id"] for i in by_day["actionItems"]] == ids[:10]
    refused(
        ErrorCode.VALIDATION,
        handoff_calls.list_handoff_action_items,
        db,
        person_actor(mate),
        project="CRW",
        day=made["date"],
        cursor=by_day["nextCursor"],
    )  # fmt: skip  (another caller's cursor)
    # a writer of the project (not the author) changes an item; a reader may not
    item = handoff_calls.get_handoff_action_item(db, me, item_id=ids[1])["actionItem"]
    assert item["assignee"]["email"] == "mate@example.com"
    done = handoff_calls.update_handoff_action_item(
        db, person_actor(mate), item_id=ids[1], expected_updated_at=item["updatedAt"],
        changes={"status": "done", "assignee": None, "due_date": "2026-03-05"},
    )["actionItem"]  # fmt: skip
    assert (done["status"], done["assignee"], done["dueDate"]) == ("done", None, "2026-03-05")
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    refused(
        ErrorCode.PERMISSION_DENIED, handoff_calls.update_handoff_action_item, db,
        person_actor(reader), item_id=ids[1], expected_updated_at=done["updatedAt"],
        changes={"status": "open"},
    )  # fmt: skip
    refused(
        ErrorCode.VALIDATION, handoff_calls.update_handoff_action_item, db, me, item_id=ids[1],
        expected_updated_at=done["updatedAt"], changes={"status": "finished"},
    )  # fmt: skip


def test_a_late_retry_returns_the_original_without_undoing_later_edits(
    db: Database, me: Actor
) -> None:
    key = "shift-2026-03-02"
    made = create(db, me, idempotency_key=key)
    handoff_calls.update_handoff(
        db, me, handoff_id=made["id"], expected_updated_at=made["updatedAt"],
        changes={"blockers": "found later"},
    )  # fmt: skip
    again = handoff_calls.create_handoff(
        db, me, project="CRW", workspace_id=None, idempotency_key=key,
        bodies=Bodies("Shipped the API change.", "Watching the rollout.", "",
                      "Check the error rate."),
    )  # fmt: skip
    assert again.replayed
    assert again.body["handoff"]["id"] == made["id"]
    assert handoff_calls.get_handoff(db, me, handoff_id=made["id"])["handoff"]["blockers"] == (
        "found later"
    )
    changed = refused(
        ErrorCode.IDEMPOTENCY_CONFLICT, create, db, me, idempotency_key=key,
        bodies=Bodies("Something else"),
    )  # fmt: skip
    assert changed.details["resourceId"] == made["id"]


def test_agent_tokens_are_refused_on_every_handoff_call(
    db: Database, me: Actor, owner: User
) -> None:
    made = create(db, me)
    item = handoff_calls.create_handoff_action_item(db, me, handoff_id=made["id"], text="x")
    item_id = item.body["actionItem"]["id"]
    issued = tokens.issue_token(
        db, me, kind="agent", scopes=["read", "tasks.manage"], project="CRW"
    )
    agent = tokens.authenticate_token(db, issued.secret)
    calls = [
        lambda: create(db, agent, day="2026-04-01"),
        lambda: handoff_calls.update_handoff(db, agent, handoff_id=made["id"],
                                        expected_updated_at=made["updatedAt"],
                                        changes={"blockers": "x"}),
        lambda: handoff_calls.list_handoffs(db, agent, project="CRW"),
        lambda: handoff_calls.get_handoff(db, agent, handoff_id=made["id"]),
        lambda: handoff_calls.list_handoff_action_items(db, agent, handoff_id=made["id"]),
        lambda: handoff_calls.get_handoff_action_item(db, agent, item_id=item_id),
        lambda: handoff_calls.create_handoff_action_item(db, agent, handoff_id=made["id"], text="y"),
        lambda: handoff_calls.update_handoff_action_item(db, agent, item_id=item_id,
                                                    expected_updated_at=made["updatedAt"],
                                                    changes={"status": "done"}),
    ]  # fmt: skip
    for call in calls:
        error = refused(ErrorCode.HUMAN_IDENTITY_REQUIRED, call)
        assert "personal token" in error.message
    assert count_rows(db, "handoffs") == 1
    assert count_rows(db, "handoff_action_items") == 1


@ONLY_POSTGRESQL
def test_two_creates_racing_for_one_slot_make_one_handoff(db: Database, me: Actor) -> None:
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def attempt(n: int) -> None:
        barrier.wait()
        try:
            create(db, me, bodies=Bodies(f"writer {n}"))
            outcomes.append("made")
        except Exception as error:  # the loser's refusal is what is checked
            outcomes.append(getattr(error, "code", repr(error)))

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == sorted(["made", ErrorCode.HANDOFF_ALREADY_EXISTS])
    assert count_rows(db, "handoffs") == 1


def test_a_reply_with_room_cuts_what_does_not_fit_and_its_cursor_goes_on_from_there(
    db: Database, me: Actor
) -> None:
    made = create(db, me, bodies=Bodies(*(["🙂" * MAX_BODY] * 4)))
    for n in range(20):
        handoff_calls.create_handoff_action_item(
            db, me, handoff_id=made["id"], text=f"{n} " + "🚀" * 1990
        )
    room = 40_000
    fitted = handoff_calls.get_handoff(db, me, handoff_id=made["id"], room=room)["handoff"]
    assert json_size(fitted) <= room + 2048  # the cursor and the item keys around the rows
    assert set(fitted["truncated"]) <= {"completed", "inProgress", "blockers", "nextSteps"}
    assert fitted["truncated"]
    assert all("🙂" * 10 in fitted[name] for name in ("completed", "nextSteps"))
    whole = handoff_calls.get_handoff(db, me, handoff_id=made["id"])["handoff"]
    assert "truncated" not in whole
    assert whole["completed"] == "🙂" * MAX_BODY
    seen = [i["id"] for i in fitted["actionItems"]]
    cursor = fitted["actionItemsCursor"]
    assert cursor is not None
    while cursor:
        page = handoff_calls.list_handoff_action_items(
            db, me, handoff_id=made["id"], cursor=cursor, room=room
        )
        assert json_size(page["actionItems"]) <= room
        seen += [i["id"] for i in page["actionItems"]]
        cursor = page["nextCursor"]
    assert seen == [i["id"] for i in whole["actionItems"]]  # every item once, in order


def test_recipients_hear_only_when_asked_and_the_answer_says_why_no_email_went(
    db: Database, me: Actor, mate: User
) -> None:
    quiet = create(db, me, recipients=[mate.id], day="2026-03-01")
    assert count_rows(db, "notifications") == 0
    made = handoff_calls.create_handoff(
        db, me, project="CRW", workspace_id=None, bodies=Bodies("Done."), day="2026-03-02",
        recipients=[mate.id], send_notification=True, send_email=True,
    ).body  # fmt: skip
    told = made["notifications"]
    assert (told["inApp"], told["emailsQueued"]) == (1, 0)
    assert "SMTP" in told["emailNotSent"]  # this database has no mail server set up
    listed = notifications_inbox.list_notifications(db, person_actor(mate))
    assert [n["link"] for n in listed["notifications"]] == [
        f"/p/CRW/handoffs?date=2026-03-02#{made['handoff']['id']}"
    ]
    assert quiet["id"] != made["handoff"]["id"]


@pytest.mark.anyio
async def test_a_handoff_emails_each_opted_in_recipient_once_through_a_real_smtp_server(
    db: Database, me: Actor, owner: User, mate: User
) -> None:
    other = make_user(db, "other@example.com")
    grant(db, owner, "CRW", other, Role.READ)
    notifications_inbox.set_settings(db, person_actor(mate), email=True)  # other keeps it off
    server = SmtpServer(host="127.0.0.1", port=free_port(), security="none",
                        sender="crew@example.com", timeout=5)  # fmt: skip
    mailer = Mailer(db, server, public_url="https://crew.example.com", poll=60)  # enables email
    made = handoff_calls.create_handoff(
        db, me, project="CRW", workspace_id=None, day="2026-03-02",
        bodies=Bodies("Shipped the API.", "", "The VPN", "Watch the error rate."),
        recipients=[mate.id, other.id], send_email=True,
    ).body  # fmt: skip
    assert made["notifications"]["emailsQueued"] == 1
    assert "turned email off" in made["notifications"]["emailNotSent"]
    with smtp_server(server.port) as received:
        assert await mailer.drain() == 1
        assert await mailer.drain() == 0
        [message] = received.wait_for(1)
    assert message["To"] == "mate@example.com"
    assert message["Subject"] == "[CRW] owner handed over CRW for 2026-03-02"
    text = message.get_content().replace("\r\n", "\n")  # SMTP lines end in CRLF
    assert "Blockers:\nThe VPN" in text
    assert "Next steps:\nWatch the error rate." in text
    link = f"https://crew.example.com/p/CRW/handoffs?date=2026-03-02#{made['handoff']['id']}"
    assert link in text


def test_an_assignee_hears_of_an_action_item_given_to_them(
    db: Database, me: Actor, mate: User, owner: User
) -> None:
    made = create(db, me)
    mine = handoff_calls.create_handoff_action_item(
        db, me, handoff_id=made["id"], text="Mine", assignee=owner.email
    ).body["actionItem"]
    assert count_rows(db, "notifications") == 0  # giving it to yourself tells nobody
    handoff_calls.create_handoff_action_item(
        db, me, handoff_id=made["id"], text="Call the vendor", assignee=mate.email
    )
    handoff_calls.update_handoff_action_item(
        db, me, item_id=mine["id"], expected_updated_at=mine["updatedAt"],
        changes={"assignee": mate.id},
    )  # fmt: skip
    told = notifications_inbox.list_notifications(db, person_actor(mate))["notifications"]
    assert sorted(n["body"] for n in told) == ["Call the vendor", "Mine"]
    assert all(n["link"].startswith("/p/CRW/handoffs?date=") for n in told)


def test_a_project_can_keep_assignees_from_being_told(db: Database, me: Actor, mate: User) -> None:
    changed = present.update_project(
        db, me, project="CRW", workspace_id=None, notify_action_item_assignees=False
    )["project"]
    assert changed["notifyActionItemAssignees"] is False
    assert changed["shiftTimeZones"] == {"a": BERLIN, "b": NEW_YORK}  # the rest as it was
    made = create(db, me)
    handoff_calls.create_handoff_action_item(
        db, me, handoff_id=made["id"], text="Quietly", assignee=mate.email
    )
    assert count_rows(db, "notifications") == 0


def test_the_limits_on_links_recipients_and_action_items_are_enforced(
    db: Database, me: Actor
) -> None:
    many = [f"CRW-{n}" for n in range(1, MAX_LINKED_TASKS + 2)]
    assert (
        refused(ErrorCode.VALIDATION, create, db, me, linked_task_ids=many).details["field"]
        == "linkedTaskIds"
    )
    people = [f"p{n}@example.com" for n in range(MAX_RECIPIENTS + 1)]
    assert (
        refused(ErrorCode.VALIDATION, create, db, me, recipients=people).details["field"]
        == "recipients"
    )
    made = create(db, me)
    long = refused(
        ErrorCode.LIMIT_EXCEEDED, handoff_calls.create_handoff_action_item, db, me,
        handoff_id=made["id"], text="x" * (MAX_ITEM_TEXT + 1),
    )  # fmt: skip
    assert long.details["field"] == "text"
    for n in range(MAX_ITEMS):
        handoff_calls.create_handoff_action_item(db, me, handoff_id=made["id"], text=f"item {n}")
    full = refused(
        ErrorCode.LIMIT_EXCEEDED, handoff_calls.create_handoff_action_item, db, me,
        handoff_id=made["id"], text="one more",
    )  # fmt: skip
    assert str(MAX_ITEMS) in full.message
    assert count_rows(db, "handoff_action_items") == MAX_ITEMS
