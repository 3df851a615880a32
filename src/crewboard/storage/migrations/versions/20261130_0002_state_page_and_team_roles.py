"""project state page and team roles

Revision ID: 0002_state_team
Revises: 0001_identity
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_state_team"
down_revision: str | None = "0001_identity"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "project_state",
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("updated_by", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_state_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_project_state")),
    )
    op.create_table(
        "project_state_versions",
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("author", sa.JSON(), nullable=False),
        sa.Column("restored_from", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_state_versions_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "revision", name=op.f("pk_project_state_versions")),
    )
    op.create_table(
        "team_roles",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("role", sa.String(length=500), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("member_user_id", sa.String(length=32), nullable=True),
        sa.Column("model", sa.String(length=120), nullable=True),
        sa.Column("effort", sa.String(length=16), nullable=True),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("xp", sa.Integer(), nullable=False),
        sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("kind IN ('ai', 'human')", name=op.f("ck_team_roles_kind")),
        sa.ForeignKeyConstraint(
            ["member_user_id"],
            ["users.id"],
            name=op.f("fk_team_roles_member_user_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_team_roles_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_roles")),
    )
    with op.batch_alter_table("team_roles", schema=None) as batch_op:
        batch_op.create_index("ix_team_roles_project_id", ["project_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("team_roles", schema=None) as batch_op:
        batch_op.drop_index("ix_team_roles_project_id")

    op.drop_table("team_roles")
    op.drop_table("project_state_versions")
    op.drop_table("project_state")
