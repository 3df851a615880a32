"""Engine set-up per backend and the transaction runner every use case goes through."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.pool import QueuePool

from crewboard.domain.clock import Clock, SystemClock
from crewboard.storage.uow import EventRecord, UnitOfWork
from crewboard.storage.waits import Waits, relax_waits

if TYPE_CHECKING:
    from crewboard.config import Settings

T = TypeVar("T")

EventListener = Callable[[list[EventRecord]], None]

SQLITE_BUSY_TIMEOUT_MS = 30_000
MAX_ATTEMPTS = 4
# A lost compare-and-set costs one re-read; on one hot row several writers may each win in
# turn before this one does, so it gets more tries than a unique-index race.
MAX_RACE_ATTEMPTS = 12
# PostgreSQL: unique_violation, serialization_failure, deadlock_detected.
_RETRYABLE_SQLSTATES = {"23505", "40001", "40P01"}


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

    @classmethod
    def from_settings(cls, settings: Settings) -> Database:
        """The configured database, with the settings' waits and this node's name."""
        name = f"crewboard:{settings.node_name}" if settings.node_name else ""
        waits = Waits(
            connect=settings.db_connect_timeout,
            statement=settings.db_statement_timeout,
            lock=settings.db_lock_timeout,
            idle_in_transaction=settings.db_idle_in_transaction_timeout,
            keepalives_idle=settings.db_keepalives_idle,
            tcp_user_timeout=settings.db_tcp_user_timeout,
            pool_recycle=settings.db_pool_recycle,
            application_name=name,
        )
        return cls(settings.resolved_database_url, blob_dir=settings.blob_dir, waits=waits)

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
            relax_waits(conn)  # an export may read for longer than a statement may run
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
        """The libpq parameters `psycopg.connect(url, **these)` takes besides the URL, for a
        connection outside the pool (the live broker's LISTEN): the same waits, keepalives
        and node name as the pool's connections."""
        return _connect_args(self.url, self.waits)

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    def pool_use(self) -> tuple[int, int] | None:
        """(size, checked out) of the connection pool; None for a pool that keeps no counts."""
        pool = self.engine.pool
        if not isinstance(pool, QueuePool):
            return None
        return pool.size(), pool.checkedout()

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
