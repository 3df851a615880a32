"""The live broker: one per process, it reads the event log once for all its open streams and
hands each stream the events of its projects, in id order (which is commit order: see
`UnitOfWork.write_events`).

The log is the source of truth. The broker reads it after its cursor whenever it is woken:
by a commit in this process (an event listener on the Database), by a commit on another node
(PostgreSQL NOTIFY on `crewboard_events`, heard by a LISTEN connection in a thread), and at
the latest every POLL seconds, so a lost notification delays an event by at most that and
loses nothing.

Each stream has a bounded queue. A stream whose client reads too slowly to keep up fills it
and is cut, with a reason, rather than holding the broker (and so every other stream) back.
A process holds at most `max_streams` streams, and a token at most `per_token` of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from anyio import to_thread

from crewboard.storage.database import Database
from crewboard.storage.uow import EVENT_CHANNEL, EventRecord

log = logging.getLogger(__name__)

POLL = 1.0  # seconds: the longest an event waits when no wake-up reaches the broker
GATHER = 0.01  # seconds: the least time between two reads of the log
BATCH = 500  # events read at a time
QUEUE = 2000  # events a stream may have waiting before it is cut as too slow
MAX_STREAMS = 500  # streams one process holds
PER_TOKEN = 5  # streams one token (or session) may hold on one process


class StreamRefused(Exception):
    """No room for another stream: `reason` says whose limit was reached."""

    def __init__(self, reason: str, status: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass(eq=False)
class Subscription:
    """One open stream: its projects, its queue, and why it was cut (if it was)."""

    projects: frozenset[str]
    holder: str
    start: int  # the broker's cursor when it subscribed: the log holds what came before
    queue: asyncio.Queue[dict[str, Any]] = field(default_factory=lambda: asyncio.Queue(QUEUE))
    cut: str | None = None
    woken: asyncio.Event = field(default_factory=asyncio.Event)


class Broker:
    def __init__(
        self,
        db: Database,
        *,
        poll: float = POLL,
        max_streams: int = MAX_STREAMS,
        per_token: int = PER_TOKEN,
    ) -> None:
        self.db = db
        self.poll = poll
        self.max_streams = max_streams
        self.per_token = per_token
        self.cursor = 0
        self.subscriptions: set[Subscription] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._last_read = 0.0
        self._stopping = threading.Event()
        db.add_event_listener(self._heard)

    # --- waking ----------------------------------------------------------------------------

    def _heard(self, _events: list[EventRecord]) -> None:
        """A commit in this process (called in the writer's thread)."""
        self.wake()

    def wake(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake.set)

    def _listen(self) -> None:
        """LISTEN for other nodes' commits (PostgreSQL), until the broker stops."""
        import psycopg  # noqa: PLC0415 - only with PostgreSQL

        url = self.db.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        while not self._stopping.is_set():
            try:
                with psycopg.connect(url, autocommit=True, **self.db.raw_connect_kwargs()) as conn:
                    conn.execute(f"LISTEN {EVENT_CHANNEL}")
                    self.wake()  # anything committed while it was not listening
                    while not self._stopping.is_set():
                        for _ in conn.notifies(timeout=1.0):
                            self.wake()
            except psycopg.Error:
                log.warning("live: the LISTEN connection failed; polling until it is back")
                self._stopping.wait(self.poll)

    # --- the loop --------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and hand out events until cancelled (the app's lifespan runs this)."""
        self._loop = asyncio.get_running_loop()
        self.cursor = await to_thread.run_sync(self._latest)
        listener = None
        if self.db.dialect == "postgresql":
            listener = threading.Thread(target=self._listen, name="live-listen", daemon=True)
            listener.start()
        try:
            loop = asyncio.get_running_loop()
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.poll)
                # Under a stream of commits, wake-ups come faster than reads are worth: read
                # at most every GATHER seconds, so one read hands out what came meanwhile.
                await asyncio.sleep(max(0.0, self._last_read + GATHER - loop.time()))
                self._wake.clear()
                self._last_read = loop.time()
                await self._read_new()
        finally:
            self._stopping.set()
            for sub in list(self.subscriptions):
                self._cut(sub, "the server is shutting down")

    def _latest(self) -> int:
        return self.db.read(lambda uow: uow.events.latest_any())

    async def _read_new(self) -> None:
        if not self.subscriptions:
            # Nobody to hand events to: move to the end of the log, unless a stream joined
            # meanwhile (it joined at the old cursor and must get what came after it).
            latest = await to_thread.run_sync(self._latest)
            if not self.subscriptions:
                self.cursor = max(self.cursor, latest)
                return
        while True:
            after = self.cursor
            rows = await to_thread.run_sync(self._read, after)
            for row in rows:
                self.cursor = row["id"]
                self._hand_out(row)
            if len(rows) < BATCH:
                return

    def _read(self, after: int) -> list[dict[str, Any]]:
        return self.db.read(lambda uow: uow.events.list_after(project_id=None, after_id=after,
                                                             limit=BATCH))  # fmt: skip

    def _hand_out(self, row: dict[str, Any]) -> None:
        if row["type"] == "stream_token.revoked":
            # On every node at once: the revocation is in the log like any change.
            revoked = row["payload"].get("streamTokenId")
            for sub in [s for s in self.subscriptions if s.holder == revoked]:
                self._cut(sub, "The stream token was revoked.")
            return
        for sub in list(self.subscriptions):
            if row["project_id"] not in sub.projects:
                continue
            try:
                sub.queue.put_nowait(row)
            except asyncio.QueueFull:
                self._cut(sub, f"the client fell more than {QUEUE} events behind")
            else:
                sub.woken.set()

    def _cut(self, sub: Subscription, reason: str) -> None:
        sub.cut = reason
        sub.woken.set()
        self.subscriptions.discard(sub)

    # --- streams ---------------------------------------------------------------------------

    def subscribe(
        self, projects: Iterable[str], holder: str, *, per_holder: int | None = None
    ) -> Subscription:
        """A new stream of these projects' events; `per_holder` overrides the per-token cap
        (a browser session's tabs).

        Raises:
            StreamRefused: the process or the holder has as many streams as it may.
        """
        if len(self.subscriptions) >= self.max_streams:
            raise StreamRefused(
                f"This server holds {self.max_streams} live streams already; retry later or on "
                "another node.",
                503,
            )
        cap = self.per_token if per_holder is None else per_holder
        held = sum(1 for sub in self.subscriptions if sub.holder == holder)
        if held >= cap:
            raise StreamRefused(
                f"This token has {cap} live streams open on this server already; close one first.",
                429,
            )
        sub = Subscription(frozenset(projects), holder, self.cursor)
        self.subscriptions.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self.subscriptions.discard(sub)

    def close_all(self, reason: str) -> None:
        """End every stream (the server is stopping)."""
        for sub in list(self.subscriptions):
            self._cut(sub, reason)

    def close(self, sub: Subscription, reason: str) -> None:
        """End a stream from outside (its token was revoked)."""
        self._cut(sub, reason)
