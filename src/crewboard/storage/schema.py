"""The schema's shared parts: the metadata every table is defined on, its naming convention,
the id and event-id column types, and the tables no one area owns (the idempotency ledger, the
event log, per-project sequences). Each area's tables live in `storage/<area>/tables.py`;
`storage/tables.py` gathers them all.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
)

from crewboard.storage.types import UTCDateTime

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = MetaData(naming_convention=NAMING)

ID = 32  # prefixed ids: "prj_" + 22 characters

# SQLite only autoincrements an INTEGER PRIMARY KEY; BIGINT elsewhere.
EventId = BigInteger().with_variant(Integer(), "sqlite")


# Per-project counters (task numbers today; spec comments, handoffs… later). A write takes
# the next value with one upsert that locks the counter row until it commits, so concurrent
# writers on PostgreSQL queue up on the row instead of racing for max(number) + 1.
project_sequences = Table(
    "project_sequences",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("name", String(40), primary_key=True),
    Column("value", Integer, nullable=False),
)


# One row per (principal, key): written in the same transaction as the keyed write.
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("principal", String(ID), primary_key=True),
    Column("key", String(128), primary_key=True),
    Column("operation", String(64), nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("acknowledgement", JSON, nullable=False),
    Column("resource_type", String(32), nullable=True),
    Column("resource_id", String(64), nullable=True),
    Column("project_id", String(ID), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
)


# The event log: every change writes a row here in its own transaction. Rows outlive what
# they describe, so there are no foreign keys.
events = Table(
    "events",
    metadata,
    Column("id", EventId, primary_key=True, autoincrement=True),
    Column("project_id", String(ID), nullable=True),
    Column("workspace_id", String(ID), nullable=True),
    Column("type", String(64), nullable=False),
    Column("actor", JSON, nullable=False),
    Column("payload", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # Filled from the payload and actor by `record_event`: activity filters on them.
    Column("task_id", String(ID), nullable=True),
    Column("token_id", String(ID), nullable=True),
    Index("ix_events_project_id_id", "project_id", "id"),
    Index("ix_events_project_id_task_id_id", "project_id", "task_id", "id"),
    Index("ix_events_project_id_token_id_id", "project_id", "token_id", "id"),
    sqlite_autoincrement=True,
)
