"""agent tokens store the AI seat they act as

A token acted as the AI seat whose name or role was its own name. It now stores the seat
(a team role of its project), chosen when it is made; archiving the seat leaves the token
acting as no seat. Tokens made before keep NULL: they act as their project's only AI seat
when it has exactly one.

Revision ID: 0025_token_seats
Revises: 0024_task_claims
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025_token_seats"
down_revision: str | None = "0024_task_claims"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Batch mode: SQLite adds a foreign key only by copying the table.
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("seat_id", sa.String(length=32), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_api_tokens_seat_id_team_roles"),
            "team_roles",
            ["seat_id"],
            ["id"],
            ondelete="SET NULL",
        )


def downgrade() -> None:
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_api_tokens_seat_id_team_roles"), type_="foreignkey")
        batch_op.drop_column("seat_id")
