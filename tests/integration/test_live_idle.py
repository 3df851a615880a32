"""A broker with no stream open reads nothing per event (issue 42: three nodes of a cluster
each read the log on every commit of the others), and a stream that opens after such an idle
spell still gets every event after its start, once and in order; so does one that opens again
after the broker went idle once more. On both databases: on PostgreSQL the broker stands on a
node of its own (another `Database` on the same database), hearing the writes by NOTIFY.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from sqlalchemy import event, select
from sqlalchemy.engine import URL

from crewboard.domain.clock import ManualClock
from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.services.live import Broker, Claim, Subscription
from crewboard.storage import schema
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user

CLAIM = Claim(holder="tok_idle", person="usr_idle")

pytestmark = pytest.mark.anyio


@pytest.fixture
def node(db: Database, database_url: URL, clock: ManualClock) -> Iterator[Database]:
    """The broker's node: the writers' own on SQLite (one node serves), another on PostgreSQL."""
    if db.dialect != "postgresql":
        yield db
        return
    other = Database(database_url, clock=clock)
    yield other
    other.dispose()


class Writer:
    """Tasks made on the writers' node, each one event in the log; the log looked at apart
    (`look`: an engine of its own, whose reads are not the broker's)."""

    def __init__(self, db: Database, look: Database) -> None:
        self.db = db
        self.look = look
        self.owner = make_user(db, "idle@example.com")
        self.project = make_project(db, self.owner, "IDL")
        self.made = 0

    def task(self) -> int:
        """Make a task; the id of the event it wrote."""
        self.made += 1
        title = f"Task {self.made}"
        tasks.create_task(self.db, person_actor(self.owner), project="IDL", workspace_id=None,
                          idempotency_key=title, title=title)  # fmt: skip
        return self.latest()

    def latest(self) -> int:
        with self.look.engine.connect() as conn:
            return int(conn.execute(select(schema.events.c.id).order_by(schema.events.c.id.desc())
                                    .limit(1)).scalar_one())  # fmt: skip

    def ids_after(self, after: int) -> list[int]:
        """The project's event ids after `after`, in log order: what a stream of it gets."""
        e = schema.events.c
        with self.look.engine.connect() as conn:
            query = select(e.id).where(e.project_id == self.project, e.id > after).order_by(e.id)
            return [int(row[0]) for row in conn.execute(query)]


@pytest.fixture
def writer(db: Database, database_url: URL, clock: ManualClock) -> Iterator[Writer]:
    look = Database(database_url, clock=clock)
    yield Writer(db, look)
    look.dispose()


async def until(check: Callable[[], bool]) -> None:
    """Until `check` holds: what it looks at moves in other threads, which set no event."""
    with anyio.fail_after(10):
        while not check():  # noqa: ASYNC110 - the broker's own state, polled
            await anyio.sleep(0.01)


@asynccontextmanager
async def running(broker: Broker) -> AsyncIterator[None]:
    async with anyio.create_task_group() as group:
        group.start_soon(broker.run)
        await until(lambda: broker.started)
        if broker.db.dialect == "postgresql":
            assert await anyio.to_thread.run_sync(broker.listening.wait, 10)
            # Listening, it looks at the end of the log once (it may have missed a NOTIFY
            # meanwhile): a read for the connection, not for an event; let it pass.
            await anyio.sleep(0.1)
        yield
        group.cancel_scope.cancel()


async def until_heard(broker: Broker, event_id: int) -> None:
    """Until the broker knows of `event_id` (another node's NOTIFY arrives a moment later)."""
    await until(lambda: broker._seen >= event_id)


async def received(sub: Subscription, last: int) -> list[int]:
    """The ids handed to `sub`, up to the one with id `last`."""
    ids: list[int] = []
    with anyio.fail_after(5):
        while not ids or ids[-1] < last:
            row = await sub.queue.get()
            ids.append(int(row["id"]))
    assert sub.queue.empty()
    return ids


async def test_an_idle_broker_reads_nothing_for_the_commits_it_hears(
    writer: Writer, node: Database
) -> None:
    # PostgreSQL: every NOTIFY names its id, so even the polls read nothing. SQLite: no poll
    # in the watched window (there the poll looks at the end of the log).
    broker = Broker(node, poll=0.02 if node.dialect == "postgresql" else 60)
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "FROM events" in statement:  # the broker's reads (a write inserts INTO events)
            statements.append(statement)

    async with running(broker):
        event.listen(node.engine, "before_cursor_execute", seen)
        try:
            for _ in range(5):
                await anyio.to_thread.run_sync(writer.task)
            latest = writer.latest()
            await until_heard(broker, latest)
            await anyio.sleep(0.2)  # a watched window: each wake-up read the log within 10 ms
        finally:
            event.remove(node.engine, "before_cursor_execute", seen)
    assert statements == []


async def test_a_stream_that_opens_after_an_idle_spell_gets_every_later_event_once_in_order(
    writer: Writer, node: Database
) -> None:
    broker = Broker(node, poll=60)  # only the wake-ups read: a late read would hide a loss
    async with running(broker):
        for _ in range(3):  # idle: heard, not read
            await anyio.to_thread.run_sync(writer.task)
        before = writer.latest()
        await until_heard(broker, before)

        first = broker.subscribe({writer.project}, CLAIM)
        assert first.start == before  # nothing before it comes, nothing after it is skipped
        after = [await anyio.to_thread.run_sync(writer.task) for _ in range(3)]
        assert await received(first, after[-1]) == writer.ids_after(before) == after

        broker.unsubscribe(first)  # idle again: what comes now is only noted
        for _ in range(2):
            await anyio.to_thread.run_sync(writer.task)
        again = writer.latest()
        await until_heard(broker, again)

        second = broker.subscribe({writer.project}, CLAIM)
        assert second.start == again
        later = [await anyio.to_thread.run_sync(writer.task) for _ in range(3)]
        assert await received(second, later[-1]) == writer.ids_after(again) == later


async def test_a_stream_that_opens_while_commits_pour_in_gets_each_one_after_its_start_once(
    writer: Writer, node: Database
) -> None:
    """The start is the newest id heard of, which may trail the log by a NOTIFY on its way:
    the events between come from the broker's next read, once, before the later ones."""
    broker = Broker(node, poll=60)
    async with running(broker):
        async with anyio.create_task_group() as pouring:
            pouring.start_soon(anyio.to_thread.run_sync, lambda: [writer.task() for _ in range(20)])
            await until(lambda: writer.made >= 5)
            sub = broker.subscribe({writer.project}, CLAIM)
        last = writer.latest()
        assert sub.start < last
        assert await received(sub, last) == writer.ids_after(sub.start)
