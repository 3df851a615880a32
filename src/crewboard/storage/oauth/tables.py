"""Tables of the oauth area: clients, consent requests waiting for a person, grants, and the
codes and tokens a grant gave out (each stored as the SHA-256 of its secret)."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import id_column, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

CLIENT_ID = 2000  # a client ID metadata document's URL is its client ID

oauth_clients = sa.Table(
    "oauth_clients",
    metadata,
    id_column(CLIENT_ID),
    required("kind", sa.String(16)),  # registered | document
    required("name", sa.String(200)),
    required("redirect_uris", sa.JSON),
    required("auth_method", sa.String(32)),
    optional("scope", sa.String(500)),
    optional("secret_hash", sa.String(64)),
    required("client_metadata", sa.JSON),
    required("created_at", UTCDateTime),
    optional("expires_at", UTCDateTime),  # a fetched document's cache lifetime
)

oauth_requests = sa.Table(
    "oauth_requests",
    metadata,
    id_column(64),
    ref("client_id", "oauth_clients", length=CLIENT_ID),
    required("redirect_uri", sa.String(2000)),
    required("redirect_explicit", sa.Boolean),
    required("scopes", sa.JSON),
    required("resource", sa.String(2000)),
    required("code_challenge", sa.String(128)),
    optional("state", sa.String(1000)),
    required("created_at", UTCDateTime),
    required("expires_at", UTCDateTime),
    sa.Index("ix_oauth_requests_expires_at", "expires_at"),
)

oauth_grants = sa.Table(
    "oauth_grants",
    metadata,
    id_column(),
    ref("user_id", "users"),
    ref("client_id", "oauth_clients", length=CLIENT_ID),
    required("client_name", sa.String(200)),
    required("scopes", sa.JSON),
    required("resource", sa.String(2000)),
    project_ref(nullable=True),
    optional("role", sa.String(16)),
    required("created_at", UTCDateTime),
    optional("last_used_at", UTCDateTime),
    optional("revoked_at", UTCDateTime),
    optional("revoked_reason", sa.String(64)),
    sa.Index("ix_oauth_grants_user_id", "user_id"),
    sa.Index("ix_oauth_grants_client_id", "client_id"),
)

# Authorization codes, access tokens and refresh tokens, by the SHA-256 of their secret.
# `used_at` marks a code exchanged or a refresh token rotated: presenting it again is a replay,
# and the grant it came from is revoked with everything it gave out.
oauth_secrets = sa.Table(
    "oauth_secrets",
    metadata,
    sa.Column("secret_hash", sa.String(64), primary_key=True),
    required("kind", sa.String(8)),  # code | access | refresh
    ref("grant_id", "oauth_grants"),
    optional("redirect_uri", sa.String(2000)),  # codes only
    optional("redirect_explicit", sa.Boolean),
    optional("code_challenge", sa.String(128)),
    required("created_at", UTCDateTime),
    required("expires_at", UTCDateTime),
    optional("used_at", UTCDateTime),
    sa.Index("ix_oauth_secrets_grant_id", "grant_id"),
    sa.Index("ix_oauth_secrets_expires_at", "expires_at"),
)
