"""sessions: model providers and models an admin configures, a project's default model, and
spec sessions with their messages, turns (the runners' work queue) and proposals

Revision ID: 0022_sessions
Revises: 0021_oauth
Create Date: 2026-12-03 19:47:54.111934
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022_sessions"
down_revision: str | None = "0021_oauth"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "session_providers",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("base_url", sa.String(length=500), nullable=False),
        sa.Column("key_env", sa.String(length=200), nullable=True),
        sa.Column("key_file", sa.String(length=1000), nullable=True),
        sa.Column("timeout_seconds", sa.Float(), nullable=False),
        sa.Column("max_retries", sa.Integer(), nullable=False),
        sa.Column("stream", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_session_providers")),
    )
    op.create_table(
        "session_models",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("provider_id", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("max_tokens", sa.Integer(), nullable=False),
        sa.Column("is_default", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["provider_id"],
            ["session_providers.id"],
            name=op.f("fk_session_models_provider_id_session_providers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_session_models")),
    )
    with op.batch_alter_table("session_models", schema=None) as batch_op:
        batch_op.create_index("ix_session_models_provider_id", ["provider_id"], unique=False)

    op.create_table(
        "project_session_settings",
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("model_id", sa.String(length=64), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["session_models.id"],
            name=op.f("fk_project_session_settings_model_id_session_models"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_session_settings_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", name=op.f("pk_project_session_settings")),
    )
    op.create_table(
        "spec_sessions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("workflow_id", sa.String(length=64), nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("model_id", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("pending_action", sa.String(length=40), nullable=False),
        sa.Column("attachment_ids", sa.JSON(), nullable=False),
        sa.Column("spec_file_ids", sa.JSON(), nullable=False),
        sa.Column("turn_count", sa.Integer(), nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("provider_seconds", sa.Float(), nullable=False),
        sa.Column("last_error", sa.JSON(), nullable=True),
        sa.Column("created_by", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_spec_sessions_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_spec_sessions")),
    )
    with op.batch_alter_table("spec_sessions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_spec_sessions_project_id_updated_at",
            ["project_id", "updated_at", "id"],
            unique=False,
        )

    op.create_table(
        "spec_session_messages",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("session_id", sa.String(length=32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("author", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["spec_sessions.id"],
            name=op.f("fk_spec_session_messages_session_id_spec_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_spec_session_messages")),
    )
    with op.batch_alter_table("spec_session_messages", schema=None) as batch_op:
        batch_op.create_index(
            "ix_spec_session_messages_session_id_seq", ["session_id", "seq"], unique=True
        )

    op.create_table(
        "spec_session_proposals",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("session_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("turn_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("path", sa.String(length=512), nullable=True),
        sa.Column("base_version", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by", sa.JSON(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("feedback", sa.Text(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["spec_sessions.id"],
            name=op.f("fk_spec_session_proposals_session_id_spec_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_spec_session_proposals")),
    )
    with op.batch_alter_table("spec_session_proposals", schema=None) as batch_op:
        batch_op.create_index(
            "ix_spec_session_proposals_session_id_status",
            ["session_id", "status", "created_at"],
            unique=False,
        )

    op.create_table(
        "spec_session_turns",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("session_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("model_id", sa.String(length=64), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("partial", sa.Text(), nullable=False),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("provider_seconds", sa.Float(), nullable=False),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("claim", sa.String(length=64), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["spec_sessions.id"],
            name=op.f("fk_spec_session_turns_session_id_spec_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_spec_session_turns")),
    )
    with op.batch_alter_table("spec_session_turns", schema=None) as batch_op:
        batch_op.create_index(
            "ix_spec_session_turns_session_id_seq", ["session_id", "seq"], unique=True
        )
        batch_op.create_index(
            "ix_spec_session_turns_status_lease", ["status", "lease_until"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("spec_session_turns", schema=None) as batch_op:
        batch_op.drop_index("ix_spec_session_turns_status_lease")
        batch_op.drop_index("ix_spec_session_turns_session_id_seq")

    op.drop_table("spec_session_turns")
    with op.batch_alter_table("spec_session_proposals", schema=None) as batch_op:
        batch_op.drop_index("ix_spec_session_proposals_session_id_status")

    op.drop_table("spec_session_proposals")
    with op.batch_alter_table("spec_session_messages", schema=None) as batch_op:
        batch_op.drop_index("ix_spec_session_messages_session_id_seq")

    op.drop_table("spec_session_messages")
    with op.batch_alter_table("spec_sessions", schema=None) as batch_op:
        batch_op.drop_index("ix_spec_sessions_project_id_updated_at")

    op.drop_table("spec_sessions")
    op.drop_table("project_session_settings")
    with op.batch_alter_table("session_models", schema=None) as batch_op:
        batch_op.drop_index("ix_session_models_provider_id")

    op.drop_table("session_models")
    op.drop_table("session_providers")
