"""handoffs: shift handoffs (one per author, project and day), their recipients and action
items; how a project's handoffs go (its two shift zones, whether assignees are told)

Revision ID: 0020_handoffs
Revises: 0019_notifications
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_handoffs"
down_revision: str | None = "0019_notifications"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "project_handoffs",
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("zone_a", sa.String(length=64), nullable=False),
        sa.Column("zone_b", sa.String(length=64), nullable=False),
        sa.Column("notify_assignees", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_handoffs_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_project_handoffs")),
    )
    op.create_table(
        "handoffs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("author_user_id", sa.String(length=32), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("source_zone", sa.String(length=64), nullable=False),
        sa.Column("destination_zone", sa.String(length=64), nullable=False),
        sa.Column("completed", sa.Text(), nullable=False),
        sa.Column("in_progress", sa.Text(), nullable=False),
        sa.Column("blockers", sa.Text(), nullable=False),
        sa.Column("next_steps", sa.Text(), nullable=False),
        sa.Column("linked_task_ids", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["author_user_id"],
            ["users.id"],
            name=op.f("fk_handoffs_author_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_handoffs_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_handoffs")),
    )
    op.create_index(
        "ix_handoffs_slot", "handoffs", ["project_id", "author_user_id", "day"], unique=True
    )
    op.create_index(
        "ix_handoffs_project_id_day", "handoffs", ["project_id", "day", "id"], unique=False
    )
    op.create_table(
        "handoff_recipients",
        sa.Column("handoff_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["handoff_id"],
            ["handoffs.id"],
            name=op.f("fk_handoff_recipients_handoff_id_handoffs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_handoff_recipients_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("handoff_id", "user_id", name=op.f("pk_handoff_recipients")),
    )
    op.create_index(
        "ix_handoff_recipients_user_id", "handoff_recipients", ["user_id"], unique=False
    )
    op.create_table(
        "handoff_action_items",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("handoff_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("assignee_user_id", sa.String(length=32), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("due_date", sa.Date(), nullable=True),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["assignee_user_id"],
            ["users.id"],
            name=op.f("fk_handoff_action_items_assignee_user_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["handoff_id"],
            ["handoffs.id"],
            name=op.f("fk_handoff_action_items_handoff_id_handoffs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_handoff_action_items_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_handoff_action_items")),
    )
    op.create_index(
        "ix_handoff_action_items_handoff_id",
        "handoff_action_items",
        ["handoff_id", "created_at", "id"],
        unique=False,
    )
    op.create_index(
        "ix_handoff_action_items_project_id_day",
        "handoff_action_items",
        ["project_id", "day", "created_at", "id"],
        unique=False,
    )

    op.create_table(
        "handoff_counts",
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_handoff_counts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_handoff_counts")),
    )


def downgrade() -> None:
    op.drop_table("handoff_counts")
    op.drop_table("handoff_action_items")
    op.drop_table("handoff_recipients")
    op.drop_table("handoffs")
    op.drop_table("project_handoffs")
