"""inbox read markers: what each person has read

The inbox could not tell a new hand-in from one a person had already looked at. A row per
(person, item) now records when that person read it; reading is personal, so one reviewer
opening an item leaves it new for the others.

Revision ID: 0011_inbox_reads
Revises: 0010_message_dismissal
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_inbox_reads"
down_revision: str | None = "0010_message_dismissal"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "inbox_reads",
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("item_kind", sa.String(length=12), nullable=False),
        sa.Column("item_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "item_kind IN ('hand_in', 'proposal', 'question', 'message')",
            name=op.f("ck_inbox_reads_item_kind"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_inbox_reads_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_inbox_reads_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "item_kind", "item_id", name=op.f("pk_inbox_reads")),
    )
    op.create_index(
        "ix_inbox_reads_project_id_user_id", "inbox_reads", ["project_id", "user_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_inbox_reads_project_id_user_id", table_name="inbox_reads")
    op.drop_table("inbox_reads")
