"""github: webhook settings per project, deliveries seen, mirrored issues, pull request states

Revision ID: 0031_github
Revises: 0030_webhooks
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0031_github"
down_revision: str | None = "0030_webhooks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "github_settings",
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("secret", sa.String(length=100), nullable=False),
        sa.Column("on_merge", sa.String(length=8), server_default="review", nullable=False),
        sa.Column("sync_issues", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("configured_by", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["configured_by"], ["users.id"],
            name=op.f("fk_github_settings_configured_by_users"), ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"],
            name=op.f("fk_github_settings_project_id_projects"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_github_settings")),
    )  # fmt: skip
    op.create_table(
        "github_deliveries",
        sa.Column("delivery_id", sa.String(length=100), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=True),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"],
            name=op.f("fk_github_deliveries_project_id_projects"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("delivery_id", name=op.f("pk_github_deliveries")),
    )  # fmt: skip
    with op.batch_alter_table("github_deliveries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_github_deliveries_project_id_received_at",
            ["project_id", "received_at"],
            unique=False,
        )
    op.create_table(
        "github_issues",
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("repo_id", sa.String(length=32), nullable=False),
        sa.Column("issue_number", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"],
            name=op.f("fk_github_issues_project_id_projects"), ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["repo_id"], ["repos.id"], name=op.f("fk_github_issues_repo_id_repos"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_github_issues_task_id_tasks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("repo_id", "issue_number", name="pk_github_issues"),
    )  # fmt: skip
    op.create_table(
        "github_pulls",
        sa.Column("link_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=True),
        sa.Column("pr_state", sa.String(length=8), nullable=True),
        sa.Column("head_sha", sa.String(length=64), nullable=True),
        sa.Column("checks", sa.JSON(), nullable=False),
        sa.Column("github_updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["link_id"], ["task_repo_links.id"],
            name=op.f("fk_github_pulls_link_id_task_repo_links"), ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"],
            name=op.f("fk_github_pulls_project_id_projects"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("link_id", name=op.f("pk_github_pulls")),
    )  # fmt: skip


def downgrade() -> None:
    op.drop_table("github_pulls")
    op.drop_table("github_issues")
    with op.batch_alter_table("github_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_github_deliveries_project_id_received_at")
    op.drop_table("github_deliveries")
    op.drop_table("github_settings")
