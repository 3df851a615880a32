"""Tables of the review area: drafts (hand-ins), proposals, acceptance rules, inbox messages."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import ID, id_column, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

# An AI hand-in waiting for (or decided by) a person.
drafts = sa.Table(
    "drafts",
    metadata,
    id_column(),
    project_ref(),
    ref("task_id", "tasks", ondelete="SET NULL", nullable=True),
    # The task a chain of revisions started from: a newer draft anywhere in the chain
    # supersedes the older ones when it is accepted.
    required("root_task_id", sa.String(ID)),
    required("title", sa.String(300)),
    required("summary", sa.Text),
    required("content", sa.Text),
    optional("collection", sa.String(200)),
    optional("document", sa.String(16)),
    required("references", sa.JSON),
    optional("context_receipt_id", sa.String(ID)),
    required("status", sa.String(24)),
    required("via", sa.String(8)),
    required("author", sa.JSON),
    optional("token_id", sa.String(ID)),
    optional("role_id", sa.String(ID)),
    optional("idempotency_key", sa.String(128)),
    required("task_moved", sa.Boolean),
    optional("task_status_before", sa.String(16)),
    optional("follow_up_task_id", sa.String(ID)),
    optional("review_comment", sa.Text),
    optional("memory_record_id", sa.String(ID)),
    optional("rule_id", sa.String(ID)),
    optional("decided_by", sa.JSON),
    optional("decided_at", UTCDateTime),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    sa.CheckConstraint(
        "status IN ('pending', 'revision_requested', 'approved', 'rejected', 'saved_to_memory', "
        "'accepted_by_rule', 'returned_to_review', 'superseded')",
        name="status",
    ),
    sa.Index("ix_drafts_project_id_status_created_at", "project_id", "status", "created_at"),
    sa.Index("ix_drafts_root_task_id", "root_task_id"),
    sa.Index("ix_drafts_task_id", "task_id"),
    sa.Index("ix_drafts_context_receipt_id", "context_receipt_id"),
)


# Inbox cards an agent proposes: accept applies one in a transaction, dismiss changes nothing.
proposals = sa.Table(
    "proposals",
    metadata,
    id_column(),
    project_ref(),
    required("kind", sa.String(16)),
    optional("task_id", sa.String(ID)),
    required("payload", sa.JSON),
    required("reason", sa.Text),
    required("status", sa.String(12)),
    required("author", sa.JSON),
    optional("token_id", sa.String(ID)),
    optional("result", sa.JSON),
    optional("decided_by", sa.JSON),
    optional("decided_at", UTCDateTime),
    required("created_at", UTCDateTime),
    sa.CheckConstraint(
        "kind IN ('task', 'task_update', 'task_delete', 'role', 'composition')", name="kind"
    ),
    sa.CheckConstraint("status IN ('pending', 'accepted', 'dismissed')", name="status"),
    sa.Index("ix_proposals_project_id_status_created_at", "project_id", "status", "created_at"),
)


# Automatic acceptance a project admin turned on: all hand-ins, or by task type or AI role.
acceptance_rules = sa.Table(
    "acceptance_rules",
    metadata,
    id_column(),
    project_ref(),
    required("match", sa.String(12)),
    optional("value", sa.String(200)),
    optional("collection", sa.String(200)),
    optional("document", sa.String(16)),
    required("created_by", sa.JSON),
    required("created_at", UTCDateTime),
    sa.CheckConstraint("match IN ('all', 'task_type', 'ai_role')", name="match"),
    sa.Index("ix_acceptance_rules_project_id", "project_id"),
)


# Inbox threads: one per participant (a team role or a person) of a project.
inbox_messages = sa.Table(
    "inbox_messages",
    metadata,
    id_column(),
    project_ref(),
    required("participant_id", sa.String(ID)),
    ref("task_id", "tasks", ondelete="SET NULL", nullable=True),
    required("body", sa.Text),
    required("author", sa.JSON),
    required("created_at", UTCDateTime),
    optional("dismissed_at", UTCDateTime),
    optional("dismissed_by", sa.JSON),
    sa.Index(
        "ix_inbox_messages_project_id_participant_id_created_at",
        "project_id",
        "participant_id",
        "created_at",
    ),
    sa.Index("ix_inbox_messages_project_id_created_at", "project_id", "created_at"),
)


# What each person has read in their inbox: a row per (person, item). Reading is personal, so
# one person opening a hand-in leaves it new for everyone else. Items are the inbox's kinds.
inbox_reads = sa.Table(
    "inbox_reads",
    metadata,
    ref("user_id", "users", primary_key=True),
    sa.Column("item_kind", sa.String(12), primary_key=True),
    sa.Column("item_id", sa.String(ID), primary_key=True),
    project_ref(),
    required("read_at", UTCDateTime),
    sa.CheckConstraint(
        "item_kind IN ('hand_in', 'proposal', 'question', 'message')", name="item_kind"
    ),
    sa.Index("ix_inbox_reads_project_id_user_id", "project_id", "user_id"),
)
