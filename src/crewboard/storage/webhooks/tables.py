"""Tables of the webhooks area: the subscriptions (each with its cursor in the event log, its
failing state and the lease of the node sending for it) and the delivery log."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import (
    EventId,
    id_column,
    metadata,
    optional,
    project_ref,
    ref,
    required,
)
from crewboard.storage.types import UTCDateTime

webhooks = sa.Table(
    "webhooks",
    metadata,
    id_column(),
    project_ref(),
    optional("workspace_id", sa.String(32)),
    required("url", sa.String(2000)),
    optional("description", sa.String(500)),
    required("events", sa.JSON),
    required("secret", sa.String(100)),
    required("state", sa.String(16)),
    optional("paused_reason", sa.String(500)),
    optional("paused_at", UTCDateTime),
    required("cursor", EventId),
    required("attempts", sa.Integer),
    optional("failing_since", UTCDateTime),
    optional("next_attempt_at", UTCDateTime),
    optional("lease_owner", sa.String(64)),
    optional("lease_until", UTCDateTime),
    required("created_by", sa.JSON),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    sa.Index("ix_webhooks_project_id", "project_id", "created_at"),
    # The dispatcher's look for due subscriptions: active ones by their cursor.
    sa.Index("ix_webhooks_state_project_id_cursor", "state", "project_id", "cursor"),
)

webhook_deliveries = sa.Table(
    "webhook_deliveries",
    metadata,
    id_column(),
    ref("webhook_id", "webhooks"),
    project_ref(),
    optional("event_id", EventId),
    # The event id again for kind `event` only (null for redeliveries and pings), so that a
    # subscription logs each event it sends once; nulls never collide in a unique index.
    optional("once_event_id", EventId),
    required("event_type", sa.String(64)),
    required("kind", sa.String(16)),
    required("state", sa.String(16)),
    required("attempts", sa.Integer),
    optional("response_status", sa.Integer),
    optional("response_excerpt", sa.Text),
    optional("error", sa.String(1000)),
    optional("duration_ms", sa.Integer),
    required("created_at", UTCDateTime),
    optional("last_attempt_at", UTCDateTime),
    optional("next_attempt_at", UTCDateTime),
    optional("delivered_at", UTCDateTime),
    # One log entry per event a subscription sends (redeliveries and pings are their own).
    sa.Index("ix_webhook_deliveries_once", "webhook_id", "once_event_id", unique=True),
    sa.Index("ix_webhook_deliveries_webhook_id", "webhook_id", "created_at", "id"),
    # Redeliveries and pings waiting to go out.
    sa.Index("ix_webhook_deliveries_state_kind", "state", "kind", "next_attempt_at"),
)
