"""project sequences: per-project counters for task numbers; finite board positions

Task numbers came from max(number) + 1, which two concurrent writers on PostgreSQL read
alike (one of them then failed on the unique index). The counter row replaces it, seeded
from the numbers already given out.

Board positions could be stored as ±Infinity or NaN (or numbers too large to add 1024 to)
before the doors bounded them: every column holding one is renumbered in its present order.

Revision ID: 0007_project_sequences
Revises: 0006_web_sessions
Create Date: 2026-12-01
"""

import math
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_project_sequences"
down_revision: str | None = "0006_web_sessions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BOARD_ORDER_LIMIT = 1e12  # the bound the doors now enforce
STEP = 1024.0


def upgrade() -> None:
    op.create_table(
        "project_sequences",
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_sequences_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "name", name=op.f("pk_project_sequences")),
    )
    op.execute(
        "INSERT INTO project_sequences (project_id, name, value) "
        "SELECT project_id, 'task', MAX(number) FROM tasks GROUP BY project_id"
    )
    _renumber_broken_columns(op.get_bind())


def _renumber_broken_columns(conn: sa.Connection) -> None:
    tasks = sa.table(
        "tasks",
        sa.column("id", sa.String),
        sa.column("project_id", sa.String),
        sa.column("status", sa.String),
        sa.column("number", sa.Integer),
        sa.column("board_order", sa.Float),
    )
    broken: set[tuple[str, str]] = set()
    rows = conn.execute(sa.select(tasks.c.project_id, tasks.c.status, tasks.c.board_order))
    for project_id, status, order in rows:
        # SQLite hands NaN back as NULL; PostgreSQL as float('nan').
        if order is None or not math.isfinite(order) or abs(order) > BOARD_ORDER_LIMIT:
            broken.add((project_id, status))
    for project_id, status in sorted(broken):
        column = sorted(
            conn.execute(
                sa.select(tasks.c.id, tasks.c.board_order, tasks.c.number).where(
                    tasks.c.project_id == project_id, tasks.c.status == status
                )
            ),
            key=lambda row: (_sort_key(row.board_order), row.number),
        )
        for position, row in enumerate(column, start=1):
            conn.execute(
                sa.update(tasks).where(tasks.c.id == row.id).values(board_order=position * STEP)
            )


def _sort_key(order: float | None) -> float:
    """Finite positions keep their order; -Infinity first, +Infinity and NaN last."""
    if order is None or math.isnan(order):
        return math.inf
    return order


def downgrade() -> None:
    op.drop_table("project_sequences")
