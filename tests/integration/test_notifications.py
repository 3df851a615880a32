"""Notifications on both databases: `notify` inside a write, the in-app list, the unread count
and marking read, each person's settings, and the email outbox sent by the mailer to a real
SMTP server on loopback (aiosmtpd): one email per opted-in person, none for people with email
off, none without SMTP (and a sentence saying why), retries while the server is down and
exactly one email once it is up, giving up after the last attempt, two mailers on one
database never sending one email twice."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from anyio import to_thread

from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import User
from crewboard.domain.notifications import MAX_ATTEMPTS, message_id
from crewboard.errors import ErrorCode, HumanIdentityRequired, ValidationFailed
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.notifications import inbox
from crewboard.services.notifications.mailer import Mailer, SmtpServer
from crewboard.services.notifications.notify import NotifyOutcome, notify
from crewboard.storage import migrate
from crewboard.storage.database import Database
from crewboard.storage.notifications.repository import OutboxRepository
from tests.support.factories import count_rows, make_project, make_user, token_actor
from tests.support.server import free_port
from tests.support.smtp import smtp_server

pytestmark = pytest.mark.anyio

PUBLIC_URL = "https://crew.example.com"
SENDER = "crewboard@example.com"


@pytest.fixture
def people(db: Database) -> dict[str, User]:
    return {name: make_user(db, f"{name}@example.com") for name in ("ada", "bo", "cy")}


@pytest.fixture
def project(db: Database, people: dict[str, User]) -> str:
    return make_project(db, people["ada"], "CRW")


@pytest.fixture
def smtp_port() -> int:
    return free_port()


@pytest.fixture
def mailer(db: Database, smtp_port: int) -> Mailer:
    server = SmtpServer(host="127.0.0.1", port=smtp_port, security="none", sender=SENDER, timeout=5)
    return Mailer(db, server, public_url=PUBLIC_URL, poll=60)


def email_on(db: Database, *users: User) -> None:
    for user in users:
        inbox.set_settings(db, person_actor(user), email=True)


def tell(
    db: Database,
    recipients: list[User],
    *,
    project: str | None,
    source: str = "handoff:hof_1",
    email: bool = True,
    in_app: bool = True,
    **fields: Any,
) -> NotifyOutcome:
    """`notify` inside a write of its own, as another area's use case calls it."""
    arguments: dict[str, Any] = {
        "kind": "handoff.created",
        "title": "Ada handed the shift to you",
        "body": "Three items wait for you.",
        "link": "/p/CRW/handoffs/1",
        **fields,
    }
    return db.write(
        lambda uow: notify(
            uow,
            recipients=[user.id for user in recipients],
            project_id=project,
            source=source,
            in_app=in_app,
            email=email,
            **arguments,
        )
    )


def outbox_row(db: Database, notification_id: str) -> dict[str, Any]:
    row = db.read(lambda uow: OutboxRepository(uow.conn).of_notification(notification_id))
    assert row is not None
    return row


def only_notification_of(db: Database, user: User) -> str:
    listed = inbox.list_notifications(db, person_actor(user))
    assert listed["total"] == 1
    return str(listed["notifications"][0]["id"])


async def test_each_opted_in_recipient_gets_one_email_with_subject_text_and_absolute_link(
    db: Database, people: dict[str, User], project: str, mailer: Mailer, smtp_port: int
) -> None:
    ada, bo, cy = people["ada"], people["bo"], people["cy"]
    email_on(db, ada, bo)  # cy keeps the default: email off

    outcome = tell(
        db,
        [ada, bo, cy, ada],  # a person named twice is told once
        project=project,
        email_subject="Handoff from Ada",
        email_text="Ada handed the evening shift to you.",
    )

    assert outcome.in_app == 3
    assert outcome.emails_queued == 2
    assert outcome.email_not_sent is not None
    assert "turned email off" in outcome.email_not_sent
    with smtp_server(smtp_port) as received:
        assert await mailer.drain() == 2
        assert await mailer.drain() == 0  # sent ones are not sent again
        received.wait_for(2)
        assert not received.to(cy.email)
        for person in (ada, bo):
            [message] = received.to(person.email)
            assert message["To"] == person.email
            assert message["From"] == SENDER
            assert message["Subject"] == "Handoff from Ada"
            body = message.get_content()
            assert "Ada handed the evening shift to you." in body
            assert f"{PUBLIC_URL}/p/CRW/handoffs/1" in body
            assert message["Message-ID"] == message_id(only_notification_of(db, person), SENDER)
    assert count_rows(db, "email_outbox") == 2
    row = outbox_row(db, only_notification_of(db, ada))
    assert row["status"] == "sent"
    assert row["sent_at"] is not None


async def test_one_cause_tells_a_person_once(
    db: Database, people: dict[str, User], project: str, mailer: Mailer
) -> None:
    ada = people["ada"]
    email_on(db, ada)
    first = tell(db, [ada], project=project)
    again = tell(db, [ada], project=project)
    assert (first.in_app, first.emails_queued) == (1, 1)
    assert (again.in_app, again.emails_queued) == (0, 0)
    assert again.email_not_sent is not None
    assert "already told" in again.email_not_sent
    other_cause = tell(db, [ada], project=project, source="handoff:hof_2")
    assert other_cause.in_app == 1
    assert count_rows(db, "notifications") == 2


async def test_without_smtp_notify_still_commits_in_app_and_says_why_no_email(
    db: Database, people: dict[str, User], project: str
) -> None:
    ada, bo = people["ada"], people["bo"]
    email_on(db, ada)

    outcome = tell(db, [ada, bo], project=project)

    assert (outcome.in_app, outcome.emails_queued) == (2, 0)
    assert outcome.email_not_sent is not None
    assert "SMTP" in outcome.email_not_sent
    assert count_rows(db, "email_outbox") == 0
    assert inbox.unread_count(db, person_actor(ada)) == 1
    assert inbox.get_settings(db, person_actor(ada)) == {
        "inApp": True,
        "email": True,
        "emailAvailable": False,
    }
    events = db.read(lambda uow: uow.events.list_after(project_id=project))
    created = [e for e in events if e["type"] == "notification.created"]
    assert {e["payload"]["userId"] for e in created} == {ada.id, bo.id}
    assert all(e["project_id"] == project for e in created)


async def test_a_persons_settings_win_over_the_callers_opt_ins(
    db: Database, people: dict[str, User], project: str, mailer: Mailer
) -> None:
    ada, bo, cy = people["ada"], people["bo"], people["cy"]
    inbox.set_settings(db, person_actor(ada), in_app=False, email=True)  # email only
    inbox.set_settings(db, person_actor(bo), in_app=False)  # nothing at all

    outcome = tell(db, [ada, bo, cy], project=project)
    assert (outcome.in_app, outcome.emails_queued) == (1, 1)
    assert inbox.list_notifications(db, person_actor(ada))["total"] == 0  # no bell entry
    assert inbox.list_notifications(db, person_actor(bo))["total"] == 0
    assert inbox.unread_count(db, person_actor(cy)) == 1

    asked_in_app_only = tell(db, [ada, cy], project=project, source="q:1", email=False)
    assert (asked_in_app_only.in_app, asked_in_app_only.emails_queued) == (1, 0)
    assert asked_in_app_only.email_not_sent is not None


async def test_the_list_pages_counts_unread_and_marks_read(
    db: Database, people: dict[str, User], project: str, clock: ManualClock
) -> None:
    ada = people["ada"]
    me = person_actor(ada)
    for number in range(3):
        clock.advance(timedelta(seconds=1))
        tell(db, [ada], project=project, source=f"handoff:hof_{number}", title=f"Handoff {number}")

    first = inbox.list_notifications(db, me, limit=2)
    assert [n["title"] for n in first["notifications"]] == ["Handoff 2", "Handoff 1"]
    assert (first["total"], first["unread"], first["nextOffset"]) == (3, 3, 2)
    rest = inbox.list_notifications(db, me, limit=2, offset=2)
    assert [n["title"] for n in rest["notifications"]] == ["Handoff 0"]
    assert rest["nextOffset"] is None
    assert first["notifications"][0]["link"] == "/p/CRW/handoffs/1"

    newest = first["notifications"][0]["id"]
    assert inbox.mark_read(db, me, ids=[newest]) == {"marked": 1, "unread": 2}
    assert inbox.mark_read(db, me, ids=[newest]) == {"marked": 0, "unread": 2}
    unread = inbox.list_notifications(db, me, unread_only=True)
    assert newest not in {n["id"] for n in unread["notifications"]}
    assert unread["total"] == 2
    # Someone else's ids change nothing of theirs.
    assert (
        inbox.mark_read(db, person_actor(people["bo"]), ids=[unread["notifications"][0]["id"]])[
            "marked"
        ]
        == 0
    )
    assert inbox.mark_read(db, me, all_unread=True) == {"marked": 2, "unread": 0}
    assert inbox.unread_count(db, me) == 0
    assert inbox.list_notifications(db, me)["notifications"][0]["readAt"] is not None


async def test_agent_tokens_have_no_notifications(
    db: Database, people: dict[str, User], project: str
) -> None:
    issued = tokens.issue_token(
        db,
        person_actor(people["ada"]),
        kind="agent",
        scopes=["read", "tasks.manage"],
        project="CRW",
    )
    agent = tokens.authenticate_token(db, issued.secret)
    with pytest.raises(HumanIdentityRequired):
        inbox.list_notifications(db, agent)
    with pytest.raises(HumanIdentityRequired):
        inbox.mark_read(db, agent, all_unread=True)
    with pytest.raises(HumanIdentityRequired):
        inbox.set_settings(db, agent, email=True)
    personal = token_actor(db, people["ada"], ["read"])
    assert inbox.list_notifications(db, personal)["total"] == 0


async def test_refusals_name_the_field(db: Database, people: dict[str, User], project: str) -> None:
    ada = people["ada"]
    for link in ("https://evil.example.com/", "//evil.example.com/x", "p/CRW"):
        with pytest.raises(ValidationFailed) as refused:
            tell(db, [ada], project=project, link=link)
        assert refused.value.details["field"] == "link"
    with pytest.raises(ValidationFailed) as refused:
        tell(db, [ada], project=project, title=" ")
    assert refused.value.details["field"] == "title"
    with pytest.raises(ValidationFailed) as refused:
        inbox.mark_read(db, person_actor(ada))
    assert refused.value.code is ErrorCode.VALIDATION
    assert refused.value.details["field"] == "ids"
    with pytest.raises(ValidationFailed) as refused:
        inbox.list_notifications(db, person_actor(ada), limit=0)
    assert refused.value.details["field"] == "limit"
    assert count_rows(db, "notifications") == 0


async def test_with_the_smtp_server_down_the_write_stands_and_the_email_goes_once_it_is_up(
    db: Database,
    people: dict[str, User],
    project: str,
    mailer: Mailer,
    clock: ManualClock,
) -> None:
    ada = people["ada"]
    email_on(db, ada)
    assert tell(db, [ada], project=project).emails_queued == 1  # nothing listens on smtp_port
    notification = only_notification_of(db, ada)

    assert await mailer.drain() == 0
    row = outbox_row(db, notification)
    assert (row["status"], row["attempts"]) == ("pending", 1)
    assert row["last_error"]
    assert row["next_attempt_at"] == clock.now() + timedelta(seconds=5)
    assert await mailer.drain() == 0  # not due yet: no second try
    assert outbox_row(db, notification)["attempts"] == 1
    clock.advance(timedelta(seconds=5))
    assert await mailer.drain() == 0
    row = outbox_row(db, notification)
    assert row["attempts"] == 2
    assert row["next_attempt_at"] == clock.now() + timedelta(seconds=10)  # doubled

    with smtp_server(mailer.server.port) as received:
        clock.advance(timedelta(seconds=10))
        assert await mailer.drain() == 1
        assert await mailer.drain() == 0
        clock.advance(timedelta(hours=1))
        assert await mailer.drain() == 0
        assert len(received.wait_for(1)) == 1
    row = outbox_row(db, notification)
    assert (row["status"], row["attempts"]) == ("sent", 2)


async def test_an_email_is_given_up_after_the_last_attempt_with_its_error(
    db: Database,
    people: dict[str, User],
    project: str,
    mailer: Mailer,
    clock: ManualClock,
) -> None:
    ada = people["ada"]
    email_on(db, ada)
    tell(db, [ada], project=project)
    for _ in range(MAX_ATTEMPTS + 2):
        await mailer.drain()
        clock.advance(timedelta(minutes=15))
    row = outbox_row(db, only_notification_of(db, ada))
    assert (row["status"], row["attempts"]) == ("failed", MAX_ATTEMPTS)
    assert "Connection" in row["last_error"] or "refused" in row["last_error"].lower()


async def test_the_running_mailer_is_woken_by_the_commit_that_queued_mail(
    db: Database, people: dict[str, User], project: str, mailer: Mailer, smtp_port: int
) -> None:
    ada = people["ada"]
    email_on(db, ada)
    with smtp_server(smtp_port) as received:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(mailer.run)  # polls every 60 s: only the wake-up is in time
            await anyio.lowlevel.checkpoint()  # let it start and look at the (empty) outbox
            await to_thread.run_sync(lambda: tell(db, [ada], project=project))
            with anyio.fail_after(10):
                messages = await to_thread.run_sync(received.wait_for, 1)
            tasks.cancel_scope.cancel()
    assert messages[0]["To"] == ada.email


async def test_two_mailers_on_one_database_send_each_email_once(
    db: Database, database_url: Any, people: dict[str, User], project: str, smtp_port: int
) -> None:
    recipients = [make_user(db, f"p{n}@example.com") for n in range(12)]
    email_on(db, *recipients)
    server = SmtpServer(host="127.0.0.1", port=smtp_port, security="none", sender=SENDER, timeout=5)
    other_db = Database(database_url, clock=db.clock)
    try:
        first = Mailer(db, server, public_url=PUBLIC_URL)
        second = Mailer(other_db, server, public_url=PUBLIC_URL)
        assert tell(db, recipients, project=project).emails_queued == 12
        sent: list[int] = []
        with smtp_server(smtp_port) as received:

            async def drain(mailer: Mailer) -> None:
                sent.append(await mailer.drain())

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(drain, first)
                tasks.start_soon(drain, second)
            messages = received.wait_for(12)
        assert sum(sent) == 12
        assert len(messages) == 12
        assert len({m["Message-ID"] for m in messages}) == 12
    finally:
        other_db.dispose()


async def test_the_notification_tables_go_with_a_downgrade_and_come_back(
    db: Database, people: dict[str, User], project: str
) -> None:
    names = {"notifications", "email_outbox", "notification_settings"}
    tell(db, [people["ada"]], project=project)
    migrate.downgrade(db, "0018_stream_tokens")
    assert _tables(db) & names == set()
    assert "stream_tokens" in _tables(db)
    migrate.upgrade(db)
    assert names <= _tables(db)
    assert migrate.schema_differences(db) == []
    assert tell(db, [people["ada"]], project=project).in_app == 1


def _tables(db: Database) -> set[str]:
    query = (
        "SELECT name FROM sqlite_master WHERE type = 'table'"
        if db.dialect == "sqlite"
        else "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    )
    with db.engine.connect() as conn:
        return set(conn.exec_driver_sql(query).scalars())
