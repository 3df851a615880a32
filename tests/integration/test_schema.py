"""The migrations build exactly the schema that tables.py describes, on each backend."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect
from sqlalchemy.engine import URL

from crewboard.contract.projects.present import create_project
from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage import migrate
from crewboard.storage.database import Database
from crewboard.storage.tables import metadata
from tests.support import task_reads as task_queries
from tests.support.factories import make_user


def test_migrated_schema_equals_the_table_definitions(empty_database_url: URL) -> None:
    db = Database(empty_database_url)
    try:
        before, after = migrate.upgrade(db)
        assert before is None
        assert after == migrate.head_revision()
        assert migrate.schema_differences(db) == []
        tables = {
            name
            for name in inspect(db.engine).get_table_names()
            if name != "alembic_version" and not name.startswith(migrate.SEARCH_INDEX_OBJECTS)
        }
        assert tables == set(metadata.tables)
    finally:
        db.dispose()


def test_migrating_twice_changes_nothing(empty_database_url: URL) -> None:
    db = Database(empty_database_url)
    try:
        migrate.upgrade(db)
        before, after = migrate.upgrade(db)
        assert before == after == migrate.head_revision()
    finally:
        db.dispose()


def test_sqlite_connections_use_wal_foreign_keys_and_a_busy_timeout(db: Database) -> None:
    if db.dialect != "sqlite":
        pytest.skip("SQLite connection settings only")
    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000


def test_the_task_text_index_exists_on_each_backend(db: Database) -> None:
    names = inspect(db.engine).get_table_names()
    if db.dialect == "sqlite":
        assert "tasks_fts" in names
    else:
        with db.engine.connect() as conn:
            found = conn.exec_driver_sql(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_tasks_search'"
            ).scalar_one()
        assert "using gin" in found.lower()
        assert "to_tsvector('simple'" in found


def test_a_renumbered_sqlite_task_table_gets_its_search_index_rebuilt(db: Database) -> None:
    if db.dialect != "sqlite":
        pytest.skip("the SQLite FTS5 index only")
    owner = person_actor(make_user(db, "owner@example.com"))
    create_project(db, owner, workspace_id=None, key="CRW", name="Crew")
    for title in ("alpha login", "beta redirect"):
        tasks.create_task(
            db, owner, project="CRW", workspace_id=None, idempotency_key=title, title=title
        )
    assert migrate.repair_search_index(db) is False
    with db.engine.begin() as conn:  # what a restore from an SQL dump can do to rowids
        conn.exec_driver_sql("UPDATE tasks SET rowid = rowid + 1000")
    assert migrate.repair_search_index(db) is True
    rows = task_queries.list_tasks(db, owner, q="redirect").rows
    assert [r["title"] for r in rows] == ["beta redirect"]
