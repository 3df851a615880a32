"""Webhook deliveries over real HTTP to a receiver on loopback, on both databases: every event
once and in order, signed; retries with back-off when the receiver is down; redirects and
stalls; pausing after the retry window; several dispatchers ("nodes") on one database."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from sqlalchemy import event, select

from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.domain.webhooks import PING, DeliveryState, WebhookState
from crewboard.services.board import task_updates, tasks
from crewboard.services.identity.users import person_actor
from crewboard.services.live import Broker
from crewboard.services.webhooks import deliveries, subscriptions
from crewboard.services.webhooks.dispatcher import Dispatcher
from crewboard.services.webhooks.sending import Policy, configure, policy_from, policy_of
from crewboard.storage import schema
from crewboard.storage.database import Database
from crewboard.storage.notifications.tables import notifications
from tests.support.factories import grant, make_project, make_user
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.anyio
LOOPBACK = "127.0.0.1/32"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver().start()
    yield running
    running.stop()


@pytest.fixture
def owner(db: Database) -> User:
    configure(db, policy_from(LOOPBACK, 2.0, 262_144, 24))
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


def new_task(db: Database, owner: User, title: str) -> dict[str, Any]:
    made = tasks.create_task(
        db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key=title,
        title=title,
    )  # fmt: skip
    return dict(made.body["task"])


def rename(db: Database, owner: User, task: dict[str, Any], title: str) -> None:
    task_updates.update_task(
        db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key=title,
        task_id=str(task["id"]), expected_revision=int(task["revision"]),
        patch={"title": title},
    )  # fmt: skip


def task_event_ids(db: Database) -> list[int]:
    """The ids of the project's task events, in log order."""
    e = schema.events.c
    with db.engine.connect() as conn:
        query = select(e.id).where(e.type.like("task.%")).order_by(e.id)
        return [int(row[0]) for row in conn.execute(query)]


def scripted_run(db: Database, owner: User, prefix: str, count: int = 3) -> None:
    for n in range(count):
        task = new_task(db, owner, f"{prefix} {n}")
        rename(db, owner, task, f"{prefix} {n} renamed")


async def drain(*dispatchers: Dispatcher, passes: int = 20) -> None:
    """Passes until none of the dispatchers claims anything (bounded)."""
    for _ in range(passes):
        claimed = 0
        for dispatcher in dispatchers:
            claimed += await dispatcher.run_once()
        if claimed == 0:
            return
    raise AssertionError(f"still claiming after {passes} passes")


def delivery_states(db: Database, webhook_id: str) -> list[str]:
    page = deliveries.list_webhook_deliveries(db, person_actor_of(db), webhook_id, limit=200)
    return [d.state.value for d in page.deliveries]


def person_actor_of(db: Database) -> Any:
    user = db.read(lambda uow: uow.users.get_by_email("owner@example.com"))
    assert user is not None
    return person_actor(user)


async def test_every_event_of_a_run_arrives_once_in_order_signed(
    db: Database, owner: User, receiver: Receiver
) -> None:
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url=receiver.url, events=["task.*"]
    )
    other = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url=receiver.url, events=["task.created"]
    )
    scripted_run(db, owner, "Run")
    await drain(Dispatcher(db))

    wanted = task_event_ids(db)
    assert receiver.event_ids(made.webhook.id) == wanted
    created = [r.event_id for r in receiver.requests if r.json["event"]["type"] == "task.created"]
    assert receiver.event_ids(other.webhook.id) == list(dict.fromkeys(created))
    for got in receiver.requests:
        hook = made if got.headers["crewboard-webhook"] == made.webhook.id else other
        assert got.verified(hook.secret, time.time())
        assert not got.verified("whsec_wrong", time.time())
        assert got.json["event"]["id"] == got.event_id
        assert got.json["webhookId"] == hook.webhook.id
        assert got.headers["crewboard-event"] == got.json["event"]["type"]
        assert got.headers["user-agent"] == "Crewboard-Webhooks"
    assert set(delivery_states(db, made.webhook.id)) == {"delivered"}


async def test_a_new_webhook_gets_no_history(db: Database, owner: User, receiver: Receiver) -> None:
    scripted_run(db, owner, "Before", 1)
    subscriptions.create_webhook(db, person_actor(owner), "CRW", url=receiver.url, events=["*"])
    await drain(Dispatcher(db))
    assert receiver.requests == []


async def test_a_receiver_down_gets_the_rest_in_order_after_back_off(
    db: Database, clock: ManualClock, owner: User, receiver: Receiver
) -> None:
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url=receiver.url, events=["task.*"]
    )
    dispatcher = Dispatcher(db)
    scripted_run(db, owner, "First", 1)
    await drain(dispatcher)
    receiver.mode = "fail"
    scripted_run(db, owner, "Second", 2)
    await drain(dispatcher)
    hook = subscriptions.get_webhook(db, person_actor(owner), made.webhook.id)
    assert hook.attempts == 1
    assert hook.next_attempt_at is not None
    await drain(dispatcher)  # backing off: nothing is sent
    receiver.stop()  # the port closes: a failure without an answer
    clock.advance(timedelta(seconds=15))
    await drain(dispatcher)
    hook = subscriptions.get_webhook(db, person_actor(owner), made.webhook.id)
    assert hook.attempts == 2
    receiver.mode = "ok"
    receiver.start()
    clock.advance(timedelta(seconds=40))
    await drain(dispatcher)

    assert receiver.event_ids() == task_event_ids(db)
    log = deliveries.list_webhook_deliveries(db, person_actor(owner), made.webhook.id, limit=200)
    assert len({d.event_id for d in log.deliveries}) == len(log.deliveries)
    retried = [d for d in log.deliveries if d.attempts == 3]
    assert len(retried) == 1
    assert retried[0].state is DeliveryState.DELIVERED


async def test_a_redirect_is_a_failure_not_followed(
    db: Database, owner: User, receiver: Receiver
) -> None:
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url=receiver.url, events=["task.*"]
    )
    receiver.mode = "redirect"
    new_task(db, owner, "Moved")
    await drain(Dispatcher(db))
    log = deliveries.list_webhook_deliveries(db, person_actor(owner), made.webhook.id)
    assert [d.state for d in log.deliveries] == [DeliveryState.RETRYING]
    assert log.deliveries[0].response_status == 302
    assert "not followed" in (log.deliveries[0].error or "")


async def test_a_stalled_receiver_holds_a_pass_no_longer_than_the_timeout(
    db: Database, owner: User, receiver: Receiver
) -> None:
    configure(db, policy_from(LOOPBACK, 1.0, 262_144, 24))
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url=receiver.url, events=["task.*"]
    )
    receiver.mode = "stall"
    new_task(db, owner, "Slow")
    started = time.monotonic()
    with anyio.fail_after(5):
        await Dispatcher(db).run_once()
    assert time.monotonic() - started < 4
    receiver.released.set()
    log = deliveries.list_webhook_deliveries(db, person_actor(owner), made.webhook.id)
    assert "no answer within" in (log.deliveries[0].error or "")


async def test_a_day_of_failures_pauses_and_tells_the_admins_and_resume_retries(
    db: Database, clock: ManualClock, owner: User, receiver: Receiver
) -> None:
    admin = make_user(db, "admin@example.com")
    grant(db, owner, "CRW", admin, Role.ADMIN)
    writer = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer, Role.WRITE)
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url=receiver.url, events=["task.*"]
    )
    receiver.mode = "fail"
    new_task(db, owner, "Doomed")
    dispatcher = Dispatcher(db)
    for _ in range(40):
        await drain(dispatcher)
        hook = subscriptions.get_webhook(db, person_actor(owner), made.webhook.id)
        if hook.state is WebhookState.PAUSED:
            break
        clock.advance(timedelta(hours=1, minutes=10))
    assert hook.state is WebhookState.PAUSED
    assert hook.paused_reason
    told = notified(db, "webhook.paused")
    assert sorted(told) == sorted([owner.id, admin.id])
    assert delivery_states(db, made.webhook.id) == ["failed"]

    receiver.mode = "ok"
    resumed = subscriptions.update_webhook(db, person_actor(owner), made.webhook.id, active=True)
    assert resumed.state is WebhookState.ACTIVE
    assert resumed.failing_since is None
    await drain(dispatcher)
    assert receiver.event_ids() == task_event_ids(db)


def notified(db: Database, kind: str) -> list[str]:
    with db.engine.connect() as conn:
        query = select(notifications.c.user_id).where(notifications.c.kind == kind)
        return [str(row[0]) for row in conn.execute(query)]


async def test_a_sender_stopped_before_sending_delivers_once_later(
    db: Database, owner: User, receiver: Receiver
) -> None:
    subscriptions.create_webhook(db, person_actor(owner), "CRW", url=receiver.url, events=["*"])
    stopped = Dispatcher(db)  # made, never run: the process ended after the commits
    del stopped
    scripted_run(db, owner, "Unsent", 2)
    await drain(Dispatcher(db))
    assert receiver.event_ids() == task_event_ids(db)


async def test_a_crash_between_send_and_record_sends_the_same_delivery_again(
    db: Database, clock: ManualClock, owner: User, receiver: Receiver
) -> None:
    subscriptions.create_webhook(db, person_actor(owner), "CRW", url=receiver.url, events=["*"])
    new_task(db, owner, "Once")
    crashed = Dispatcher(db, node="crashed")
    # The node claims and logs the head delivery, then dies before sending it.
    claimed = crashed._claim(1)
    step = crashed._head(claimed[0].id)
    assert step is not None
    clock.advance(timedelta(seconds=61))  # its lease runs out
    await drain(Dispatcher(db))
    ids = [r.headers["crewboard-delivery"] for r in receiver.requests]
    assert ids == [step.delivery.id]


async def test_redeliver_and_ping_go_out_of_band(
    db: Database, owner: User, receiver: Receiver
) -> None:
    made = subscriptions.create_webhook(
        db, person_actor(owner), "CRW", url=receiver.url, events=["task.*"]
    )
    new_task(db, owner, "Again")
    dispatcher = Dispatcher(db)
    await drain(dispatcher)
    first = deliveries.list_webhook_deliveries(db, person_actor(owner), made.webhook.id)
    again = deliveries.redeliver_webhook(db, person_actor(owner), first.deliveries[0].id)
    ping = deliveries.ping_webhook(db, person_actor(owner), made.webhook.id)
    await drain(dispatcher)
    got = receiver.requests
    assert [r.headers["crewboard-delivery"] for r in got[1:]] == [again.id, ping.id]
    assert got[1].event_id == got[0].event_id
    assert got[2].json["event"]["type"] == PING
    assert all(r.verified(made.secret, time.time()) for r in got)
    assert set(delivery_states(db, made.webhook.id)) == {"delivered"}


async def test_two_nodes_deliver_each_event_once(
    db: Database, database_url: Any, clock: ManualClock, owner: User, receiver: Receiver
) -> None:
    other_db = Database(database_url, clock=clock)
    configure(other_db, db.hooks["webhooks.policy"])  # type: ignore[arg-type]
    try:
        for n in range(3):
            subscriptions.create_webhook(
                db, person_actor(owner), "CRW", url=receiver.url, events=["*"],
                description=f"hook {n}",
            )  # fmt: skip
        scripted_run(db, owner, "Cluster", 3)
        nodes = [Dispatcher(db, workers=2), Dispatcher(other_db, workers=2)]
        async with anyio.create_task_group() as group:
            for node in nodes:
                group.start_soon(drain, node)
        await drain(*nodes)
        ids = [(r.headers["crewboard-webhook"], r.event_id) for r in receiver.requests]
        assert len(ids) == len(set(ids)) == 3 * len(task_event_ids(db))
    finally:
        other_db.dispose()


async def test_the_running_loop_sends_on_a_commit_without_waiting_for_its_poll(
    db: Database, owner: User, receiver: Receiver
) -> None:
    subscriptions.create_webhook(db, person_actor(owner), "CRW", url=receiver.url, events=["*"])
    dispatcher = Dispatcher(db, poll=60)  # only a wake-up can make it look in time
    async with anyio.create_task_group() as group:
        group.start_soon(dispatcher.run)
        await wait_started(dispatcher)
        new_task(db, owner, "Woken")
        assert await anyio.to_thread.run_sync(receiver.wait_for, 1)
        group.cancel_scope.cancel()
    assert receiver.event_ids() == task_event_ids(db)


async def test_another_nodes_commit_wakes_the_loop_through_the_broker(
    db: Database, database_url: Any, clock: ManualClock, owner: User, receiver: Receiver
) -> None:
    if db.dialect != "postgresql":
        pytest.skip("nodes hear each other's commits through PostgreSQL's NOTIFY")
    subscriptions.create_webhook(db, person_actor(owner), "CRW", url=receiver.url, events=["*"])
    node = Database(database_url, clock=clock)
    configure(node, policy_of(db))
    broker = Broker(node)
    dispatcher = Dispatcher(node, poll=60)  # only a wake-up can make it look in time
    broker.on_events(dispatcher.wake)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(broker.run)
            group.start_soon(dispatcher.run)
            await wait_started(dispatcher)
            assert await anyio.to_thread.run_sync(broker.listening.wait, 10)
            new_task(db, owner, "Heard")  # committed on the other node
            assert await anyio.to_thread.run_sync(receiver.wait_for, 1)
            group.cancel_scope.cancel()
    finally:
        node.dispose()
    assert receiver.event_ids() == task_event_ids(db)


async def wait_started(dispatcher: Dispatcher) -> None:
    """Until the loop's first pass is over (it claims nothing: no event yet)."""
    with anyio.fail_after(5):
        while dispatcher._wakeup._loop is None:
            await anyio.lowlevel.checkpoint()


async def test_with_no_active_webhook_events_cost_the_loop_no_read_until_one_is_made_here(
    db: Database, owner: User, receiver: Receiver
) -> None:
    """Most servers have no webhook: an event then wakes nothing and reads nothing (issue 42:
    each node read the subscriptions on every commit of every node). A webhook made on this
    node is looked for at once, and served."""
    dispatcher = Dispatcher(db, poll=60)
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "webhook" in statement:
            statements.append(statement)

    async with anyio.create_task_group() as group:
        group.start_soon(dispatcher.run)
        with anyio.fail_after(5):  # the first pass looked (there was no webhook)
            while dispatcher._looked is None:  # noqa: ASYNC110 - the loop's own state, polled
                await anyio.sleep(0.01)
        event.listen(db.engine, "before_cursor_execute", seen)
        try:
            for n in range(3):
                await anyio.to_thread.run_sync(new_task, db, owner, f"Unwatched {n}")
            dispatcher.wake()  # as the broker does for another node's commit
            await anyio.sleep(0.3)  # a watched window: each wake-up looked within milliseconds
        finally:
            event.remove(db.engine, "before_cursor_execute", seen)
        assert statements == []
        subscriptions.create_webhook(db, person_actor(owner), "CRW", url=receiver.url,
                                     events=["task.created"])  # fmt: skip
        new_task(db, owner, "Watched")
        assert await anyio.to_thread.run_sync(receiver.wait_for, 1)
        group.cancel_scope.cancel()


async def test_a_webhook_made_on_another_node_is_found_within_the_watch(
    db: Database, database_url: Any, clock: ManualClock, owner: User, receiver: Receiver
) -> None:
    """The other node hears none of this node's commits (on SQLite none at all): it finds the
    new subscription at its next look, `watch` seconds after the last, and sends from its
    cursor, so the events made in between are not missed."""
    node = Database(database_url, clock=clock)
    configure(node, policy_of(db))
    dispatcher = Dispatcher(node, poll=0.05, watch=0.3)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(dispatcher.run)
            await wait_started(dispatcher)
            subscriptions.create_webhook(db, person_actor(owner), "CRW", url=receiver.url,
                                         events=["*"])  # fmt: skip
            new_task(db, owner, "Made elsewhere")
            assert await anyio.to_thread.run_sync(receiver.wait_for, 1)
            group.cancel_scope.cancel()
    finally:
        node.dispose()
    assert receiver.event_ids() == task_event_ids(db)


def test_policy_defaults_refuse_loopback() -> None:
    assert Policy().allow_networks == ()


async def test_an_idle_loop_takes_no_write_and_wakes_only_on_events(
    db: Database, owner: User, receiver: Receiver
) -> None:
    """Every write calls the database's listeners, the loop's own too: a loop that woke on
    those ran pass after pass (a core busy on an idle server). Idle, it looks once a poll and
    writes nothing; a write with no event does not wake it."""
    subscriptions.create_webhook(db, person_actor(owner), "CRW", url=receiver.url, events=["*"])
    dispatcher = Dispatcher(db, poll=60)
    await drain(dispatcher)
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement.lstrip().split(None, 1)[0].upper())

    async with anyio.create_task_group() as group:
        group.start_soon(dispatcher.run)
        await wait_started(dispatcher)
        event.listen(db.engine, "before_cursor_execute", seen)
        try:
            db.write(lambda _uow: None)  # a write with no event, as the loop's own claims are
            await anyio.sleep(0.5)  # a watched window: a busy loop looks thousands of times
        finally:
            event.remove(db.engine, "before_cursor_execute", seen)
        group.cancel_scope.cancel()
    assert not {"UPDATE", "INSERT", "DELETE"} & set(statements), statements
    assert len(statements) <= 10, statements
