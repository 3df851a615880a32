"""Tables of the review area: drafts (hand-ins), proposals, acceptance rules, inbox messages."""

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
    Text,
)

from crewboard.storage.schema import ID, metadata
from crewboard.storage.types import UTCDateTime

# An AI hand-in waiting for (or decided by) a person.
drafts = Table(
    "drafts",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="SET NULL"), nullable=True),
    # The task a chain of revisions started from: a newer draft anywhere in the chain
    # supersedes the older ones when it is accepted.
    Column("root_task_id", String(ID), nullable=False),
    Column("title", String(300), nullable=False),
    Column("summary", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("collection", String(200), nullable=True),
    Column("document", String(16), nullable=True),
    Column("references", JSON, nullable=False),
    Column("context_receipt_id", String(ID), nullable=True),
    Column("status", String(24), nullable=False),
    Column("via", String(8), nullable=False),
    Column("author", JSON, nullable=False),
    Column("token_id", String(ID), nullable=True),
    Column("role_id", String(ID), nullable=True),
    Column("idempotency_key", String(128), nullable=True),
    Column("task_moved", Boolean, nullable=False),
    Column("task_status_before", String(16), nullable=True),
    Column("follow_up_task_id", String(ID), nullable=True),
    Column("review_comment", Text, nullable=True),
    Column("memory_record_id", String(ID), nullable=True),
    Column("rule_id", String(ID), nullable=True),
    Column("decided_by", JSON, nullable=True),
    Column("decided_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint(
        "status IN ('pending', 'revision_requested', 'approved', 'rejected', 'saved_to_memory', "
        "'accepted_by_rule', 'returned_to_review', 'superseded')",
        name="status",
    ),
    Index("ix_drafts_project_id_status_created_at", "project_id", "status", "created_at"),
    Index("ix_drafts_root_task_id", "root_task_id"),
    Index("ix_drafts_task_id", "task_id"),
    Index("ix_drafts_context_receipt_id", "context_receipt_id"),
)


# Inbox cards an agent proposes: accept applies one in a transaction, dismiss changes nothing.
proposals = Table(
    "proposals",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("task_id", String(ID), nullable=True),
    Column("payload", JSON, nullable=False),
    Column("reason", Text, nullable=False),
    Column("status", String(12), nullable=False),
    Column("author", JSON, nullable=False),
    Column("token_id", String(ID), nullable=True),
    Column("result", JSON, nullable=True),
    Column("decided_by", JSON, nullable=True),
    Column("decided_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint(
        "kind IN ('task', 'task_update', 'task_delete', 'role', 'composition')", name="kind"
    ),
    CheckConstraint("status IN ('pending', 'accepted', 'dismissed')", name="status"),
    Index("ix_proposals_project_id_status_created_at", "project_id", "status", "created_at"),
)


# Automatic acceptance a project admin turned on: all hand-ins, or by task type or AI role.
acceptance_rules = Table(
    "acceptance_rules",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("match", String(12), nullable=False),
    Column("value", String(200), nullable=True),
    Column("collection", String(200), nullable=True),
    Column("document", String(16), nullable=True),
    Column("created_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("match IN ('all', 'task_type', 'ai_role')", name="match"),
    Index("ix_acceptance_rules_project_id", "project_id"),
)


# Inbox threads: one per participant (a team role or a person) of a project.
inbox_messages = Table(
    "inbox_messages",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("participant_id", String(ID), nullable=False),
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="SET NULL"), nullable=True),
    Column("body", Text, nullable=False),
    Column("author", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("dismissed_at", UTCDateTime, nullable=True),
    Column("dismissed_by", JSON, nullable=True),
    Index(
        "ix_inbox_messages_project_id_participant_id_created_at",
        "project_id",
        "participant_id",
        "created_at",
    ),
    Index("ix_inbox_messages_project_id_created_at", "project_id", "created_at"),
)


# What each person has read in their inbox: a row per (person, item). Reading is personal, so
# one person opening a hand-in leaves it new for everyone else. Items are the inbox's kinds.
inbox_reads = Table(
    "inbox_reads",
    metadata,
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("item_kind", String(12), primary_key=True),
    Column("item_id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("read_at", UTCDateTime, nullable=False),
    CheckConstraint(
        "item_kind IN ('hand_in', 'proposal', 'question', 'message')", name="item_kind"
    ),
    Index("ix_inbox_reads_project_id_user_id", "project_id", "user_id"),
)
