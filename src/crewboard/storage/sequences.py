"""Per-project counters: the next task number (and any later per-project sequence)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, bindparam
from sqlalchemy.dialects import postgresql, sqlite

from crewboard.storage import schema

TASK_NUMBERS = "task"  # the counter behind task keys (CRW-12)
# How many tasks the project holds: kept by triggers on tasks (migration 0009), never by code.
TASK_COUNT = "task_count"


def _take_next(dialect: Any) -> Any:
    table = schema.project_sequences
    statement = dialect.insert(table).values(
        project_id=bindparam("project_id"), name=bindparam("name"), value=1
    )
    return statement.on_conflict_do_update(
        index_elements=[table.c.project_id, table.c.name],
        set_={"value": table.c.value + 1},
    ).returning(table.c.value)


# Built once per dialect (False: SQLite, True: PostgreSQL): every task create runs it.
_TAKE_NEXT = {False: _take_next(sqlite), True: _take_next(postgresql)}


class SequenceRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def take_next(self, project_id: str, name: str) -> int:
        """The next value of the project's counter `name`, counting from 1.

        One `INSERT … ON CONFLICT DO UPDATE … RETURNING`: on PostgreSQL the counter row stays
        locked until this transaction ends, so a concurrent writer waits and then reads the
        value this one committed (no unique violation, no retry); on SQLite writers already
        run one at a time. A rolled-back transaction gives its number back.
        """
        statement = _TAKE_NEXT[self.conn.dialect.name == "postgresql"]
        return int(
            self.conn.execute(statement, {"project_id": project_id, "name": name}).scalar_one()
        )
