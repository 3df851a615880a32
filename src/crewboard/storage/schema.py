"""The schema's shared parts: the metadata every table is defined on, its naming convention,
the id and event-id column types, and the tables no one area owns (the idempotency ledger, the
event log, per-project sequences). Each area's tables live in `storage/<area>/tables.py`;
`storage/tables.py` gathers them all.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from crewboard.storage.types import UTCDateTime

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = sa.MetaData(naming_convention=NAMING)

ID = 32  # prefixed ids: "prj_" + 22 characters

# SQLite only autoincrements an INTEGER PRIMARY KEY; BIGINT elsewhere.
EventId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


# Column factories for the conventions every area's tables share. `required` and `optional`
# spell out nullability (SQLAlchemy's own default, nullable, is easy to miss); `ref` is an id
# pointing at another table's id, deleted with it unless told otherwise.
def required(name: str, type_: Any, **options: Any) -> sa.Column[Any]:
    """A NOT NULL column."""
    return sa.Column(name, type_, nullable=False, **options)


def optional(name: str, type_: Any, **options: Any) -> sa.Column[Any]:
    """A nullable column."""
    return sa.Column(name, type_, nullable=True, **options)


def id_column(length: int = ID) -> sa.Column[Any]:
    """The row's own id: its primary key."""
    return sa.Column("id", sa.String(length), primary_key=True)


def ref(
    name: str,
    table: str,
    *,
    ondelete: str | None = "CASCADE",
    nullable: bool = False,
    primary_key: bool = False,
    length: int = ID,
    **options: Any,
) -> sa.Column[Any]:
    """An id naming a row of `table` by its id (a foreign key)."""
    target = sa.ForeignKey(f"{table}.id", ondelete=ondelete)
    if primary_key:
        return sa.Column(name, sa.String(length), target, primary_key=True, **options)
    return sa.Column(name, sa.String(length), target, nullable=nullable, **options)


def project_ref(*, nullable: bool = False, primary_key: bool = False) -> sa.Column[Any]:
    """The project a row belongs to: deleted with the project."""
    return ref("project_id", "projects", nullable=nullable, primary_key=primary_key)


# Per-project counters (task numbers today; spec comments, handoffs… later). A write takes
# the next value with one upsert that locks the counter row until it commits, so concurrent
# writers on PostgreSQL queue up on the row instead of racing for max(number) + 1.
project_sequences = sa.Table(
    "project_sequences",
    metadata,
    project_ref(primary_key=True),
    sa.Column("name", sa.String(40), primary_key=True),
    required("value", sa.Integer),
)


# One row per (principal, key): written in the same transaction as the keyed write.
idempotency_keys = sa.Table(
    "idempotency_keys",
    metadata,
    sa.Column("principal", sa.String(ID), primary_key=True),
    sa.Column("key", sa.String(128), primary_key=True),
    required("operation", sa.String(64)),
    required("fingerprint", sa.String(64)),
    required("acknowledgement", sa.JSON),
    optional("resource_type", sa.String(32)),
    optional("resource_id", sa.String(64)),
    optional("project_id", sa.String(ID)),
    required("created_at", UTCDateTime),
)


# The event log: every change writes a row here in its own transaction. Rows outlive what
# they describe, so there are no foreign keys.
events = sa.Table(
    "events",
    metadata,
    sa.Column("id", EventId, primary_key=True, autoincrement=True),
    optional("project_id", sa.String(ID)),
    optional("workspace_id", sa.String(ID)),
    required("type", sa.String(64)),
    required("actor", sa.JSON),
    required("payload", sa.JSON),
    required("created_at", UTCDateTime),
    # Filled from the payload and actor by `record_event`: activity filters on them.
    optional("task_id", sa.String(ID)),
    optional("token_id", sa.String(ID)),
    sa.Index("ix_events_project_id_id", "project_id", "id"),
    sa.Index("ix_events_project_id_task_id_id", "project_id", "task_id", "id"),
    sa.Index("ix_events_project_id_token_id_id", "project_id", "token_id", "id"),
    sqlite_autoincrement=True,
)
