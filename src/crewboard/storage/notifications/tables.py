"""Tables of the notifications area: what each person was told, the email outbox the mailer
sends from after the commit, and each person's notification settings."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import id_column, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

# One row per person and cause: (user_id, source, kind) is unique, so a cause written twice
# (a retried use case, a second call) tells a person once. `in_app` false: the row only
# carries an email, and the person's list does not show it.
notifications = sa.Table(
    "notifications",
    metadata,
    id_column(),
    ref("user_id", "users"),
    project_ref(nullable=True),
    required("kind", sa.String(64)),
    required("title", sa.String(200)),
    required("body", sa.Text),
    required("link", sa.String(500)),
    required("source", sa.String(200)),
    required("in_app", sa.Boolean, default=True),
    required("created_at", UTCDateTime),
    optional("read_at", UTCDateTime),
    sa.UniqueConstraint("user_id", "source", "kind"),
    # A person's list, newest first, and their unread ones (read_at IS NULL).
    sa.Index("ix_notifications_user_id_read_at", "user_id", "read_at", "created_at"),
    sa.Index("ix_notifications_project_id", "project_id"),
)

# One email per notification, sent by the mailer after the commit that queued it.
email_outbox = sa.Table(
    "email_outbox",
    metadata,
    id_column(),
    ref("notification_id", "notifications", unique=True),
    required("to_address", sa.String(254)),
    required("subject", sa.String(200)),
    required("body_text", sa.Text),
    required("status", sa.String(8)),
    required("attempts", sa.Integer),
    required("next_attempt_at", UTCDateTime),
    optional("claimed_until", UTCDateTime),
    optional("last_error", sa.Text),
    required("created_at", UTCDateTime),
    optional("sent_at", UTCDateTime),
    sa.CheckConstraint("status IN ('pending', 'sent', 'failed')", name="status"),
    # The mailer's scan: pending rows by when they are due.
    sa.Index("ix_email_outbox_status_next_attempt_at", "status", "next_attempt_at"),
)

notification_settings = sa.Table(
    "notification_settings",
    metadata,
    ref("user_id", "users", primary_key=True),
    required("in_app", sa.Boolean, default=True),
    required("email", sa.Boolean, default=False),
    required("updated_at", UTCDateTime),
)
