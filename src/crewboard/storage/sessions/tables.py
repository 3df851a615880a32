"""Tables of the sessions area: the model providers and models an admin configured, a
project's default model, and the spec sessions with their messages, turns (the work queue the
runners claim) and proposals (what waits for a person); and the code bridges (a person's
`crewboard reverse`) with the code calls a turn's model sends them."""

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
    # What the person should know of the session ({"code", "message"}, e.g. its model takes
    # no tools); shown as warnings.
    required("notices", sa.JSON, server_default=sa.text("'[]'")),
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


# A person's `crewboard reverse` for one project: at most one is current (neither closed nor
# replaced); it is live while it was seen (an exchange) in the last 45 seconds.
code_bridges = sa.Table(
    "code_bridges",
    metadata,
    id_column(),
    project_ref(),
    ref("user_id", "users"),
    optional("token_id", sa.String(ID)),  # the token it registered with
    required("folder", sa.String(200)),  # the folder's name, as the person's machine gave it
    optional("client", sa.String(100)),
    optional("node", sa.String(64)),  # the node it registered on
    required("connected_at", UTCDateTime),
    required("last_seen_at", UTCDateTime),
    optional("closed_at", UTCDateTime),
    optional("replaced_at", UTCDateTime),
    sa.Index("ix_code_bridges_user_id_project_id", "user_id", "project_id"),
)

# One tool call a turn's model made, addressed to the session creator's bridge: queued, taken
# by a bridge, answered (or failed). The answer is kept only until the turn reads it; then
# only its summary stays.
code_calls = sa.Table(
    "code_calls",
    metadata,
    id_column(),
    project_ref(),
    required("user_id", sa.String(ID)),  # whose bridge answers it
    ref("session_id", "spec_sessions"),
    required("turn_id", sa.String(ID)),
    required("seq", sa.Integer),
    required("tool", sa.String(32)),
    required("arguments", sa.JSON),
    required("status", sa.String(16)),  # queued | taken | answered | failed
    ref("bridge_id", "code_bridges", ondelete="SET NULL", nullable=True),
    optional("taken_at", UTCDateTime),
    optional("answer", sa.JSON),
    optional("summary", sa.JSON),
    required("created_at", UTCDateTime),
    optional("answered_at", UTCDateTime),
    sa.Index("ix_code_calls_turn_id_seq", "turn_id", "seq", unique=True),
    # A bridge's take: the person's queued (or long-taken) calls in the project, oldest first.
    sa.Index("ix_code_calls_user_id_project_id_status", "user_id", "project_id", "status"),
    sa.Index("ix_code_calls_session_id", "session_id"),
    sa.Index("ix_code_calls_bridge_id", "bridge_id"),
)
