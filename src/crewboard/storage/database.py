"""Engine set-up per backend and the transaction runner every use case goes through."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError

from crewboard.domain.clock import Clock, SystemClock
from crewboard.storage.uow import EventRecord, UnitOfWork

T = TypeVar("T")

EventListener = Callable[[list[EventRecord]], None]

SQLITE_BUSY_TIMEOUT_MS = 30_000
MAX_ATTEMPTS = 4
# A lost compare-and-set costs one re-read; on one hot row several writers may each win in
# turn before this one does, so it gets more tries than a unique-index race.
MAX_RACE_ATTEMPTS = 12
# PostgreSQL: unique_violation, serialization_failure, deadlock_detected.
_RETRYABLE_SQLSTATES = {"23505", "40001", "40P01"}


@dataclass(frozen=True)
class Waits:
    """How long a node waits on PostgreSQL before it gives up, in seconds (0: no limit, for
    the three server-side timeouts). The defaults are the settings' (`Settings.db_*`).

    A node cut off from the database must not hold what other nodes wait for: its open
    transaction (and the row locks in it) ends `idle_in_transaction` seconds after its last
    statement, the server ends a statement after `statement`, and a statement waiting for a
    lock gives up after `lock`. On the node's side `connect` bounds a new connection, and TCP
    keepalives and `tcp_user_timeout` notice a peer that went silent.
    """

    connect: float = 5.0
    statement: float = 60.0
    lock: float = 10.0
    idle_in_transaction: float = 5.0
    keepalives_idle: float = 5.0
    keepalives_interval: float = 2.0
    keepalives_count: int = 3
    tcp_user_timeout: float = 10.0
    pool_recycle: float = 1800.0
    # Shown in pg_stat_activity; "" gives crewboard:<host name>:<process id>.
    application_name: str = ""

    def libpq_params(self) -> dict[str, Any]:
        """These waits as libpq connection parameters (what psycopg.connect takes)."""
        server = {
            "statement_timeout": self.statement,
            "lock_timeout": self.lock,
            "idle_in_transaction_session_timeout": self.idle_in_transaction,
        }
        options = " ".join(f"-c {name}={_ms(seconds)}" for name, seconds in server.items())
        name = self.application_name or f"crewboard:{socket.gethostname()}:{os.getpid()}"
        return {
            "connect_timeout": max(1, round(self.connect)),
            "keepalives": 1,
            "keepalives_idle": max(1, round(self.keepalives_idle)),
            "keepalives_interval": max(1, round(self.keepalives_interval)),
            "keepalives_count": max(1, self.keepalives_count),
            "tcp_user_timeout": _ms(self.tcp_user_timeout),
            "application_name": name[:63],  # PostgreSQL keeps 63 bytes (NAMEDATALEN - 1)
            "options": options,
        }


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def relax_waits(conn: Connection, *, idle_in_transaction: float = 0.0, lock: bool = False) -> None:
    """Lift the statement timeout of `conn`'s transaction on PostgreSQL (SET LOCAL: it ends
    with the transaction), and give it `idle_in_transaction` seconds (0: no limit) between
    statements instead of the node's few; with `lock`, no lock timeout either.

    For the long operations: an export or a backup snapshot (read-only: it holds no row
    lock, and a backup's transaction waits for pg_dump), an archive import and the
    migrations (writes, so they keep a bound between statements). A no-op on SQLite."""
    if conn.dialect.name != "postgresql":
        return
    conn.exec_driver_sql("SET LOCAL statement_timeout = 0")
    conn.exec_driver_sql(
        f"SET LOCAL idle_in_transaction_session_timeout = {_ms(idle_in_transaction)}"
    )
    if lock:
        conn.exec_driver_sql("SET LOCAL lock_timeout = 0")


class LostRace(Exception):
    """A compare-and-set write found its row changed by a transaction that committed after
    this one read it (PostgreSQL runs writers concurrently under READ COMMITTED).

    `Database.write` runs the whole unit of work again, so it decides afresh on what is now
    committed; `outcome` is raised instead once the attempts run out.
    """

    def __init__(self, outcome: Exception) -> None:
        super().__init__(str(outcome))
        self.outcome = outcome


class Database:
    """One engine and the rules for running a unit of work on it.

    Writes on SQLite take the write lock at BEGIN (`BEGIN IMMEDIATE`), so two writers never
    fail halfway through on a lock upgrade. A write that loses a race on a unique index (two
    first uses of one idempotency key, two projects with one key) is run again from the
    start: on the second run the service sees the winner's row and answers from it.
    """

    def __init__(
        self,
        url: str | URL,
        *,
        clock: Clock | None = None,
        blob_dir: Path | None = None,
        waits: Waits | None = None,
    ) -> None:
        self.url = make_url(url)
        self.clock: Clock = clock or SystemClock()
        # Blob bytes in files under this folder; None keeps them in the database.
        self.blob_dir = blob_dir
        self.waits = waits or Waits()
        self.engine = _create_engine(self.url, self.waits)
        # PostgreSQL reads run without BEGIN and COMMIT (see `read`).
        self._reads_autocommit = self.engine.dialect.name == "postgresql"
        self._read_engine = self.engine.execution_options(isolation_level="AUTOCOMMIT")
        self._listeners: list[EventListener] = []
        # Services a higher area registers for a lower one to call (UnitOfWork.hooks).
        self.hooks: dict[str, object] = {}

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def add_event_listener(self, listener: EventListener) -> None:
        """Call `listener` with the events of each committed write, after the commit."""
        self._listeners.append(listener)

    def remove_event_listener(self, listener: EventListener) -> None:
        """Stop calling `listener` (a no-op when it is not listening)."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def read(self, work: Callable[[UnitOfWork], T]) -> T:
        """Run `work`, which only reads.

        On PostgreSQL it runs outside a transaction: under READ COMMITTED each statement sees
        its own snapshot either way, so BEGIN and COMMIT were two round trips a read that
        bought nothing (a search of 100,000 tasks in process: 0.35 ms less a call, token
        check included). On SQLite the read transaction is one snapshot for the whole read,
        and stays."""
        if self._reads_autocommit:
            with self._read_engine.connect() as conn:
                return work(UnitOfWork(conn, self.clock, self.blob_dir, self.hooks))
        with self.engine.connect() as conn, conn.begin():
            return work(UnitOfWork(conn, self.clock, self.blob_dir, self.hooks))

    def snapshot(self, work: Callable[[UnitOfWork], T]) -> T:
        """Run `work`, a long read that must see one moment (an export): a read-only
        REPEATABLE READ transaction on PostgreSQL, a read transaction on SQLite (in WAL mode
        one snapshot from its first read), while writers go on."""
        engine = self.engine
        if self.dialect == "postgresql":
            engine = engine.execution_options(
                isolation_level="REPEATABLE READ", postgresql_readonly=True
            )
        with engine.connect() as conn, conn.begin():
            return work(UnitOfWork(conn, self.clock, self.blob_dir, self.hooks))

    def write(self, work: Callable[[UnitOfWork], T]) -> T:
        """Run `work` in one write transaction; publish its events once it has committed."""
        attempt = 0
        while True:
            attempt += 1
            try:
                result, recorded = self._write_once(work)
            except DBAPIError as error:
                if attempt < MAX_ATTEMPTS and _is_retryable(error):
                    continue
                raise
            except LostRace as race:
                if attempt < MAX_RACE_ATTEMPTS:
                    continue
                raise race.outcome from None
            for listener in tuple(self._listeners):
                listener(recorded)
            return result

    def rehearse(self, work: Callable[[UnitOfWork], T]) -> T:
        """Run `work` exactly as `write` would (its write lock, its before-commit hooks), then
        roll it all back: a dry run whose answer is what the write would have answered. No
        event is published, and nothing is retried. Its events are inserted without the
        event lock (they are never committed, so their order does not matter)."""
        with self.engine.connect() as conn:
            conn.execution_options(crewboard_write=True)
            transaction = conn.begin()
            try:
                uow = UnitOfWork(conn, self.clock, self.blob_dir, self.hooks)
                result = work(uow)
                uow.run_before_commit()
                uow.write_events()
                return result
            finally:
                transaction.rollback()

    def _write_once(self, work: Callable[[UnitOfWork], T]) -> tuple[T, list[EventRecord]]:
        with self.engine.connect() as conn:
            conn.execution_options(crewboard_write=True)
            with conn.begin():
                # The clock is read once the write lock is held, so on SQLite the times of
                # successive writes follow the order they commit in.
                uow = UnitOfWork(conn, self.clock, self.blob_dir, self.hooks)
                result = work(uow)
                uow.run_before_commit()
                # On PostgreSQL a write with events commits here, in the message that takes
                # the event lock (see `write_events`); leaving the block then commits nothing.
                uow.write_events(commit=True)
            return result, uow.recorded_events

    def raw_connect_kwargs(self) -> dict[str, Any]:
        """What `psycopg.connect` takes to open a connection of this database outside the
        pool (the live broker's LISTEN), with the same waits, keepalives and name as the
        pool's: the URL as `conninfo`, and the libpq parameters."""
        url = self.url.set(drivername="postgresql")
        return {
            "conninfo": url.render_as_string(hide_password=False),
            **_connect_args(url, self.waits),
        }

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    def dispose(self) -> None:
        self.engine.dispose()


def _create_engine(url: URL, waits: Waits) -> Engine:
    if url.get_backend_name() != "sqlite":
        return create_engine(
            url,
            pool_pre_ping=True,
            pool_size=10,
            max_overflow=20,
            pool_recycle=waits.pool_recycle,
            connect_args=_connect_args(url, waits)
            if url.get_backend_name() == "postgresql"
            else {},
        )
    if url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, pool_size=10, max_overflow=20, pool_timeout=60)
    event.listen(engine, "connect", _configure_sqlite_connection)
    event.listen(engine, "begin", _begin_sqlite_transaction)
    return engine


def _connect_args(url: URL, waits: Waits) -> dict[str, Any]:
    """The waits as libpq parameters, under what the URL's own query sets: a parameter in the
    URL wins, and its `options` come after ours (a later -c wins)."""
    params = waits.libpq_params()
    given = {key: value for key, value in url.query.items() if key in params}
    if "options" in given:
        given["options"] = f"{params['options']} {given['options']}"
    return {**params, **given}


def _configure_sqlite_connection(dbapi_conn: Any, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself, so writes can say IMMEDIATE.
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _begin_sqlite_transaction(conn: Any) -> None:
    write = conn.get_execution_options().get("crewboard_write", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _is_retryable(error: DBAPIError) -> bool:
    sqlstate = getattr(error.orig, "sqlstate", None)
    if sqlstate is not None:
        return sqlstate in _RETRYABLE_SQLSTATES
    return isinstance(error, IntegrityError) and "UNIQUE constraint failed" in str(error.orig)
