"""attachments: one row per name in a project, the bytes a blob

Revision ID: 0014_attachments
Revises: 0013_spec_files
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_attachments"
down_revision: str | None = "0013_spec_files"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "attachments",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("media_type", sa.String(length=100), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("total_lines", sa.Integer(), nullable=False),
        sa.Column("line_marks", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "kind IN ('text', 'image', 'document')", name=op.f("ck_attachments_kind")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_attachments_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_attachments")),
    )
    op.create_index(
        "ix_attachments_project_id_name", "attachments", ["project_id", "name"], unique=True
    )
    op.create_index("ix_attachments_digest", "attachments", ["digest"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_attachments_digest", table_name="attachments")
    op.drop_index("ix_attachments_project_id_name", table_name="attachments")
    op.drop_table("attachments")
