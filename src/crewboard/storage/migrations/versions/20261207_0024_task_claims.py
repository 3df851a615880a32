"""task claims: one claim row per task, with its fence (bumped by each new claim, never
reset), its holder (person, token, AI seat), its lease and how it ended

Revision ID: 0024_task_claims
Revises: 0023_task_counts_per_statement
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024_task_claims"
down_revision: str | None = "0023_task_counts_per_statement"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "task_claims",
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("fence", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("token_id", sa.String(length=32), nullable=True),
        sa.Column("role_id", sa.String(length=32), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lease_seconds", sa.Integer(), nullable=False),
        sa.Column("released_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_as", sa.String(length=8), nullable=True),
        sa.CheckConstraint(
            "ended_as IS NULL OR ended_as IN ('released', 'broken', 'lapsed')",
            name=op.f("ck_task_claims_ended_as"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_task_claims_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_task_claims_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("task_id", name=op.f("pk_task_claims")),
    )
    with op.batch_alter_table("task_claims", schema=None) as batch_op:
        batch_op.create_index(
            "ix_task_claims_released_at_expires_at", ["released_at", "expires_at"], unique=False
        )
        batch_op.create_index("ix_task_claims_token_id", ["token_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("task_claims", schema=None) as batch_op:
        batch_op.drop_index("ix_task_claims_token_id")
        batch_op.drop_index("ix_task_claims_released_at_expires_at")

    op.drop_table("task_claims")
