"""Tables of the oauth area: clients, consent requests waiting for a person, grants, and the
codes and tokens a grant gave out (each stored as the SHA-256 of its secret)."""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Column, ForeignKey, Index, String, Table

from crewboard.storage.schema import ID, metadata
from crewboard.storage.types import UTCDateTime

CLIENT_ID = 2000  # a client ID metadata document's URL is its client ID

oauth_clients = Table(
    "oauth_clients",
    metadata,
    Column("id", String(CLIENT_ID), primary_key=True),
    Column("kind", String(16), nullable=False),  # registered | document
    Column("name", String(200), nullable=False),
    Column("redirect_uris", JSON, nullable=False),
    Column("auth_method", String(32), nullable=False),
    Column("scope", String(500), nullable=True),
    Column("secret_hash", String(64), nullable=True),
    Column("client_metadata", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),  # a fetched document's cache lifetime
)

oauth_requests = Table(
    "oauth_requests",
    metadata,
    Column("id", String(64), primary_key=True),
    Column(
        "client_id",
        String(CLIENT_ID),
        ForeignKey("oauth_clients.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("redirect_uri", String(2000), nullable=False),
    Column("redirect_explicit", Boolean, nullable=False),
    Column("scopes", JSON, nullable=False),
    Column("resource", String(2000), nullable=False),
    Column("code_challenge", String(128), nullable=False),
    Column("state", String(1000), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Index("ix_oauth_requests_expires_at", "expires_at"),
)

oauth_grants = Table(
    "oauth_grants",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column(
        "client_id",
        String(CLIENT_ID),
        ForeignKey("oauth_clients.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("client_name", String(200), nullable=False),
    Column("scopes", JSON, nullable=False),
    Column("resource", String(2000), nullable=False),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=True),
    Column("role", String(16), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_used_at", UTCDateTime, nullable=True),
    Column("revoked_at", UTCDateTime, nullable=True),
    Column("revoked_reason", String(64), nullable=True),
    Index("ix_oauth_grants_user_id", "user_id"),
    Index("ix_oauth_grants_client_id", "client_id"),
)

# Authorization codes, access tokens and refresh tokens, by the SHA-256 of their secret.
# `used_at` marks a code exchanged or a refresh token rotated: presenting it again is a replay,
# and the grant it came from is revoked with everything it gave out.
oauth_secrets = Table(
    "oauth_secrets",
    metadata,
    Column("secret_hash", String(64), primary_key=True),
    Column("kind", String(8), nullable=False),  # code | access | refresh
    Column(
        "grant_id", String(ID), ForeignKey("oauth_grants.id", ondelete="CASCADE"), nullable=False
    ),
    Column("redirect_uri", String(2000), nullable=True),  # codes only
    Column("redirect_explicit", Boolean, nullable=True),
    Column("code_challenge", String(128), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("used_at", UTCDateTime, nullable=True),
    Index("ix_oauth_secrets_grant_id", "grant_id"),
    Index("ix_oauth_secrets_expires_at", "expires_at"),
)
