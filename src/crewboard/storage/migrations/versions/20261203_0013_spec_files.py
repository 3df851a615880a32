"""spec files and their revisions; content-addressed blobs (chunked in the database)

Revision ID: 0013_spec_files
Revises: 0012_handin_comment_search
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_spec_files"
down_revision: str | None = "0012_handin_comment_search"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "blobs",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("chunk_size", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("digest", name=op.f("pk_blobs")),
    )
    op.create_table(
        "blob_chunks",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("digest", "seq", name=op.f("pk_blob_chunks")),
    )
    op.create_table(
        "spec_files",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("path", sa.String(length=512), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("total_lines", sa.Integer(), nullable=False),
        sa.Column("revision_count", sa.Integer(), nullable=False),
        sa.Column("content_version", sa.String(length=40), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("trashed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("trashed_by", sa.JSON(), nullable=True),
        sa.CheckConstraint("kind IN ('text', 'binary')", name=op.f("ck_spec_files_kind")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_spec_files_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_spec_files")),
    )
    op.create_index(
        "ix_spec_files_project_id_path", "spec_files", ["project_id", "path"], unique=True
    )
    op.create_table(
        "spec_file_revisions",
        sa.Column("file_id", sa.String(length=32), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("content_version", sa.String(length=40), nullable=False),
        sa.Column("total_lines", sa.Integer(), nullable=False),
        sa.Column("line_marks", sa.JSON(), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["file_id"],
            ["spec_files.id"],
            name=op.f("fk_spec_file_revisions_file_id_spec_files"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("file_id", "revision", name=op.f("pk_spec_file_revisions")),
    )
    op.create_index(
        "ix_spec_file_revisions_digest", "spec_file_revisions", ["digest"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_spec_file_revisions_digest", table_name="spec_file_revisions")
    op.drop_table("spec_file_revisions")
    op.drop_index("ix_spec_files_project_id_path", table_name="spec_files")
    op.drop_table("spec_files")
    op.drop_table("blob_chunks")
    op.drop_table("blobs")
