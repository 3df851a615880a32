"""Bounded waits on PostgreSQL: every connection carries the node's timeouts and name; a lock
or a statement that runs over them fails cleanly and soon; a transaction left idle loses its
session and its locks; the long operations lift the limits for their own transaction only."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import select, update
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError

from crewboard.config import load_settings
from crewboard.storage import migrate
from crewboard.storage.database import Database
from crewboard.storage.identity import tables as identity
from crewboard.storage.uow import EVENT_LOCK, UnitOfWork
from crewboard.storage.waits import Waits
from tests.conftest import ONLY_POSTGRESQL
from tests.support.factories import make_user

pytestmark = ONLY_POSTGRESQL

NODE = "crewboard:waits-test"


@pytest.fixture
def tight(database_url: URL) -> Iterator[Database]:
    """A second node on the test's database, with waits short enough to run out in a test."""
    node = Database(
        database_url,
        waits=Waits(statement=1.0, lock=0.3, idle_in_transaction=0.5, application_name=NODE),
    )
    yield node
    node.dispose()


def sqlstate(error: DBAPIError) -> str | None:
    return getattr(error.orig, "sqlstate", None)


def settings_seen(conn: psycopg.Connection) -> tuple[object, ...]:
    row = conn.execute(
        "SELECT current_setting('statement_timeout'), current_setting('lock_timeout'), "
        "current_setting('idle_in_transaction_session_timeout'), "
        "current_setting('application_name')"
    ).fetchone()
    assert row is not None
    return tuple(row)


def test_every_connection_carries_the_waits_and_the_node_name(tight: Database) -> None:
    expected = ("1s", "300ms", "500ms", NODE)
    seen = tight.read(lambda uow: settings_seen(uow.conn.connection.dbapi_connection))
    assert seen == expected
    # The live broker's LISTEN connection, opened outside the pool, gets the same.
    server_side = tight.read(
        lambda uow: uow.conn.exec_driver_sql(
            "SELECT current_setting('tcp_keepalives_idle'), current_setting('tcp_user_timeout')"
        ).one()
    )
    assert tuple(server_side) == ("5", "10000")  # the server watches the node's socket too (ms)
    url = tight.url.set(drivername="postgresql").render_as_string(hide_password=False)
    raw = tight.raw_connect_kwargs()
    assert raw["keepalives"] == 1
    assert raw["tcp_user_timeout"] == 10_000
    with psycopg.connect(url, autocommit=True, **raw) as conn:
        assert settings_seen(conn) == expected


def test_the_settings_reach_every_connection(
    database_url: URL, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in {
        "DATABASE_URL": database_url.render_as_string(hide_password=False),
        "DATA_DIR": str(tmp_path),
        "NODE_NAME": "alpha",
        "DB_STATEMENT_TIMEOUT": "30",
        "DB_LOCK_TIMEOUT": "3",
        "DB_IDLE_IN_TRANSACTION_TIMEOUT": "2.5",
        "DB_TCP_USER_TIMEOUT": "7",
    }.items():
        monkeypatch.setenv(f"CREWBOARD_{name}", value)
    node = Database.from_settings(load_settings())
    try:
        seen = node.read(lambda uow: settings_seen(uow.conn.connection.dbapi_connection))
        assert node.raw_connect_kwargs()["tcp_user_timeout"] == 7000
    finally:
        node.dispose()
    assert seen == ("30s", "3s", "2500ms", "crewboard:alpha")


def test_a_parameter_in_the_database_url_wins_over_the_waits(database_url: URL) -> None:
    url = database_url.update_query_dict(
        {"application_name": "mine", "options": "-c lock_timeout=7000"}
    )
    node = Database(url)
    try:
        seen = node.read(lambda uow: settings_seen(uow.conn.connection.dbapi_connection))
    finally:
        node.dispose()
    assert seen == ("1min", "7s", "5s", "mine")


def test_a_write_waiting_on_a_row_lock_past_lock_timeout_fails_soon(
    db: Database, tight: Database
) -> None:
    owner = make_user(db, "owner@example.com")
    users = identity.users
    with db.engine.connect() as holder, holder.begin():
        holder.execute(select(users.c.id).where(users.c.id == owner.id).with_for_update())
        started = time.monotonic()
        with pytest.raises(DBAPIError) as failed:
            tight.write(
                lambda uow: uow.conn.execute(
                    update(users).where(users.c.id == owner.id).values(display_name="Late")
                )
            )
        waited = time.monotonic() - started
    assert sqlstate(failed.value) == "55P03"  # lock_not_available: the doors answer "retry"
    assert waited < 3  # one wait of lock_timeout, not retried
    found = db.read(lambda uow: uow.users.get(owner.id))
    assert found is not None
    assert found.display_name == owner.display_name


def test_a_write_waiting_on_the_event_lock_past_lock_timeout_fails_with_nothing_written(
    db: Database, tight: Database
) -> None:
    before = db.read(lambda uow: uow.events.latest_any())
    with db.engine.connect() as holder, holder.begin():
        UnitOfWork(holder, db.clock).serialize(EVENT_LOCK)
        with pytest.raises(DBAPIError) as failed:
            tight.write(lambda uow: uow.record_event("test.blocked", actor={}, payload={}))
    assert sqlstate(failed.value) == "55P03"
    assert db.read(lambda uow: uow.events.latest_any()) == before
    # The node's connection is usable again: the failed message's transaction was rolled back.
    tight.write(lambda uow: uow.record_event("test.after", actor={}, payload={}))
    assert db.read(lambda uow: uow.events.count(type_="test.after")) == 1


def test_a_statement_over_statement_timeout_is_cancelled(tight: Database) -> None:
    started = time.monotonic()
    with pytest.raises(DBAPIError) as failed:
        tight.read(lambda uow: uow.conn.exec_driver_sql("SELECT pg_sleep(5)").all())
    assert sqlstate(failed.value) == "57014"  # query_canceled
    assert time.monotonic() - started < 3


def test_a_transaction_left_idle_loses_its_session_and_its_row_locks(
    db: Database, tight: Database
) -> None:
    """A node that stops talking mid-write (here: its work waits on an event) has its session
    ended by the server, so another node's write on the same row goes through."""
    owner = make_user(db, "owner@example.com")
    users = identity.users
    locked, release = threading.Event(), threading.Event()
    outcome: list[BaseException | None] = []

    def stuck(uow: UnitOfWork) -> None:
        uow.conn.execute(update(users).where(users.c.id == owner.id).values(display_name="Cut"))
        uow.record_event("test.cut", actor={}, payload={})
        locked.set()
        release.wait(30)

    def run() -> None:
        try:
            tight.write(stuck)
            outcome.append(None)
        except BaseException as error:  # handed to the test's thread
            outcome.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    try:
        assert locked.wait(10)
        started = time.monotonic()
        db.write(
            lambda uow: uow.conn.execute(
                update(users).where(users.c.id == owner.id).values(display_name="Healthy")
            )
        )
        assert time.monotonic() - started < 5  # the idle timeout (0.5 s), not the release
    finally:
        release.set()
        worker.join(30)
    assert isinstance(outcome[0], DBAPIError)  # its session is gone: the write failed
    found = db.read(lambda uow: uow.users.get(owner.id))
    assert found is not None
    assert found.display_name == "Healthy"
    assert db.read(lambda uow: uow.events.count(type_="test.cut")) == 0


def test_long_operations_lift_the_limits_for_their_own_transaction(tight: Database) -> None:
    """An export's snapshot and an import's write may run statements longer than the node's
    statement timeout and pause longer between them than its idle timeout."""

    def long_read(uow: UnitOfWork) -> None:
        uow.conn.exec_driver_sql("SELECT pg_sleep(1.2)").all()
        time.sleep(0.8)  # the Python work between two statements of an export
        uow.conn.exec_driver_sql("SELECT 1").all()

    def long_write(uow: UnitOfWork) -> None:
        uow.long_transaction()
        long_read(uow)
        uow.record_event("test.imported", actor={}, payload={})

    tight.snapshot(long_read)
    tight.write(long_write)
    assert tight.read(lambda uow: uow.events.count(type_="test.imported")) == 1
    # The next transaction on the same pooled connections has the node's limits again.
    with pytest.raises(DBAPIError):
        tight.read(lambda uow: uow.conn.exec_driver_sql("SELECT pg_sleep(1.2)").all())


def test_the_schema_comparison_may_pause_longer_than_the_idle_timeout(
    tight: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reflecting every table is many reads with Python work between them; on a loaded machine
    a gap outlasted the node's idle timeout and the server ended the comparison's session."""
    compare = migrate.compare_metadata

    def slow_compare(context: Any, tables: Any) -> list[Any]:
        found = list(compare(context, tables))
        time.sleep(0.8)  # longer than `tight`'s 0.5 s idle in a transaction
        return found

    monkeypatch.setattr(migrate, "compare_metadata", slow_compare)
    assert migrate.schema_differences(tight) == []
