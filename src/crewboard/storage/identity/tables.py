"""Tables of the identity area: people, API tokens and web sessions."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    String,
    Table,
)

from crewboard.storage.schema import ID, metadata
from crewboard.storage.types import UTCDateTime

users = Table(
    "users",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("email", String(254), nullable=False, unique=True),
    Column("display_name", String(120), nullable=False),
    Column("password_hash", String(255), nullable=False),
    Column("is_owner", Boolean, nullable=False, default=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)


api_tokens = Table(
    "api_tokens",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(120), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("secret_hash", String(64), nullable=False, unique=True),
    Column("display_prefix", String(16), nullable=False),
    Column("scopes", JSON, nullable=False),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=True),
    Column("role", String(8), nullable=True),
    Column("toolsets", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_used_at", UTCDateTime, nullable=True),
    Column("revoked_at", UTCDateTime, nullable=True),
    CheckConstraint("kind IN ('personal', 'agent')", name="kind"),
    CheckConstraint("role IS NULL OR role IN ('read', 'write', 'admin')", name="role"),
    Index("ix_api_tokens_user_id", "user_id"),
)


# Short-lived, read-only tokens that follow projects' live events (and nothing else): made by
# a person or their token for at most the projects it may read, the secret stored as SHA-256.
stream_tokens = Table(
    "stream_tokens",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(120), nullable=False),
    Column("secret_hash", String(64), nullable=False, unique=True),
    Column("display_prefix", String(16), nullable=False),
    Column("project_ids", JSON, nullable=False),
    Column("created_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("revoked_at", UTCDateTime, nullable=True),
    Index("ix_stream_tokens_user_id", "user_id"),
)


# A person's signed-in browser: the cookie holds a secret, this row its SHA-256. Renewed at
# every login (a new row), deleted at logout; the CSRF token belongs to the session.
web_sessions = Table(
    "web_sessions",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Index("ix_web_sessions_user_id", "user_id"),
)
