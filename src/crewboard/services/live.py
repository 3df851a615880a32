"""The live broker: one per process, it reads the event log once for all its open streams and
hands each stream the events of its projects, in id order (which is commit order: see
`UnitOfWork.write_events`).

The log is the source of truth. While a stream is open the broker reads it after its cursor
whenever it is woken: by a commit in this process (an event listener on the Database), by a
commit on another node (PostgreSQL NOTIFY on `crewboard_events`, heard by a LISTEN connection
in a thread), and at the latest every POLL seconds, so a lost notification delays an event by
at most that and loses nothing.

With no stream open the broker reads nothing per event: it only keeps the newest event id it
has heard of (a local commit's records, the id another node's NOTIFY carries), and looks at
the end of the log once a POLL only when it may have missed some (on SQLite, where another
process's commits ring no bell; after a LISTEN connection is made again; after a NOTIFY with
no id). A stream that subscribes then starts at that id (`subscribe`): every event after it
reaches the stream, from the broker's next read, once and in order, and a stream resuming
from an earlier id finds what came before in the log. The nodes of a cluster with no stream
open so do no work for each other's commits (issue 42).

Each stream has a bounded queue. A stream whose client reads too slowly to keep up fills it
and is cut, with a reason, rather than holding the broker (and so every other stream) back.

A stream lives as long as its credential: the log also carries the events that end one (a
token or stream token revoked, an OAuth approval revoked, a sign-out, a role removed), and
the broker of every node reads them like any other and cuts the streams they end, with the
reason (`ended_by`). They are control messages: one with no project reaches no stream as data.

Room is shared so that no one person can shut others out (`subscribe`): caps per credential,
per person and per project, slots kept on every project for its admins and on the node for
the web app's own streams.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from anyio import to_thread

from crewboard.services.supervisor import LoopHealth, Wakeup
from crewboard.storage.database import Database
from crewboard.storage.uow import EVENT_CHANNEL, EventRecord

log = logging.getLogger(__name__)

POLL = 1.0  # seconds: the longest an event waits when no wake-up reaches the broker
GATHER = 0.01  # seconds: the least time between two reads of the log
BATCH = 500  # events read at a time
QUEUE = 2000  # events a stream may have waiting before it is cut as too slow
# The defaults of the caps (the first, third and fifth are settings: CREWBOARD_LIVE_STREAMS…).
MAX_STREAMS = 500  # streams one process holds; a tenth kept for the web app's own streams
PER_TOKEN = 5  # streams one token (or stream token) may hold on one process
PER_PERSON = 20  # streams one person's tokens and stream tokens hold together on one process
PER_PERSON_WEB = 40  # web app streams one person's browser sessions hold together
PER_PROJECT = 100  # streams (other than the web app's) following one project on one process;
# a twentieth of them kept for the project's admins


class StreamRefused(Exception):
    """No room for another stream: `reason` says whose limit was reached, `limit` names it
    and `cap` is its number."""

    def __init__(self, reason: str, status: int, limit: str, cap: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.limit = limit
        self.cap = cap


SESSION = "ses:"  # how a browser session's credential id starts (see `Claim.credentials`)


@dataclass(frozen=True)
class Claim:
    """Who a new stream is for, what its room is counted against, and what ends it."""

    holder: str  # the credential the per-credential cap counts (a token, a browser session)
    person: str  # the user: the per-person caps, and the events that end a person's streams
    # Each credential whose end ends the stream, by id (`tok_…`, `grt_…`, `stk_…`, or
    # SESSION + a session's reference), with how the end names it ("the token").
    credentials: Mapping[str, str] = field(default_factory=dict)
    web: bool = False  # the web app's own stream: counted apart, with the slots kept for it
    admin_of: frozenset[str] = frozenset()  # its projects where it may use the admins' slots
    per_holder: int | None = None  # the per-credential cap when not PER_TOKEN (a browser's tabs)


@dataclass(eq=False)
class Subscription:
    """One open stream: its projects, its queue, and why it was cut (if it was)."""

    projects: frozenset[str]
    claim: Claim
    start: int  # the broker's cursor when it subscribed: the log holds what came before
    queue: asyncio.Queue[dict[str, Any]] = field(default_factory=lambda: asyncio.Queue(QUEUE))
    cut: str | None = None
    woken: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def holder(self) -> str:
        return self.claim.holder


# --- what ends a stream ----------------------------------------------------------------------

Row = dict[str, Any]


def _revoked(key: str) -> Callable[[Row, Subscription], str | None]:
    """The end of the credential whose id the event's payload holds under `key`."""

    def ends(row: Row, sub: Subscription) -> str | None:
        what = sub.claim.credentials.get(str(row["payload"].get(key)))
        return None if what is None else f"{what} was revoked"

    return ends


def _signed_out(row: Row, sub: Subscription) -> str | None:
    ended = row["payload"].get("sessionRef")
    return "you signed out" if ended and SESSION + ended in sub.claim.credentials else None


def _sessions_ended(row: Row, sub: Subscription) -> str | None:
    """A password change ends the person's other browser sessions (all but `keptSessionRef`)."""
    payload = row["payload"]
    if sub.claim.person != payload.get("userId"):
        return None
    kept = SESSION + str(payload.get("keptSessionRef"))
    ended = any(c.startswith(SESSION) and c != kept for c in sub.claim.credentials)
    return "your password was changed, which signed out your other sessions" if ended else None


def _role_removed(row: Row, sub: Subscription) -> str | None:
    payload = row["payload"]
    if sub.claim.person != payload.get("userId") or payload.get("projectId") not in sub.projects:
        return None
    return "your role on this project was removed"


def _role_changed(row: Row, sub: Subscription) -> str | None:
    """A stream that may have used an admins' slot ends when its person is no admin there."""
    payload = row["payload"]
    if (
        sub.claim.person != payload.get("userId")
        or payload.get("projectId") not in sub.claim.admin_of
        or payload.get("role") == "admin"
    ):
        return None
    return f"your role on this project changed to {payload.get('role')}; open the stream again"


def _project_deleted(row: Row, sub: Subscription) -> str | None:
    return "the project was deleted" if row["payload"].get("projectId") in sub.projects else None


# The events that end streams, and how each finds the streams it ends (with the reason).
ENDINGS: dict[str, Callable[[Row, Subscription], str | None]] = {
    "token.revoked": _revoked("tokenId"),
    "oauth.grant_revoked": _revoked("grantId"),
    "stream_token.revoked": _revoked("streamTokenId"),
    "user.signed_out": _signed_out,
    "user.password_changed": _sessions_ended,
    "project.member_removed": _role_removed,
    "project.member_set": _role_changed,
    "project.deleted": _project_deleted,
}


def _event_id(payload: str) -> int | None:
    """The newest event id a NOTIFY names (`UnitOfWork.write_events`); None when it names
    none (a node of an older version)."""
    return int(payload) if payload.isascii() and payload.isdigit() else None


def ended_by(row: Row, sub: Subscription) -> str | None:
    """Why this event ends this stream, or None when it does not."""
    ends = ENDINGS.get(row["type"])
    return None if ends is None else ends(row, sub)


class Broker:
    def __init__(
        self,
        db: Database,
        *,
        poll: float = POLL,
        max_streams: int = MAX_STREAMS,
        per_token: int = PER_TOKEN,
        per_person: int = PER_PERSON,
        per_project: int = PER_PROJECT,
    ) -> None:
        self.db = db
        self.poll = poll
        self.max_streams = max_streams
        self.web_kept = max(1, max_streams // 10)  # other doors stop short of these
        self.per_token = per_token
        self.per_person = per_person
        self.per_person_web = PER_PERSON_WEB
        self.per_project = per_project
        self.admin_kept = max(1, per_project // 20)
        self.cursor = 0
        self.subscriptions: set[Subscription] = set()
        self._wakeup = Wakeup()
        self._last_read = 0.0
        self._stopping = threading.Event()
        self._listener: threading.Thread | None = None
        self._also: dict[str, Callable[[str], None]] = {}  # other channels' listeners
        self._on_events: list[Callable[[], None]] = []  # told "events arrived" (`on_events`)
        self.listening = threading.Event()  # set while LISTEN is up (PostgreSQL)
        self._started = False  # the cursor is set (the first read of the log worked)
        # The newest event id heard of (local commits, NOTIFY payloads), from any thread: where
        # a stream that opens on an idle broker starts.
        self._seen = 0
        self._seen_lock = threading.Lock()
        self._unsure = True  # `_seen` may trail the log: the idle broker looks at its end
        db.add_event_listener(self._heard)

    @property
    def started(self) -> bool:
        """Whether the cursor is set (the first read of the log worked)."""
        return self._started

    # --- waking ----------------------------------------------------------------------------

    def _heard(self, events: list[EventRecord]) -> None:
        """A commit in this process (called in the writer's thread)."""
        if events:
            self._news(max(event.id for event in events))

    def _news(self, latest: int | None) -> None:
        """Events up to `latest` were committed (None: some were, ids unknown). The loop is
        woken only when a stream waits for them, or to learn the unknown id; otherwise the
        id is noted and nothing is read."""
        if latest is None:
            self._unsure = True
        else:
            with self._seen_lock:
                self._seen = max(self._seen, latest)
        # Noted before the look at the streams: a stream that subscribes after this look
        # starts at `latest` or later (`subscribe` adds itself, then reads `_seen`).
        if self.subscriptions or latest is None:
            self._wakeup.wake()
        for heard in self._on_events:
            heard()

    def wake(self) -> None:
        """Read the log now (a recovery, a LISTEN connection made again), and tell the
        other readers (`on_events`)."""
        self._wakeup.wake()
        for heard in self._on_events:
            heard()

    def on_events(self, heard: Callable[[], None]) -> None:
        """Call `heard` (from any thread, with no arguments) whenever the broker hears that
        events may have arrived: a local commit, another node's NOTIFY (PostgreSQL). Another
        reader of the log (the webhook dispatcher) wakes on it instead of listening itself."""
        self._on_events.append(heard)

    def listen_also(self, channel: str, heard: Callable[[str], None]) -> None:
        """Hand each NOTIFY on `channel` (PostgreSQL) to `heard`, with its payload, from the
        listening thread: other nodes' wake-ups that are not events (a bridge's code call).
        Call it before `run`; nothing happens on SQLite, where one node serves."""
        self._also[channel] = heard

    def _listen(self) -> None:
        """LISTEN for other nodes' commits (PostgreSQL), until the broker stops. A lost
        connection is made again every `poll` seconds (the broker polls meanwhile); the first
        failure of an outage is logged, and the recovery."""
        import psycopg  # noqa: PLC0415 - only with PostgreSQL

        url = self.db.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        failing = False
        while not self._stopping.is_set():
            try:
                with psycopg.connect(url, autocommit=True, **self.db.raw_connect_kwargs()) as conn:
                    for channel in (EVENT_CHANNEL, *self._also):
                        conn.execute(f"LISTEN {channel}")
                    self.listening.set()
                    if failing:
                        log.warning("live: listening for other nodes' commits again")
                        failing = False
                    self._unsure = True  # anything committed while it was not listening
                    self.wake()
                    while not self._stopping.is_set():
                        for note in conn.notifies(timeout=1.0):
                            heard = self._also.get(note.channel)
                            if heard is None:
                                self._news(_event_id(note.payload))
                            else:
                                heard(note.payload)
            except Exception as error:  # whatever it was, listen again later
                self.listening.clear()
                if not failing:
                    log.warning(
                        "live: the LISTEN connection failed (%s); polling the log until it is back",
                        type(error).__name__,
                    )
                    failing = True
                self._stopping.wait(self.poll)

    # --- the loop --------------------------------------------------------------------------

    async def run(self, health: LoopHealth | None = None) -> None:
        """Read and hand out events until cancelled (the app's lifespan runs this under its
        supervisor, which starts it again should it ever end).

        A read that fails (the database is out of reach) leaves the cursor at the last event
        handed out: the next read that works goes on from there, so open streams get every
        event once, late, and are not cut. Only cancellation (the server stopping) ends them.
        """
        health = health or LoopHealth("live")
        health.wake = self.wake
        loop = self._wakeup.bind()
        if self.db.dialect == "postgresql" and self._listener is None:
            self._listener = threading.Thread(target=self._listen, name="live-listen", daemon=True)
            self._listener.start()
        wait = 0.0 if not self._started else self.poll
        try:
            while True:
                await self._wakeup.wait(wait, clear=False)
                # Under a stream of commits, wake-ups come faster than reads are worth: read
                # at most every GATHER seconds, so one read hands out what came meanwhile.
                await asyncio.sleep(max(0.0, self._last_read + GATHER - loop.time()))
                self._wakeup.clear()
                self._last_read = loop.time()
                try:
                    await self._read_new()
                except Exception as error:  # back off; the cursor stays
                    # A commit here or another node's NOTIFY (heard once LISTEN is back)
                    # wakes the broker before the back-off ends.
                    wait = health.failed(error)
                    continue
                health.ok()
                wait = self.poll
        except asyncio.CancelledError:
            self._stopping.set()
            self.close_all("the server is shutting down")
            raise

    def _latest(self) -> int:
        return self.db.read(lambda uow: uow.events.latest_any())

    async def _read_new(self) -> None:
        if not self._started:  # the first read: the log before it is history, not news
            self.cursor = max(await to_thread.run_sync(self._latest), self._seen)
            self._started = True
            return
        if not self.subscriptions:
            # Nobody to hand events to: move to the end of the log, unless a stream joined
            # meanwhile (it joined at the cursor it found and must get what came after it).
            latest = await self._look_at_end()
            if not self.subscriptions:
                self.cursor = max(self.cursor, latest, self._seen)
                return
        while True:
            rows = await to_thread.run_sync(self._read, self.cursor)
            for row in rows:
                # A stream that joined an idle broker during the read moved the cursor on:
                # what it passed came before that stream (and there was no other).
                if row["id"] > self.cursor:
                    self.cursor = row["id"]
                    self._hand_out(row)
            if len(rows) < BATCH:
                return

    async def _look_at_end(self) -> int:
        """The newest id of the log, read only when `_seen` may trail it (else 0): each
        commit on PostgreSQL NOTIFYs its last id to every listening node."""
        if not self._unsure and self.listening.is_set():
            return 0
        self._unsure = False
        try:
            return await to_thread.run_sync(self._latest)
        except BaseException:
            self._unsure = True
            raise

    def _read(self, after: int) -> list[dict[str, Any]]:
        return self.db.read(lambda uow: uow.events.list_after(project_id=None, after_id=after,
                                                             limit=BATCH))  # fmt: skip

    def _hand_out(self, row: dict[str, Any]) -> None:
        if row["type"] in ENDINGS:
            # On every node at once: the end of a credential is in the log like any change.
            # The stream it ends is cut before the event is handed out: it never sees it.
            for sub in list(self.subscriptions):
                reason = ended_by(row, sub)
                if reason is not None:
                    self._cut(sub, f"The stream ended: {reason}.")
        if row["project_id"] is None:
            return  # a person's or the instance's event (a sign-out): no stream's data
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

    def subscribe(self, projects: Iterable[str], claim: Claim) -> Subscription:
        """A new stream of these projects' events for `claim`, if there is room for it.

        Raises:
            StreamRefused: the node, the credential, the person or a project has as many
                streams as it may (the limit named).
        """
        followed = frozenset(projects)
        self._check_room(followed, claim)
        sub = Subscription(followed, claim, self.cursor)
        idle = not self.subscriptions
        self.subscriptions.add(sub)
        if idle:
            # The idle broker read nothing per event: its cursor may be behind the newest id
            # heard of. Everything up to that is in the log, where a resuming stream finds
            # it; the broker's next read, woken by the next event, goes on from there.
            with self._seen_lock:
                self.cursor = max(self.cursor, self._seen)
            sub.start = self.cursor
        return sub

    def _check_room(self, projects: frozenset[str], claim: Claim) -> None:
        """Refuse the caller over its own share, never anyone else: a credential, a person,
        a project (less the admins' slots) each have a cap, and streams other than the web
        app's stop short of the slots kept for it."""
        subs = self.subscriptions
        if len(subs) >= self.max_streams:
            raise StreamRefused(
                f"This server holds {self.max_streams} live streams already; retry later or on "
                "another node.",
                503, "streamsPerNode", self.max_streams,
            )  # fmt: skip
        cap = self.per_token if claim.per_holder is None else claim.per_holder
        if sum(1 for sub in subs if sub.holder == claim.holder) >= cap:
            what = "browser session" if claim.web else "token"
            raise StreamRefused(
                f"This {what} has {cap} live streams open on this server already; close one "
                "first.",
                429, "streamsPerSession" if claim.web else "streamsPerToken", cap,
            )  # fmt: skip
        mine = [sub for sub in subs if sub.claim.person == claim.person]
        if claim.web:
            self._check_person(mine, True, self.per_person_web, "streamsPerPersonWeb")
            return
        self._check_person(mine, False, self.per_person, "streamsPerPerson")
        others = sum(1 for sub in subs if not sub.claim.web)
        if others >= self.max_streams - self.web_kept:
            raise StreamRefused(
                f"This server's live streams are taken ({self.max_streams - self.web_kept} "
                "outside the web app); retry later or on another node.",
                503, "streamsPerNode", self.max_streams - self.web_kept,
            )  # fmt: skip
        for project in sorted(projects):
            self._check_project(project, claim)

    def _check_person(self, mine: list[Subscription], web: bool, cap: int, limit: str) -> None:
        if sum(1 for sub in mine if sub.claim.web is web) >= cap:
            where = "in the web app" if web else "through tokens and stream tokens"
            raise StreamRefused(
                f"You have {cap} live streams open {where} on this server already (the "
                f"{limit} limit); close one first.",
                429, limit, cap,
            )  # fmt: skip

    def _check_project(self, project: str, claim: Claim) -> None:
        held = sum(1 for sub in self.subscriptions if not sub.claim.web and project in sub.projects)
        cap = self.per_project if project in claim.admin_of else self.per_project - self.admin_kept
        if held >= cap:
            kept = (
                ""
                if project in claim.admin_of
                else f" ({self.admin_kept} more are kept for its admins)"
            )
            raise StreamRefused(
                f"Project {project} has {held} live streams open on this server{kept} (the "
                "streamsPerProject limit); retry later.",
                429, "streamsPerProject", cap,
            )  # fmt: skip

    def unsubscribe(self, sub: Subscription) -> None:
        self.subscriptions.discard(sub)

    def close_all(self, reason: str) -> None:
        """End every stream (the server is stopping)."""
        for sub in list(self.subscriptions):
            self._cut(sub, reason)

    def close(self, sub: Subscription, reason: str) -> None:
        """End a stream from outside (its token was revoked)."""
        self._cut(sub, reason)
