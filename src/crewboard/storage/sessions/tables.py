"""Tables of the sessions area: the model providers and models an admin configured, a
project's default model, and the spec sessions with their messages, turns (the work queue the
runners claim) and proposals (what waits for a person)."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import ID, id_column, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

SLUG = 64

# The key itself is never stored: only where to read it (an environment variable or a file).
session_providers = sa.Table(
    "session_providers",
    metadata,
    id_column(SLUG),
    required("kind", sa.String(16)),  # openai | anthropic
    required("base_url", sa.String(500)),
    optional("key_env", sa.String(200)),
    optional("key_file", sa.String(1000)),
    required("timeout_seconds", sa.Float),
    required("max_retries", sa.Integer),
    required("stream", sa.Boolean),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
)

session_models = sa.Table(
    "session_models",
    metadata,
    id_column(SLUG),
    ref("provider_id", "session_providers", length=SLUG),
    required("model", sa.String(200)),  # the provider's own name for it
    required("label", sa.String(200)),
    required("max_tokens", sa.Integer),
    required("is_default", sa.Boolean),
    required("created_at", UTCDateTime),
    sa.Index("ix_session_models_provider_id", "provider_id"),
)

project_session_settings = sa.Table(
    "project_session_settings",
    metadata,
    project_ref(primary_key=True),
    ref("model_id", "session_models", length=SLUG, ondelete="SET NULL", nullable=True),
    required("updated_at", UTCDateTime),
)

spec_sessions = sa.Table(
    "spec_sessions",
    metadata,
    id_column(),
    project_ref(),
    required("title", sa.String(500)),
    required("mode", sa.String(16)),
    required("workflow_id", sa.String(SLUG)),
    required("language", sa.String(8)),
    optional("model_id", sa.String(SLUG)),  # as chosen: kept if the model goes away
    required("status", sa.String(16)),
    required("pending_action", sa.String(40)),
    required("attachment_ids", sa.JSON),
    required("spec_file_ids", sa.JSON),
    required("turn_count", sa.Integer),
    required("message_count", sa.Integer),
    required("input_tokens", sa.Integer),
    required("output_tokens", sa.Integer),
    required("provider_seconds", sa.Float),
    optional("last_error", sa.JSON),
    required("created_by", sa.JSON),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    optional("archived_at", UTCDateTime),
    sa.Index("ix_spec_sessions_project_id_updated_at", "project_id", "updated_at", "id"),
)

spec_session_messages = sa.Table(
    "spec_session_messages",
    metadata,
    id_column(),
    ref("session_id", "spec_sessions"),
    required("seq", sa.Integer),
    required("role", sa.String(16)),
    required("content", sa.Text),
    optional("author", sa.JSON),
    required("created_at", UTCDateTime),
    sa.Index("ix_spec_session_messages_session_id_seq", "session_id", "seq", unique=True),
)

spec_session_turns = sa.Table(
    "spec_session_turns",
    metadata,
    id_column(),
    ref("session_id", "spec_sessions"),
    required("project_id", sa.String(ID)),
    required("seq", sa.Integer),
    required("status", sa.String(16)),
    optional("model_id", sa.String(SLUG)),
    required("attempts", sa.Integer),
    required("partial", sa.Text),
    optional("error", sa.JSON),
    required("input_tokens", sa.Integer),
    required("output_tokens", sa.Integer),
    required("provider_seconds", sa.Float),
    required("queued_at", UTCDateTime),
    optional("started_at", UTCDateTime),
    optional("finished_at", UTCDateTime),
    optional("claim", sa.String(64)),  # the runner holding it, while it runs
    optional("lease_until", UTCDateTime),
    sa.Index("ix_spec_session_turns_session_id_seq", "session_id", "seq", unique=True),
    # The runners' claim: queued turns, and running ones whose lease ran out.
    sa.Index("ix_spec_session_turns_status_lease", "status", "lease_until"),
)

spec_session_proposals = sa.Table(
    "spec_session_proposals",
    metadata,
    id_column(),
    ref("session_id", "spec_sessions"),
    required("project_id", sa.String(ID)),
    required("turn_id", sa.String(ID)),
    required("kind", sa.String(16)),
    required("status", sa.String(16)),
    required("body", sa.JSON),
    optional("path", sa.String(512)),
    optional("base_version", sa.String(128)),
    required("created_at", UTCDateTime),
    optional("decided_by", sa.JSON),
    optional("decided_at", UTCDateTime),
    optional("feedback", sa.Text),
    optional("result", sa.JSON),
    sa.Index("ix_spec_session_proposals_session_id_status", "session_id", "status", "created_at"),
)
