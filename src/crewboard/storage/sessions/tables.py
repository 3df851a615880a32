"""Tables of the sessions area: the model providers and models an admin configured, a
project's default model, and the spec sessions with their messages, turns (the work queue the
runners claim) and proposals (what waits for a person)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from crewboard.storage.schema import ID, metadata
from crewboard.storage.types import UTCDateTime

SLUG = 64

# The key itself is never stored: only where to read it (an environment variable or a file).
session_providers = Table(
    "session_providers",
    metadata,
    Column("id", String(SLUG), primary_key=True),
    Column("kind", String(16), nullable=False),  # openai | anthropic
    Column("base_url", String(500), nullable=False),
    Column("key_env", String(200), nullable=True),
    Column("key_file", String(1000), nullable=True),
    Column("timeout_seconds", Float, nullable=False),
    Column("max_retries", Integer, nullable=False),
    Column("stream", Boolean, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

session_models = Table(
    "session_models",
    metadata,
    Column("id", String(SLUG), primary_key=True),
    Column(
        "provider_id",
        String(SLUG),
        ForeignKey("session_providers.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("model", String(200), nullable=False),  # the provider's own name for it
    Column("label", String(200), nullable=False),
    Column("max_tokens", Integer, nullable=False),
    Column("is_default", Boolean, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_session_models_provider_id", "provider_id"),
)

project_session_settings = Table(
    "project_session_settings",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column(
        "model_id",
        String(SLUG),
        ForeignKey("session_models.id", ondelete="SET NULL"),
        nullable=True,
    ),
    Column("updated_at", UTCDateTime, nullable=False),
)

spec_sessions = Table(
    "spec_sessions",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("title", String(500), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("workflow_id", String(SLUG), nullable=False),
    Column("language", String(8), nullable=False),
    Column("model_id", String(SLUG), nullable=True),  # as chosen: kept if the model goes away
    Column("status", String(16), nullable=False),
    Column("pending_action", String(40), nullable=False),
    Column("attachment_ids", JSON, nullable=False),
    Column("spec_file_ids", JSON, nullable=False),
    Column("turn_count", Integer, nullable=False),
    Column("message_count", Integer, nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("provider_seconds", Float, nullable=False),
    Column("last_error", JSON, nullable=True),
    Column("created_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("archived_at", UTCDateTime, nullable=True),
    Index("ix_spec_sessions_project_id_updated_at", "project_id", "updated_at", "id"),
)

spec_session_messages = Table(
    "spec_session_messages",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column(
        "session_id", String(ID), ForeignKey("spec_sessions.id", ondelete="CASCADE"), nullable=False
    ),
    Column("seq", Integer, nullable=False),
    Column("role", String(16), nullable=False),
    Column("content", Text, nullable=False),
    Column("author", JSON, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_spec_session_messages_session_id_seq", "session_id", "seq", unique=True),
)

spec_session_turns = Table(
    "spec_session_turns",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column(
        "session_id", String(ID), ForeignKey("spec_sessions.id", ondelete="CASCADE"), nullable=False
    ),
    Column("project_id", String(ID), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("model_id", String(SLUG), nullable=True),
    Column("attempts", Integer, nullable=False),
    Column("partial", Text, nullable=False),
    Column("error", JSON, nullable=True),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("provider_seconds", Float, nullable=False),
    Column("queued_at", UTCDateTime, nullable=False),
    Column("started_at", UTCDateTime, nullable=True),
    Column("finished_at", UTCDateTime, nullable=True),
    Column("claim", String(64), nullable=True),  # the runner holding it, while it runs
    Column("lease_until", UTCDateTime, nullable=True),
    Index("ix_spec_session_turns_session_id_seq", "session_id", "seq", unique=True),
    # The runners' claim: queued turns, and running ones whose lease ran out.
    Index("ix_spec_session_turns_status_lease", "status", "lease_until"),
)

spec_session_proposals = Table(
    "spec_session_proposals",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column(
        "session_id", String(ID), ForeignKey("spec_sessions.id", ondelete="CASCADE"), nullable=False
    ),
    Column("project_id", String(ID), nullable=False),
    Column("turn_id", String(ID), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("body", JSON, nullable=False),
    Column("path", String(512), nullable=True),
    Column("base_version", String(128), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("decided_by", JSON, nullable=True),
    Column("decided_at", UTCDateTime, nullable=True),
    Column("feedback", Text, nullable=True),
    Column("result", JSON, nullable=True),
    Index("ix_spec_session_proposals_session_id_status", "session_id", "status", "created_at"),
)
