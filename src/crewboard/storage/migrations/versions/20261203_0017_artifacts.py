"""artifacts: versioned sets of files, their kept revisions, each revision's files, and
short-lived preview grants

Revision ID: 0017_artifacts
Revises: 0016_tasks_md
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_artifacts"
down_revision: str | None = "0016_tasks_md"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "artifacts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("revision_count", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_artifacts_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_artifacts")),
    )
    op.create_index(
        "ix_artifacts_project_id_slug", "artifacts", ["project_id", "slug"], unique=True
    )
    op.create_table(
        "artifact_revisions",
        sa.Column("artifact_id", sa.String(length=32), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("base_revision", sa.Integer(), nullable=True),
        sa.Column("file_count", sa.Integer(), nullable=False),
        sa.Column("total_size", sa.BigInteger(), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "kind IN ('full', 'delta', 'rollback')", name=op.f("ck_artifact_revisions_kind")
        ),
        sa.ForeignKeyConstraint(
            ["artifact_id"],
            ["artifacts.id"],
            name=op.f("fk_artifact_revisions_artifact_id_artifacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("artifact_id", "revision", name=op.f("pk_artifact_revisions")),
    )
    op.create_table(
        "artifact_files",
        sa.Column("artifact_id", sa.String(length=32), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=512), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("media_type", sa.String(length=100), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("total_lines", sa.Integer(), nullable=False),
        sa.Column("line_marks", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["artifact_id", "revision"],
            ["artifact_revisions.artifact_id", "artifact_revisions.revision"],
            name=op.f("fk_artifact_files_artifact_id_artifact_revisions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("artifact_id", "revision", "path", name=op.f("pk_artifact_files")),
    )
    op.create_index("ix_artifact_files_digest", "artifact_files", ["digest"], unique=False)
    op.create_table(
        "artifact_previews",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("artifact_id", sa.String(length=32), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["artifact_id"],
            ["artifacts.id"],
            name=op.f("fk_artifact_previews_artifact_id_artifacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_artifact_previews")),
    )
    op.create_index(
        "ix_artifact_previews_expires_at", "artifact_previews", ["expires_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_artifact_previews_expires_at", table_name="artifact_previews")
    op.drop_table("artifact_previews")
    op.drop_index("ix_artifact_files_digest", table_name="artifact_files")
    op.drop_table("artifact_files")
    op.drop_table("artifact_revisions")
    op.drop_index("ix_artifacts_project_id_slug", table_name="artifacts")
    op.drop_table("artifacts")
