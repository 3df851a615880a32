"""Tables of the handoffs area: one row per handoff (author x project x day), its recipients,
and its action items."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Column,
    Date,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

from crewboard.storage.schema import ID, metadata
from crewboard.storage.types import UTCDateTime

handoffs = Table(
    "handoffs",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column(
        "author_user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), nullable=False
    ),
    Column("author", JSON, nullable=False),
    Column("day", Date, nullable=False),
    Column("source_zone", String(64), nullable=False),
    Column("destination_zone", String(64), nullable=False),
    Column("completed", Text, nullable=False),
    Column("in_progress", Text, nullable=False),
    Column("blockers", Text, nullable=False),
    Column("next_steps", Text, nullable=False),
    Column("linked_task_ids", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("updated_by", JSON, nullable=False),
    # One handoff per author, project and day (the day in the source time zone).
    Index("ix_handoffs_slot", "project_id", "author_user_id", "day", unique=True),
    Index("ix_handoffs_project_id_day", "project_id", "day", "id"),
)

handoff_recipients = Table(
    "handoff_recipients",
    metadata,
    Column("handoff_id", String(ID), ForeignKey("handoffs.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    PrimaryKeyConstraint("handoff_id", "user_id"),
    Index("ix_handoff_recipients_user_id", "user_id"),
)

handoff_action_items = Table(
    "handoff_action_items",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("handoff_id", String(ID), ForeignKey("handoffs.id", ondelete="CASCADE"), nullable=False),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("day", Date, nullable=False),
    Column("text", Text, nullable=False),
    Column(
        "assignee_user_id", String(ID), ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    ),
    Column("status", String(16), nullable=False),
    Column("due_date", Date, nullable=True),
    Column("created_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("updated_by", JSON, nullable=False),
    Index("ix_handoff_action_items_handoff_id", "handoff_id", "created_at", "id"),
    Index("ix_handoff_action_items_project_id_day", "project_id", "day", "created_at", "id"),
)

# How many handoffs a project has, kept with each one written: the unfiltered list's total
# without counting a long history on every page.
handoff_counts = Table(
    "handoff_counts",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("total", Integer, nullable=False),
)
