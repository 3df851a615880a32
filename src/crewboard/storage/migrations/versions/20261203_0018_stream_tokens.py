"""stream tokens: short-lived, read-only tokens that follow projects' live events

Revision ID: 0018_stream_tokens
Revises: 0017_artifacts
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_stream_tokens"
down_revision: str | None = "0017_artifacts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "stream_tokens",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("display_prefix", sa.String(length=16), nullable=False),
        sa.Column("project_ids", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_stream_tokens_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stream_tokens")),
        sa.UniqueConstraint("secret_hash", name=op.f("uq_stream_tokens_secret_hash")),
    )
    op.create_index("ix_stream_tokens_user_id", "stream_tokens", ["user_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_stream_tokens_user_id", table_name="stream_tokens")
    op.drop_table("stream_tokens")
