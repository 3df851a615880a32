"""Alembic environment: run with a connection from `crewboard.storage.migrate`, or from a URL.

For a new migration (see CONTRIBUTING.md):
    CREWBOARD_DATABASE_URL=sqlite:///./.crewboard/dev.db \
        .venv/bin/alembic -c src/crewboard/storage/alembic.ini revision --autogenerate -m "..."
"""

from __future__ import annotations

import os
from typing import Any

from alembic import context
from sqlalchemy import Connection, create_engine

from crewboard.storage.migrate import SEARCH_INDEX_OBJECTS
from crewboard.storage.tables import metadata


def _include(_obj: Any, name: str | None, _type: str, reflected: bool, _compare_to: Any) -> bool:
    # The text indexes are made by hand in their migrations (FTS5 tables / GIN expressions).
    return not (reflected and name is not None and name.startswith(SEARCH_INDEX_OBJECTS))


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=True,  # SQLite alters tables by copying them
        compare_type=True,
        include_object=_include,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = os.environ.get("CREWBOARD_DATABASE_URL") or context.config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise SystemExit("set CREWBOARD_DATABASE_URL to the database to compare against")
    engine = create_engine(url)
    with engine.begin() as conn:
        _run(conn)
    engine.dispose()


run_migrations_online()
