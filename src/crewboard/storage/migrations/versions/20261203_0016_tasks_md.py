"""tasks.md: the file and line a task is kept in sync with

Revision ID: 0016_tasks_md
Revises: 0015_spec_comments
Create Date: 2026-12-03

A table of its own beside `tasks` rather than columns on it: `tasks` keeps its shape (no copy
of an indexed table on SQLite, which would drop its triggers), and only the tasks made from a
file have a row.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_tasks_md"
down_revision: str | None = "0015_spec_comments"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "task_sources",
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("file_id", sa.String(length=32), nullable=False),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
            name=op.f("fk_task_sources_task_id_tasks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("task_id", name=op.f("pk_task_sources")),
    )
    op.create_index("ix_task_sources_file_id_line", "task_sources", ["file_id", "line"])


def downgrade() -> None:
    op.drop_index("ix_task_sources_file_id_line", table_name="task_sources")
    op.drop_table("task_sources")
