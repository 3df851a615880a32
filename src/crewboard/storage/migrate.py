"""Run the Alembic migrations on a database, and compare the result with the table definitions."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from crewboard.storage.database import Database
from crewboard.storage.tables import metadata
from crewboard.storage.waits import LONG_IDLE_S, relax_waits

_MIGRATIONS = Path(__file__).parent / "migrations"
# Several nodes may start at once on one PostgreSQL server: one migrates, the others wait.
_PG_MIGRATION_LOCK = 0x63726577  # "crew"


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@functools.cache
def head_revision() -> str | None:
    """The newest revision this version's migrations reach. The scripts ship with the code, so
    they are read once per process: every CLI command asks, and reading them takes 0.25 s."""
    return ScriptDirectory.from_config(_config()).get_current_head()


def known_revisions() -> set[str]:
    """Every schema revision this version's migrations know."""
    return {script.revision for script in ScriptDirectory.from_config(_config()).walk_revisions()}


def current_revision(db: Database) -> str | None:
    with db.engine.connect() as conn:
        return revision_of(conn)


def stored_revision(db: Database) -> str | None:
    """The revision the database's `alembic_version` row names: one small read, for /readyz.

    Raises:
        DBAPIError: the database is out of reach, or has no schema at all.
    """
    with db.engine.connect() as conn:
        value = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        return None if value is None else str(value)


def revision_of(conn: Connection) -> str | None:
    """The schema revision as seen by this connection (inside its transaction)."""
    return MigrationContext.configure(conn).get_current_revision()


def upgrade(db: Database, revision: str = "head") -> tuple[str | None, str | None]:
    """Bring the schema to `revision`; return (before, after)."""
    with db.engine.connect() as conn:
        conn.execution_options(crewboard_write=True)
        with conn.begin():
            # A migration may rewrite big tables, and waits for another node's to end.
            relax_waits(conn, idle_in_transaction=LONG_IDLE_S, lock=True)
            if db.dialect == "postgresql":
                conn.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK}
                )
            before = MigrationContext.configure(conn).get_current_revision()
            command.upgrade(_config(conn), revision)
            after = MigrationContext.configure(conn).get_current_revision()
    return before, after


def downgrade(db: Database, revision: str) -> None:
    """Take the schema back to `revision` (tests of a migration's data repairs use it)."""
    with db.engine.connect() as conn:
        conn.execution_options(crewboard_write=True)
        with conn.begin():
            relax_waits(conn, idle_in_transaction=LONG_IDLE_S, lock=True)
            command.downgrade(_config(conn), revision)


# Made by the migrations outside tables.py: the text indexes of tasks, memory records, hand-ins
# and task comments (FTS5 tables on SQLite, GIN expression indexes on PostgreSQL). The schema
# comparison leaves them out; tests/integration/test_schema.py and test_search.py check them.
SEARCH_INDEX_OBJECTS = (
    "tasks_fts",
    "ix_tasks_search",
    "memory_fts",
    "ix_memory_records_search",
    "drafts_fts",
    "ix_drafts_search",
    "comments_fts",
    "ix_task_comments_search",
    "search_texts_fts",
    "ix_search_texts_search",
)
_FTS_TABLES = ("tasks_fts", "memory_fts", "drafts_fts", "comments_fts", "search_texts_fts")


def _include(_obj: Any, name: str | None, _type: str, reflected: bool, _compare_to: Any) -> bool:
    return not (reflected and name is not None and name.startswith(SEARCH_INDEX_OBJECTS))


def schema_differences(db: Database) -> list[Any]:
    """What differs between the migrated database and `tables.py` (empty when they agree)."""
    with db.engine.connect() as conn, conn.begin():
        # Reflecting every table is many small reads with Python work between them: on a
        # busy machine the gaps outlast the node's few seconds idle in a transaction.
        relax_waits(conn, idle_in_transaction=LONG_IDLE_S)
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_object": _include}
        )
        return list(compare_metadata(context, metadata))


def repair_search_index(db: Database) -> bool:
    """On SQLite, check the text indexes against their tables and rebuild any that differ.

    An FTS5 index refers to rows by rowid, which a restore from an SQL dump (or, on some
    SQLite versions, VACUUM) can renumber. Returns True when it had to rebuild. PostgreSQL's
    indexes are ordinary expression indexes and need nothing.
    """
    if db.dialect != "sqlite":
        return False
    rebuilt = False
    with db.engine.connect() as conn:
        conn.execution_options(crewboard_write=True)
        for index in _FTS_TABLES:
            with conn.begin():
                try:
                    conn.exec_driver_sql(
                        f"INSERT INTO {index}({index}, rank) VALUES ('integrity-check', 1)"
                    )
                except DBAPIError:
                    conn.exec_driver_sql(f"INSERT INTO {index}({index}) VALUES ('rebuild')")
                    rebuilt = True
    return rebuilt


def refresh_statistics(db: Database) -> None:
    """Give SQLite's query planner fresh table statistics (PostgreSQL's autovacuum does this).

    Without them SQLite picks the project index for a tag or text filter and walks every task
    of a large project. `analysis_limit` keeps it to a sample, fast on any size.
    """
    if db.dialect != "sqlite":
        return
    with db.engine.connect() as conn:
        conn.execution_options(crewboard_write=True)
        with conn.begin():
            conn.exec_driver_sql("PRAGMA analysis_limit=1000")
            conn.exec_driver_sql("ANALYZE")
