"""The unit of work: one connection in one transaction, with the repositories bound to it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, text

from crewboard.domain.clock import Clock
from crewboard.storage import schema
from crewboard.storage.blobs import BlobStore, blob_store
from crewboard.storage.board.tasks import TaskRepository
from crewboard.storage.events import EventRepository
from crewboard.storage.identity.tokens import TokenRepository
from crewboard.storage.identity.users import UserRepository
from crewboard.storage.ledger import IdempotencyRepository
from crewboard.storage.projects.projects import ProjectRepository
from crewboard.storage.projects.state import StateRepository
from crewboard.storage.projects.team import TeamRepository
from crewboard.storage.projects.workspaces import WorkspaceRepository
from crewboard.storage.sequences import SequenceRepository
from crewboard.storage.types import UTCDateTime
from crewboard.storage.waits import LONG_IDLE_S, relax_waits

_INSERT_EVENT = schema.events.insert()  # built once: every write records an event
# Held from the event inserts to the commit, within one message to the server (PostgreSQL).
EVENT_LOCK = "crewboard.events"
EVENT_CHANNEL = "crewboard_events"  # NOTIFY'd with each commit that wrote events (its last id)


@dataclass(frozen=True)
class EventRecord:
    """An event row as written; the broker hands these out after the commit."""

    id: int
    project_id: str | None
    workspace_id: str | None
    type: str
    actor: dict[str, Any]
    payload: dict[str, Any]
    created_at: datetime


class UnitOfWork:
    """Repositories over one transaction. `Database.read`/`Database.write` own begin and commit."""

    def __init__(
        self,
        conn: Connection,
        clock: Clock,
        blob_dir: Path | None = None,
        hooks: dict[str, object] | None = None,
    ) -> None:
        self.conn = conn
        # What a higher area registered for a lower one to call (dependency inversion: the
        # board calls the specs' tasks.md hook without importing specs), shared by the
        # Database's units of work. Each area types its own entry.
        self.hooks: dict[str, object] = hooks if hooks is not None else {}
        self.clock = clock
        self.now = clock.now()
        self.blobs: BlobStore = blob_store(conn, self.now, blob_dir)
        self.users = UserRepository(conn)
        self.workspaces = WorkspaceRepository(conn)
        self.projects = ProjectRepository(conn)
        self.tokens = TokenRepository(conn)
        self.idempotency = IdempotencyRepository(conn)
        self.events = EventRepository(conn)
        self.state = StateRepository(conn)
        self.team = TeamRepository(conn)
        self.tasks = TaskRepository(conn)
        self.sequences = SequenceRepository(conn)
        self.recorded_events: list[EventRecord] = []
        self._pending_events: list[dict[str, Any]] = []
        self._before_commit: dict[str, Callable[[], None]] = {}

    def before_commit(self, name: str, run: Callable[[], None]) -> Callable[[], None]:
        """Have `run` called once when the use case is done, still in its transaction (a
        write's Database runs them just before the commit). The first one registered under
        `name` stays, and is returned: later callers add to it."""
        return self._before_commit.setdefault(name, run)

    def run_before_commit(self) -> None:
        """Call what `before_commit` registered, in order (and what those register)."""
        done: set[str] = set()
        while pending := [name for name in self._before_commit if name not in done]:
            for name in pending:
                done.add(name)
                self._before_commit[name]()

    def long_transaction(self) -> None:
        """This transaction may take long (an import): on PostgreSQL no statement timeout for
        it, and `LONG_IDLE_S` seconds between statements instead of the node's few."""
        relax_waits(self.conn, idle_in_transaction=LONG_IDLE_S)

    def serialize(self, name: str) -> None:
        """Hold a lock named `name` until this transaction ends: such transactions run one by one.

        SQLite write transactions already run one at a time (BEGIN IMMEDIATE); PostgreSQL takes
        a transaction-scoped advisory lock.
        """
        if self.conn.dialect.name == "postgresql":
            self.conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _lock_key(name)})

    def record_event(
        self,
        type_: str,
        *,
        actor: dict[str, Any],
        payload: dict[str, Any],
        project_id: str | None = None,
        workspace_id: str | None = None,
    ) -> None:
        """An event of this transaction: written with its others just before the commit (see
        `write_events`); listeners hear of it only after the commit."""
        task = payload.get("task")
        self._pending_events.append(
            {
                "project_id": project_id,
                "workspace_id": workspace_id,
                "type": type_,
                "actor": actor,
                "payload": payload,
                "created_at": self.now,
                "task_id": payload.get("taskId")
                or (task.get("id") if isinstance(task, dict) else None),
                # A decision about a hand-in belongs to the hand-in's token, an answer to the
                # token that asked ("mine" for it).
                "token_id": payload.get("handInTokenId")
                or payload.get("askedByTokenId")
                or actor.get("tokenId"),
            }
        )

    def write_events(self, *, commit: bool = False) -> None:
        """Insert this transaction's events, last thing before the commit; with `commit`, on
        PostgreSQL, commit too (and only then is the commit order of ids guaranteed).

        Event ids must follow commit order, so that a reader that has seen event N never
        later finds a smaller id committed after it (a live stream resumes "after N"). On
        PostgreSQL ids are drawn when the row is inserted, not when it commits, so the
        inserts and the commit run under one lock (`EVENT_LOCK`) that every project shares.
        That lock is never held across a round trip to the server: `commit` sends the lock,
        the inserts (RETURNING their ids), the wake-up for other nodes (NOTIFY) and COMMIT as
        ONE message, which the server reads whole before it runs it. A node cut off from the
        database can stop that message from arriving (then it took nothing) or stop the
        answer from coming back (then it committed), never leave the lock held.

        Without `commit` the events are inserted one by one and no lock is taken: SQLite runs
        writes one at a time anyway, and a rehearsal (`Database.rehearse`) rolls them back."""
        if not self._pending_events:
            return
        if commit and self.conn.dialect.name == "postgresql":
            self._commit_events_postgresql()
            return
        for row in self._pending_events:
            event_id = self.conn.execute(_INSERT_EVENT, row).inserted_primary_key
            assert event_id is not None  # noqa: S101 - an insert into a table with a primary key
            self._recorded(int(event_id[0]), row)
        self._pending_events.clear()

    def _recorded(self, event_id: int, row: dict[str, Any]) -> None:
        self.recorded_events.append(
            EventRecord(
                id=event_id, **{k: v for k, v in row.items() if k not in ("task_id", "token_id")}
            )
        )

    def _commit_events_postgresql(self) -> None:
        """The lock, the inserts, NOTIFY and COMMIT in one simple-protocol query. psycopg's
        ClientCursor binds the values on this side, with its own quoting (never formatted
        into the text by hand). The driver then finds the connection idle, so the commit that
        follows (SQLAlchemy's) does nothing."""
        import psycopg  # noqa: PLC0415 - only with PostgreSQL
        from psycopg.types.json import Json  # noqa: PLC0415 - only with PostgreSQL

        pending = self._pending_events
        statements = ["SELECT pg_advisory_xact_lock(%s)"]
        params: list[Any] = [_lock_key(EVENT_LOCK)]
        for row in pending:
            statements.append(_INSERT_EVENT_SQL)
            params += [
                Json(row["actor"]),
                Json(row["payload"]),
                _UTC.process_bind_param(row["created_at"], self.conn.dialect),
                *(row[name] for name in _PLAIN_COLUMNS),
            ]
        # The wake-up names the newest id (the last insert's, drawn under the lock): a node
        # with no live stream notes it instead of reading the log (`services/live.py`).
        statements += [f"SELECT pg_notify('{EVENT_CHANNEL}', lastval()::text)", "COMMIT"]
        driver = self.conn.connection.dbapi_connection
        assert isinstance(driver, psycopg.Connection)  # noqa: S101 - the psycopg dialect
        # Through SQLAlchemy, so a failure arrives as its DBAPIError (retries, outages) and a
        # lost connection is invalidated; a ClientCursor, so the query is one simple query.
        usual = driver.cursor_factory
        driver.cursor_factory = psycopg.ClientCursor
        try:
            result = self.conn.exec_driver_sql("; ".join(statements), tuple(params))
        finally:
            driver.cursor_factory = usual
        ids: list[int] = []
        try:
            cursor = result.cursor
            for _row in pending:  # the first result is the lock's; one per insert follows
                cursor.nextset()
                found = cursor.fetchone()
                assert found is not None  # noqa: S101 - INSERT … RETURNING answers its row
                ids.append(int(found[0]))
        finally:
            result.close()
        for event_id, row in zip(ids, pending, strict=True):
            self._recorded(event_id, row)
        self._pending_events.clear()


def _lock_key(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


_PLAIN_COLUMNS = ("project_id", "workspace_id", "type", "task_id", "token_id")
_EVENT_COLUMNS = ("actor", "payload", "created_at", *_PLAIN_COLUMNS)  # the order of the values
_UTC = UTCDateTime()  # created_at: aware, in UTC
_INSERT_EVENT_SQL = (
    f"INSERT INTO {schema.events.name} ({', '.join(_EVENT_COLUMNS)}) "
    f"VALUES ({', '.join(['%s'] * len(_EVENT_COLUMNS))}) RETURNING id"
)
