"""Tables of the identity area: people, API tokens and web sessions."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import id_column, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

users = sa.Table(
    "users",
    metadata,
    id_column(),
    required("email", sa.String(254), unique=True),
    required("display_name", sa.String(120)),
    required("password_hash", sa.String(255)),
    required("is_owner", sa.Boolean, default=False),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
)


api_tokens = sa.Table(
    "api_tokens",
    metadata,
    id_column(),
    ref("user_id", "users"),
    required("name", sa.String(120)),
    required("kind", sa.String(16)),
    required("secret_hash", sa.String(64), unique=True),
    required("display_prefix", sa.String(16)),
    required("scopes", sa.JSON),
    project_ref(nullable=True),
    optional("role", sa.String(8)),
    required("toolsets", sa.JSON),
    required("created_at", UTCDateTime),
    optional("last_used_at", UTCDateTime),
    optional("revoked_at", UTCDateTime),
    # The AI seat an agent token acts as (a team role of its project), chosen when it is made.
    ref("seat_id", "team_roles", ondelete="SET NULL", nullable=True),
    sa.CheckConstraint("kind IN ('personal', 'agent')", name="kind"),
    sa.CheckConstraint("role IS NULL OR role IN ('read', 'write', 'admin')", name="role"),
    sa.Index("ix_api_tokens_user_id", "user_id"),
)


# Short-lived, read-only tokens that follow projects' live events (and nothing else): made by
# a person or their token for at most the projects it may read, the secret stored as SHA-256.
stream_tokens = sa.Table(
    "stream_tokens",
    metadata,
    id_column(),
    ref("user_id", "users"),
    required("name", sa.String(120)),
    required("secret_hash", sa.String(64), unique=True),
    required("display_prefix", sa.String(16)),
    required("project_ids", sa.JSON),
    required("created_by", sa.JSON),
    required("created_at", UTCDateTime),
    required("expires_at", UTCDateTime),
    optional("revoked_at", UTCDateTime),
    sa.Index("ix_stream_tokens_user_id", "user_id"),
)


# Which projects each stream token follows, one row a project (`stream_tokens.project_ids`
# keeps the order named at creation): a project's admin finds the tokens that follow it
# through the project_id index. A deleted project's rows go with it.
stream_token_projects = sa.Table(
    "stream_token_projects",
    metadata,
    ref("stream_token_id", "stream_tokens", primary_key=True),
    project_ref(primary_key=True),
    sa.Index("ix_stream_token_projects_project_id", "project_id"),
)


# A person's signed-in browser: the cookie holds a secret, this row its SHA-256. Renewed at
# every login (a new row), deleted at logout; the CSRF token belongs to the session.
web_sessions = sa.Table(
    "web_sessions",
    metadata,
    id_column(64),
    ref("user_id", "users"),
    required("csrf_token", sa.String(64)),
    required("created_at", UTCDateTime),
    required("last_seen_at", UTCDateTime),
    required("expires_at", UTCDateTime),
    sa.Index("ix_web_sessions_user_id", "user_id"),
)
