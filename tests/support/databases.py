"""Real databases for tests: a fresh SQLite file, or a fresh PostgreSQL database, per test.

Each backend is migrated once per session into a template; every test gets a copy of it
(a file copy for SQLite, `CREATE DATABASE … TEMPLATE` for PostgreSQL), so tests never share
rows and never pay for migrations one by one.
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
import uuid
from pathlib import Path

import psycopg
from sqlalchemy.engine import URL, make_url

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
    than copying one (PostgreSQL 15 forces a checkpoint on each DROP DATABASE), so a second
    thread drops used ones: a test then never waits for a drop before its copy is made.
    """

    READY = 3  # copies of the template kept waiting

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
            threading.Thread(target=self._drop, name="pg-test-drops", daemon=True),
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

    def drop(self, url: URL) -> None:
        assert url.database is not None
        if self._workers and self._workers[1].is_alive():
            self._to_drop.put(url.database)
        else:
            self._admin(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)')
            with self._lock:
                self._created.discard(url.database)

    def drop_all(self) -> None:
        self._stop.set()
        for worker in self._workers:
            worker.join(timeout=60)
        with self._lock:
            left = sorted(self._created)
        for name in [*left, self.template]:
            self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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
        path = self.folder / f"{uuid.uuid4().hex}.db"
        shutil.copyfile(self.template, path)
        return make_url(f"sqlite:///{path}")
