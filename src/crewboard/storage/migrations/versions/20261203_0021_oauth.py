"""oauth: clients, consent requests, grants, and the codes and tokens they gave out

Revision ID: 0021_oauth
Revises: 0020_handoffs
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_oauth"
down_revision: str | None = "0020_handoffs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "oauth_clients",
        sa.Column("id", sa.String(length=2000), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("redirect_uris", sa.JSON(), nullable=False),
        sa.Column("auth_method", sa.String(length=32), nullable=False),
        sa.Column("scope", sa.String(length=500), nullable=True),
        sa.Column("secret_hash", sa.String(length=64), nullable=True),
        sa.Column("client_metadata", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_clients")),
    )
    op.create_table(
        "oauth_requests",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("client_id", sa.String(length=2000), nullable=False),
        sa.Column("redirect_uri", sa.String(length=2000), nullable=False),
        sa.Column("redirect_explicit", sa.Boolean(), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("resource", sa.String(length=2000), nullable=False),
        sa.Column("code_challenge", sa.String(length=128), nullable=False),
        sa.Column("state", sa.String(length=1000), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["client_id"],
            ["oauth_clients.id"],
            name=op.f("fk_oauth_requests_client_id_oauth_clients"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_requests")),
    )
    with op.batch_alter_table("oauth_requests", schema=None) as batch_op:
        batch_op.create_index("ix_oauth_requests_expires_at", ["expires_at"], unique=False)

    op.create_table(
        "oauth_grants",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("client_id", sa.String(length=2000), nullable=False),
        sa.Column("client_name", sa.String(length=200), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("resource", sa.String(length=2000), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=True),
        sa.Column("role", sa.String(length=16), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_reason", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(
            ["client_id"],
            ["oauth_clients.id"],
            name=op.f("fk_oauth_grants_client_id_oauth_clients"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_oauth_grants_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_oauth_grants_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_grants")),
    )
    with op.batch_alter_table("oauth_grants", schema=None) as batch_op:
        batch_op.create_index("ix_oauth_grants_client_id", ["client_id"], unique=False)
        batch_op.create_index("ix_oauth_grants_user_id", ["user_id"], unique=False)

    op.create_table(
        "oauth_secrets",
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("grant_id", sa.String(length=32), nullable=False),
        sa.Column("redirect_uri", sa.String(length=2000), nullable=True),
        sa.Column("redirect_explicit", sa.Boolean(), nullable=True),
        sa.Column("code_challenge", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["grant_id"],
            ["oauth_grants.id"],
            name=op.f("fk_oauth_secrets_grant_id_oauth_grants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("secret_hash", name=op.f("pk_oauth_secrets")),
    )
    with op.batch_alter_table("oauth_secrets", schema=None) as batch_op:
        batch_op.create_index("ix_oauth_secrets_expires_at", ["expires_at"], unique=False)
        batch_op.create_index("ix_oauth_secrets_grant_id", ["grant_id"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("oauth_secrets", schema=None) as batch_op:
        batch_op.drop_index("ix_oauth_secrets_grant_id")
        batch_op.drop_index("ix_oauth_secrets_expires_at")

    op.drop_table("oauth_secrets")
    with op.batch_alter_table("oauth_grants", schema=None) as batch_op:
        batch_op.drop_index("ix_oauth_grants_user_id")
        batch_op.drop_index("ix_oauth_grants_client_id")

    op.drop_table("oauth_grants")
    with op.batch_alter_table("oauth_requests", schema=None) as batch_op:
        batch_op.drop_index("ix_oauth_requests_expires_at")

    op.drop_table("oauth_requests")
    op.drop_table("oauth_clients")
