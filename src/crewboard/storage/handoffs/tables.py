"""Tables of the handoffs area: one row per handoff (author x project x day), its recipients,
and its action items."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import id_column, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

handoffs = sa.Table(
    "handoffs",
    metadata,
    id_column(),
    project_ref(),
    ref("author_user_id", "users"),
    required("author", sa.JSON),
    required("day", sa.Date),
    required("source_zone", sa.String(64)),
    required("destination_zone", sa.String(64)),
    required("completed", sa.Text),
    required("in_progress", sa.Text),
    required("blockers", sa.Text),
    required("next_steps", sa.Text),
    required("linked_task_ids", sa.JSON),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    required("updated_by", sa.JSON),
    # One handoff per author, project and day (the day in the source time zone).
    sa.Index("ix_handoffs_slot", "project_id", "author_user_id", "day", unique=True),
    sa.Index("ix_handoffs_project_id_day", "project_id", "day", "id"),
)

handoff_recipients = sa.Table(
    "handoff_recipients",
    metadata,
    ref("handoff_id", "handoffs"),
    ref("user_id", "users"),
    sa.PrimaryKeyConstraint("handoff_id", "user_id"),
    sa.Index("ix_handoff_recipients_user_id", "user_id"),
)

handoff_action_items = sa.Table(
    "handoff_action_items",
    metadata,
    id_column(),
    ref("handoff_id", "handoffs"),
    project_ref(),
    required("day", sa.Date),
    required("text", sa.Text),
    ref("assignee_user_id", "users", ondelete="SET NULL", nullable=True),
    required("status", sa.String(16)),
    optional("due_date", sa.Date),
    required("created_by", sa.JSON),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    required("updated_by", sa.JSON),
    sa.Index("ix_handoff_action_items_handoff_id", "handoff_id", "created_at", "id"),
    sa.Index("ix_handoff_action_items_project_id_day", "project_id", "day", "created_at", "id"),
)

# How many handoffs a project has, kept with each one written: the unfiltered list's total
# without counting a long history on every page.
handoff_counts = sa.Table(
    "handoff_counts",
    metadata,
    project_ref(primary_key=True),
    required("total", sa.Integer),
)
