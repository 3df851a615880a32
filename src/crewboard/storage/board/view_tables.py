"""The saved board views table (apart from `tables.py`: a person's own settings, not work)."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import id_column, metadata, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

# A person's named board views of one project: the board's query string (filters, sort and
# grouping), one row per name.
board_views = sa.Table(
    "board_views",
    metadata,
    id_column(),
    project_ref(),
    ref("user_id", "users"),
    required("name", sa.String(60)),
    required("query", sa.String(600)),
    required("updated_at", UTCDateTime),
    sa.UniqueConstraint("project_id", "user_id", "name"),
)
