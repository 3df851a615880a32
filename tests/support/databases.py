"""Real databases for tests: a fresh SQLite file, or a fresh PostgreSQL database, per test.

Each backend is migrated once per session into a template; every test gets a copy of it
(a file copy for SQLite, `CREATE DATABASE … TEMPLATE` for PostgreSQL), so tests never share
rows and never pay for migrations one by one. A suite whose tests all start from the same
costly rows builds them once and gives each test a copy the same way (`new_copy`).
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy.engine import URL, Connection, make_url

from crewboard.storage import migrate
from crewboard.storage.database import Database

POSTGRES_ENV = "CREWBOARD_TEST_DATABASE_URL"
REQUIRE_POSTGRES_ENV = "CREWBOARD_REQUIRE_POSTGRES"


def postgres_url() -> URL | None:
    value = os.environ.get(POSTGRES_ENV)
    return make_url(value) if value else None


def postgres_required() -> bool:
    return os.environ.get(REQUIRE_POSTGRES_ENV) == "1"


def _libpq(url: URL, database: str | None = None) -> str:
    return url.set(drivername="postgresql", database=database or url.database).render_as_string(
        hide_password=False
    )


def postgres_unavailable_reason() -> str | None:
    """None when the server answers; else why the PostgreSQL tests cannot run."""
    url = postgres_url()
    if url is None:
        return f"{POSTGRES_ENV} is not set (e.g. postgresql+psycopg://postgres@127.0.0.1:5432/test)"
    try:
        with psycopg.connect(_libpq(url), connect_timeout=3):
            return None
    except psycopg.Error as error:
        return f"PostgreSQL at {url.render_as_string(hide_password=True)} is not reachable: {error}"


class PostgresDatabases:
    """Creates throw-away databases on the server named by CREWBOARD_TEST_DATABASE_URL.

    Copying the migrated template takes a good part of a second on a small machine, so a
    worker thread keeps a few copies ready while tests run. Dropping a database costs more
    than copying one (PostgreSQL 15 forces a checkpoint on each DROP DATABASE), so other
    threads drop used ones: a test then never waits for a drop before its copy is made.
    Several threads drop at once, so that drops waiting together can share a checkpoint: one
    thread alone fell so far behind the tests that a worker's last minute went on dropping
    what was left. The floor is the server's fsync of each new copy's files.
    """

    READY = 3  # copies of the template kept waiting
    DROPPERS = 4  # threads dropping used copies, each with its own connection

    def __init__(self, url: URL) -> None:
        self.url = url
        self.prefix = f"crewboard_test_{uuid.uuid4().hex[:8]}"
        self.template = f"{self.prefix}_template"
        self._created: set[str] = set()
        self._lock = threading.Lock()
        self._ready: queue.Queue[str | BaseException] = queue.Queue(maxsize=self.READY)
        self._to_drop: queue.Queue[str] = queue.Queue()
        self._stop = threading.Event()
        self._workers: list[threading.Thread] = []

    def _admin(self, sql: str) -> None:
        with psycopg.connect(_libpq(self.url), autocommit=True) as conn:
            conn.execute(sql)  # names are generated here, not user input

    def _name(self) -> str:
        name = f"{self.prefix}_{uuid.uuid4().hex[:10]}"
        with self._lock:
            self._created.add(name)
        return name

    def new_empty(self) -> URL:
        name = self._name()
        self._admin(f'CREATE DATABASE "{name}"')
        return self.url.set(database=name)

    def prepare_template(self) -> None:
        self._admin(f'CREATE DATABASE "{self.template}"')
        db = Database(self.url.set(database=self.template))
        try:
            migrate.upgrade(db)
        finally:
            db.dispose()
        self._workers = [
            threading.Thread(target=self._copy, name="pg-test-copies", daemon=True),
            *(
                threading.Thread(target=self._drop, name=f"pg-test-drops-{n}", daemon=True)
                for n in range(self.DROPPERS)
            ),
        ]
        for worker in self._workers:
            worker.start()

    def _copy(self) -> None:
        with psycopg.connect(_libpq(self.url), autocommit=True) as conn:
            while not self._stop.is_set():
                name = self._name()
                try:
                    conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"')
                except psycopg.Error as error:
                    self._ready.put(error)
                    return
                while not self._stop.is_set():
                    try:
                        self._ready.put(name, timeout=0.2)
                        break
                    except queue.Full:
                        continue

    def _drop(self) -> None:
        with psycopg.connect(_libpq(self.url), autocommit=True) as conn:
            while not (self._stop.is_set() and self._to_drop.empty()):
                try:
                    name = self._to_drop.get(timeout=0.2)
                except queue.Empty:
                    continue
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                with self._lock:
                    self._created.discard(name)

    def new_migrated(self) -> URL:
        ready = self._ready.get(timeout=60)
        if isinstance(ready, BaseException):
            raise ready
        return self.url.set(database=ready)

    def new_copy(self, source: URL) -> URL:
        """A new database holding what `source` holds; nobody may be connected to `source`."""
        name = self._name()
        self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{source.database}"')
        return self.url.set(database=name)

    def drop(self, url: URL) -> None:
        assert url.database is not None
        if any(worker.is_alive() for worker in self._workers[1:]):
            self._to_drop.put(url.database)
        else:
            self._admin(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)')
            with self._lock:
                self._created.discard(url.database)

    def drop_all(self) -> None:
        self._stop.set()  # the drop threads empty their queue, then end
        for worker in self._workers:
            worker.join(timeout=60)
        with self._lock:
            left = sorted(self._created)  # copies never used, and any a stuck thread left
        with ThreadPoolExecutor(self.DROPPERS) as pool:
            drops = [f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)' for name in left]
            list(pool.map(self._admin, drops))  # raises the first failure, as one by one did
        self._admin(f'DROP DATABASE IF EXISTS "{self.template}" WITH (FORCE)')


class SqliteDatabases:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.template = folder / "template.db"

    def new_empty(self) -> URL:
        return make_url(f"sqlite:///{self.folder / f'{uuid.uuid4().hex}.db'}")

    def prepare_template(self) -> None:
        db = Database(f"sqlite:///{self.template}")
        try:
            migrate.upgrade(db)
            with db.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            db.dispose()

    def new_migrated(self) -> URL:
        return self._copy_of(self.template)

    def new_copy(self, source: URL) -> URL:
        """A new database holding what `source` holds; its writes must be checkpointed (no
        connection open, or `PRAGMA wal_checkpoint(TRUNCATE)` after the last write)."""
        assert source.database is not None
        path = Path(source.database)
        wal = path.with_name(path.name + "-wal")
        assert not wal.exists() or wal.stat().st_size == 0, f"{wal} is not checkpointed"
        return self._copy_of(path)

    def _copy_of(self, source: Path) -> URL:
        path = self.folder / f"{uuid.uuid4().hex}.db"
        shutil.copyfile(source, path)
        return make_url(f"sqlite:///{path}")


class Reader:
    """One connection kept for a query a test repeats after every call it makes (a database
    fingerprint): each run sees what was committed before it, as on a fresh connection.

    Checking a connection out of the pool for each run (a ping on PostgreSQL, then BEGIN and
    ROLLBACK around the query) took four to eight times as long as the query itself, paid
    after each of thousands of fuzzed calls. On PostgreSQL the connection autocommits, so
    each statement has its own snapshot, as `Database.read` does there; on SQLite the read
    transaction is ended after each query, so the next one takes a new snapshot.
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self._conn: Connection | None = None

    def one(self, sql: str) -> tuple[Any, ...]:
        """The one row `sql` (a SELECT written here, not input) answers."""
        conn = self._connection()
        try:
            return tuple(conn.exec_driver_sql(sql).one())
        finally:
            if conn.in_transaction():
                conn.rollback()

    def all(self, sql: str) -> list[tuple[Any, ...]]:
        conn = self._connection()
        try:
            return [tuple(row) for row in conn.exec_driver_sql(sql)]
        finally:
            if conn.in_transaction():
                conn.rollback()

    def _connection(self) -> Connection:
        if self._conn is None or self._conn.closed:
            conn = self.db.engine.connect()
            if self.db.dialect == "postgresql":
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            self._conn = conn
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
