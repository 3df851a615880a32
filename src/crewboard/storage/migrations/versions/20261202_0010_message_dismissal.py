"""inbox messages can be dismissed

A message stayed in its reader's inbox for good. It now records when, and by whom, it was
dismissed; the inbox leaves dismissed messages out, their thread keeps them.

Revision ID: 0010_message_dismissal
Revises: 0009_task_counts
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_message_dismissal"
down_revision: str | None = "0009_task_counts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN on both backends (no table copy on SQLite).
    op.add_column("inbox_messages", sa.Column("dismissed_at", sa.DateTime(timezone=True)))
    op.add_column("inbox_messages", sa.Column("dismissed_by", sa.JSON()))


def downgrade() -> None:
    op.drop_column("inbox_messages", "dismissed_by")
    op.drop_column("inbox_messages", "dismissed_at")
