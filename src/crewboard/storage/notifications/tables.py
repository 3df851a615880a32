"""Tables of the notifications area: what each person was told, the email outbox the mailer
sends from after the commit, and each person's notification settings."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from crewboard.storage.schema import ID, metadata
from crewboard.storage.types import UTCDateTime

# One row per person and cause: (user_id, source, kind) is unique, so a cause written twice
# (a retried use case, a second call) tells a person once. `in_app` false: the row only
# carries an email, and the person's list does not show it.
notifications = Table(
    "notifications",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=True),
    Column("kind", String(64), nullable=False),
    Column("title", String(200), nullable=False),
    Column("body", Text, nullable=False),
    Column("link", String(500), nullable=False),
    Column("source", String(200), nullable=False),
    Column("in_app", Boolean, nullable=False, default=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("read_at", UTCDateTime, nullable=True),
    UniqueConstraint("user_id", "source", "kind"),
    # A person's list, newest first, and their unread ones (read_at IS NULL).
    Index("ix_notifications_user_id_read_at", "user_id", "read_at", "created_at"),
    Index("ix_notifications_project_id", "project_id"),
)

# One email per notification, sent by the mailer after the commit that queued it.
email_outbox = Table(
    "email_outbox",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column(
        "notification_id",
        String(ID),
        ForeignKey("notifications.id", ondelete="CASCADE"),
        nullable=False,
        unique=True,
    ),
    Column("to_address", String(254), nullable=False),
    Column("subject", String(200), nullable=False),
    Column("body_text", Text, nullable=False),
    Column("status", String(8), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", UTCDateTime, nullable=False),
    Column("claimed_until", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("sent_at", UTCDateTime, nullable=True),
    CheckConstraint("status IN ('pending', 'sent', 'failed')", name="status"),
    # The mailer's scan: pending rows by when they are due.
    Index("ix_email_outbox_status_next_attempt_at", "status", "next_attempt_at"),
)

notification_settings = Table(
    "notification_settings",
    metadata,
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("in_app", Boolean, nullable=False, default=True),
    Column("email", Boolean, nullable=False, default=False),
    Column("updated_at", UTCDateTime, nullable=False),
)
