"""spec comments: threads anchored to a passage of a spec file, and their comments

Revision ID: 0015_spec_comments
Revises: 0014_attachments
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_spec_comments"
down_revision: str | None = "0014_attachments"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "spec_comment_threads",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("file_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("orphaned", sa.Boolean(), nullable=False),
        sa.Column("anchor_quote", sa.Text(), nullable=False),
        sa.Column("anchor_prefix", sa.Text(), nullable=False),
        sa.Column("anchor_suffix", sa.Text(), nullable=False),
        sa.Column("anchor_start", sa.Integer(), nullable=False),
        sa.Column("anchor_end", sa.Integer(), nullable=False),
        sa.Column("anchor_revision", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_by", sa.JSON(), nullable=True),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('open', 'resolved')", name=op.f("ck_spec_comment_threads_status")
        ),
        sa.ForeignKeyConstraint(
            ["file_id"],
            ["spec_files.id"],
            name=op.f("fk_spec_comment_threads_file_id_spec_files"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_spec_comment_threads_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_spec_comment_threads")),
    )
    op.create_index(
        "ix_spec_comment_threads_file_id_status",
        "spec_comment_threads",
        ["file_id", "status", "orphaned"],
        unique=False,
    )
    op.create_table(
        "spec_comments",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("thread_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("content_version", sa.String(length=40), nullable=False),
        sa.Column("deleted", sa.Boolean(), nullable=False),
        sa.Column("ai_work", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["thread_id"],
            ["spec_comment_threads.id"],
            name=op.f("fk_spec_comments_thread_id_spec_comment_threads"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_spec_comments")),
    )
    op.create_index(
        "ix_spec_comments_thread_id_seq", "spec_comments", ["thread_id", "seq"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_spec_comments_thread_id_seq", table_name="spec_comments")
    op.drop_table("spec_comments")
    op.drop_index("ix_spec_comment_threads_file_id_status", table_name="spec_comment_threads")
    op.drop_table("spec_comment_threads")
