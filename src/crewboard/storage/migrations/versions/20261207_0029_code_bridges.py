"""code bridges: a person's `crewboard reverse` and the code calls a spec session sends it

A bridge connects out from the machine holding the code and answers the tool calls a turn's
model makes (list a folder, read a file, search text); the calls are rows, so the node holding
the bridge's long poll and the node running the turn need not be the same. Sessions get the
notices shown as their warnings.

Revision ID: 0029_code_bridges
Revises: 0028_stream_token_projects
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029_code_bridges"
down_revision: str | None = "0028_stream_token_projects"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "code_bridges",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("token_id", sa.String(length=32), nullable=True),
        sa.Column("folder", sa.String(length=200), nullable=False),
        sa.Column("client", sa.String(length=100), nullable=True),
        sa.Column("node", sa.String(length=64), nullable=True),
        sa.Column("connected_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("replaced_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_code_bridges_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_code_bridges_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_code_bridges")),
    )
    with op.batch_alter_table("code_bridges", schema=None) as batch_op:
        batch_op.create_index(
            "ix_code_bridges_user_id_project_id", ["user_id", "project_id"], unique=False
        )

    op.create_table(
        "code_calls",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("session_id", sa.String(length=32), nullable=False),
        sa.Column("turn_id", sa.String(length=32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("tool", sa.String(length=32), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("bridge_id", sa.String(length=32), nullable=True),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("answer", sa.JSON(), nullable=True),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["bridge_id"],
            ["code_bridges.id"],
            name=op.f("fk_code_calls_bridge_id_code_bridges"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_code_calls_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["spec_sessions.id"],
            name=op.f("fk_code_calls_session_id_spec_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_code_calls")),
    )
    with op.batch_alter_table("code_calls", schema=None) as batch_op:
        batch_op.create_index("ix_code_calls_turn_id_seq", ["turn_id", "seq"], unique=True)
        batch_op.create_index(
            "ix_code_calls_user_id_project_id_status",
            ["user_id", "project_id", "status"],
            unique=False,
        )
        batch_op.create_index("ix_code_calls_session_id", ["session_id"], unique=False)
        batch_op.create_index("ix_code_calls_bridge_id", ["bridge_id"], unique=False)

    with op.batch_alter_table("spec_sessions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("notices", sa.JSON(), server_default=sa.text("'[]'"), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("spec_sessions", schema=None) as batch_op:
        batch_op.drop_column("notices")

    with op.batch_alter_table("code_calls", schema=None) as batch_op:
        batch_op.drop_index("ix_code_calls_bridge_id")
        batch_op.drop_index("ix_code_calls_session_id")
        batch_op.drop_index("ix_code_calls_user_id_project_id_status")
        batch_op.drop_index("ix_code_calls_turn_id_seq")

    op.drop_table("code_calls")
    with op.batch_alter_table("code_bridges", schema=None) as batch_op:
        batch_op.drop_index("ix_code_bridges_user_id_project_id")

    op.drop_table("code_bridges")
