"""stream token projects: the projects each stream token follows, one row a project

A project's admin lists the stream tokens that follow the project (list_stream_tokens); the
rows of tokens made before are filled from their `project_ids` (projects since deleted left
out).

Revision ID: 0028_stream_token_projects
Revises: 0027_board_views
Create Date: 2026-12-07
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028_stream_token_projects"
down_revision: str | None = "0027_board_views"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    table = op.create_table(
        "stream_token_projects",
        sa.Column("stream_token_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_stream_token_projects_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["stream_token_id"],
            ["stream_tokens.id"],
            name=op.f("fk_stream_token_projects_stream_token_id_stream_tokens"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "stream_token_id", "project_id", name=op.f("pk_stream_token_projects")
        ),
    )
    op.create_index(
        "ix_stream_token_projects_project_id",
        "stream_token_projects",
        ["project_id"],
        unique=False,
    )
    conn = op.get_bind()
    projects = {row[0] for row in conn.execute(sa.text("SELECT id FROM projects"))}
    rows = []
    for token_id, raw in conn.execute(sa.text("SELECT id, project_ids FROM stream_tokens")):
        ids = json.loads(raw) if isinstance(raw, str) else raw
        rows += [
            {"stream_token_id": token_id, "project_id": p}
            for p in dict.fromkeys(ids)
            if p in projects
        ]
    if rows:
        op.bulk_insert(table, rows)


def downgrade() -> None:
    op.drop_index("ix_stream_token_projects_project_id", table_name="stream_token_projects")
    op.drop_table("stream_token_projects")
