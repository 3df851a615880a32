"""Table definitions: the schema the migrations must produce (a test compares the two)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from crewboard.storage.types import UTCDateTime

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = MetaData(naming_convention=NAMING)

ID = 32  # prefixed ids: "prj_" + 22 characters

# SQLite only autoincrements an INTEGER PRIMARY KEY; BIGINT elsewhere.
EventId = BigInteger().with_variant(Integer(), "sqlite")

users = Table(
    "users",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("email", String(254), nullable=False, unique=True),
    Column("display_name", String(120), nullable=False),
    Column("password_hash", String(255), nullable=False),
    Column("is_owner", Boolean, nullable=False, default=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

workspaces = Table(
    "workspaces",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("name", String(120), nullable=False),
    Column("created_by", String(ID), ForeignKey("users.id"), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

workspace_members = Table(
    "workspace_members",
    metadata,
    Column(
        "workspace_id",
        String(ID),
        ForeignKey("workspaces.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("role", String(16), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("role IN ('member', 'admin')", name="role"),
    Index("ix_workspace_members_user_id", "user_id"),
)

projects = Table(
    "projects",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("workspace_id", String(ID), ForeignKey("workspaces.id"), nullable=True),
    Column("owner_user_id", String(ID), ForeignKey("users.id"), nullable=False),
    Column("key", String(10), nullable=False, unique=True),
    Column("name", String(120), nullable=False),
    Column("goal", Text, nullable=False),
    Column("phase", String(100), nullable=False),
    Column("status", String(16), nullable=False),
    Column("description", Text, nullable=False),
    Column("type", String(16), nullable=False),
    Column("collections", JSON, nullable=False),
    Column("archived_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint("status IN ('planning', 'active', 'paused', 'done')", name="status"),
    CheckConstraint("type IN ('greenfield', 'brownfield', 'auto')", name="type"),
    Index("ix_projects_workspace_id", "workspace_id"),
)

# Per-project counters (task numbers today; spec comments, handoffs… later). A write takes
# the next value with one upsert that locks the counter row until it commits, so concurrent
# writers on PostgreSQL queue up on the row instead of racing for max(number) + 1.
project_sequences = Table(
    "project_sequences",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("name", String(40), primary_key=True),
    Column("value", Integer, nullable=False),
)

project_members = Table(
    "project_members",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("role", String(8), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("role IN ('read', 'write', 'admin')", name="role"),
    Index("ix_project_members_user_id", "user_id"),
)

api_tokens = Table(
    "api_tokens",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(120), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("secret_hash", String(64), nullable=False, unique=True),
    Column("display_prefix", String(16), nullable=False),
    Column("scopes", JSON, nullable=False),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=True),
    Column("role", String(8), nullable=True),
    Column("toolsets", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_used_at", UTCDateTime, nullable=True),
    Column("revoked_at", UTCDateTime, nullable=True),
    CheckConstraint("kind IN ('personal', 'agent')", name="kind"),
    CheckConstraint("role IS NULL OR role IN ('read', 'write', 'admin')", name="role"),
    Index("ix_api_tokens_user_id", "user_id"),
)

# One row per (principal, key): written in the same transaction as the keyed write.
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("principal", String(ID), primary_key=True),
    Column("key", String(128), primary_key=True),
    Column("operation", String(64), nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("acknowledgement", JSON, nullable=False),
    Column("resource_type", String(32), nullable=True),
    Column("resource_id", String(64), nullable=True),
    Column("project_id", String(ID), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
)

# The event log: every change writes a row here in its own transaction. Rows outlive what
# they describe, so there are no foreign keys.
events = Table(
    "events",
    metadata,
    Column("id", EventId, primary_key=True, autoincrement=True),
    Column("project_id", String(ID), nullable=True),
    Column("workspace_id", String(ID), nullable=True),
    Column("type", String(64), nullable=False),
    Column("actor", JSON, nullable=False),
    Column("payload", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # Filled from the payload and actor by `record_event`: activity filters on them.
    Column("task_id", String(ID), nullable=True),
    Column("token_id", String(ID), nullable=True),
    Index("ix_events_project_id_id", "project_id", "id"),
    Index("ix_events_project_id_task_id_id", "project_id", "task_id", "id"),
    Index("ix_events_project_id_token_id_id", "project_id", "token_id", "id"),
    sqlite_autoincrement=True,
)

# The project's state page: the current text, and every saved version (restorable).
project_state = Table(
    "project_state",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("content", Text, nullable=False),
    Column("revision", Integer, nullable=False),
    Column("updated_by", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

project_state_versions = Table(
    "project_state_versions",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("revision", Integer, primary_key=True),
    Column("content", Text, nullable=False),
    Column("author", JSON, nullable=False),
    Column("restored_from", Integer, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
)

# Team roles (seats): an AI or human role on a project's team.
team_roles = Table(
    "team_roles",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(120), nullable=False),
    Column("role", String(500), nullable=False),
    Column("kind", String(8), nullable=False),
    Column(
        "member_user_id", String(ID), ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    ),
    Column("model", String(120), nullable=True),
    Column("effort", String(16), nullable=True),
    Column("rank", Integer, nullable=False),
    Column("level", Integer, nullable=False),
    Column("xp", Integer, nullable=False),
    Column("archived_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("kind IN ('ai', 'human')", name="kind"),
    Index("ix_team_roles_project_id", "project_id"),
)

# --- The task board -------------------------------------------------------------------------

tasks = Table(
    "tasks",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("title", String(300), nullable=False),
    Column("description", Text, nullable=False),
    Column("brief", Text, nullable=False),
    Column("type", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("priority", String(8), nullable=False),
    Column("assignee_id", String(ID), nullable=True),
    Column("assignee_type", String(8), nullable=True),
    Column(
        "human_owner_id", String(ID), ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    ),
    Column("tags", JSON, nullable=False),
    Column("labels", JSON, nullable=False),
    Column("due_date", Date, nullable=True),
    Column("start_date", Date, nullable=True),
    Column("story_points", Integer, nullable=True),
    Column("cycle", String(64), nullable=True),
    Column(
        "parent_task_id", String(ID), ForeignKey("tasks.id", ondelete="SET NULL"), nullable=True
    ),
    Column("context_refs", JSON, nullable=False),
    Column("context_item_ids", JSON, nullable=False),
    Column("external_reference_ids", JSON, nullable=False),
    Column("output_destination", String(200), nullable=True),
    Column("board_order", Float, nullable=False),
    Column("revision", Integer, nullable=False),
    Column("coverage", String(12), nullable=False),
    Column("created_by", JSON, nullable=False),
    Column("updated_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("project_id", "number", name="uq_tasks_project_id_number"),
    CheckConstraint(
        "status IN ('backlog', 'ready_for_ai', 'in_progress', 'blocked', 'review', 'approved', 'done')",
        name="status",
    ),
    CheckConstraint(
        "assignee_type IS NULL OR assignee_type IN ('ai', 'human')", name="assignee_type"
    ),
    Index("ix_tasks_project_id_status_number", "project_id", "status", "number"),
    Index("ix_tasks_project_id_updated_at", "project_id", "updated_at"),
    Index("ix_tasks_project_id_parent_task_id_number", "project_id", "parent_task_id", "number"),
    Index("ix_tasks_project_id_status_board_order", "project_id", "status", "board_order"),
    Index("ix_tasks_project_id_assignee_id", "project_id", "assignee_id"),
    Index("ix_tasks_project_id_due_date", "project_id", "due_date"),
)

# Tags and labels, lower-cased, one row each: filters use the index instead of scanning JSON.
task_labels = Table(
    "task_labels",
    metadata,
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True),
    Column("kind", String(8), primary_key=True),
    Column("value", String(64), primary_key=True),
    Column("project_id", String(ID), nullable=False),
    CheckConstraint("kind IN ('tag', 'label')", name="kind"),
    Index("ix_task_labels_project_id_kind_value", "project_id", "kind", "value"),
)

# One relationship per pair of tasks: (low, high) ordered ids. `blocks` names its blocker.
task_links = Table(
    "task_links",
    metadata,
    Column("low_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True),
    Column("high_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True),
    Column("project_id", String(ID), nullable=False),
    Column("type", String(8), nullable=False),
    Column("blocker_id", String(ID), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("type IN ('blocks', 'related')", name="type"),
    Index("ix_task_links_high_id", "high_id"),
)

# Lifecycle events, written in the transaction of the change they record.
task_events = Table(
    "task_events",
    metadata,
    Column("id", EventId, primary_key=True, autoincrement=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), nullable=False),
    Column("type", String(24), nullable=False),
    Column("occurred_at", UTCDateTime, nullable=False),
    Column("actor", JSON, nullable=False),
    Column("data", JSON, nullable=False),
    Column("status", String(16), nullable=False),
    Column("agent_assignee_id", String(ID), nullable=True),
    Column("human_assignee_id", String(ID), nullable=True),
    CheckConstraint(
        "type IN ('assignment_changed', 'status_changed', 'blocker_changed')", name="type"
    ),
    Index("ix_task_events_task_id_id", "task_id", "id"),
    Index("ix_task_events_project_id_occurred_at", "project_id", "occurred_at"),
    Index("ix_task_events_agent_assignee_id", "agent_assignee_id", "occurred_at"),
    Index("ix_task_events_human_assignee_id", "human_assignee_id", "occurred_at"),
    sqlite_autoincrement=True,
)

# Comments and agent progress notes on a task (kind tells them apart).
task_comments = Table(
    "task_comments",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("content", Text, nullable=False),
    Column("author", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    CheckConstraint("kind IN ('comment', 'agent_update')", name="kind"),
    Index("ix_task_comments_task_id_created_at", "task_id", "created_at"),
)

# Named deliverables saved on a task.
task_outputs = Table(
    "task_outputs",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("content", Text, nullable=False),
    Column("author", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_task_outputs_task_id_created_at", "task_id", "created_at"),
)

# Questions an agent asks; a person answers in the inbox and the answer shows on the task.
task_questions = Table(
    "task_questions",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), nullable=False),
    Column("question", Text, nullable=False),
    Column("asked_by", JSON, nullable=False),
    Column("asked_at", UTCDateTime, nullable=False),
    Column("answer", Text, nullable=True),
    Column("answered_by", JSON, nullable=True),
    Column("answered_at", UTCDateTime, nullable=True),
    Index("ix_task_questions_project_id_answered_at", "project_id", "answered_at"),
    Index("ix_task_questions_task_id", "task_id"),
)

# Code repositories a project works in, and the links of tasks to branches in them.
repos = Table(
    "repos",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("url", String(500), nullable=False),
    Column("default_branch", String(200), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("project_id", "name", name="uq_repos_project_id_name"),
)

task_repo_links = Table(
    "task_repo_links",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), nullable=False),
    Column("repo_id", String(ID), ForeignKey("repos.id", ondelete="CASCADE"), nullable=False),
    Column("agent", String(ID), nullable=False),
    Column("branch", String(200), nullable=False),
    Column("target_branch", String(200), nullable=True),
    Column("title", String(300), nullable=True),
    Column("summary", Text, nullable=True),
    Column("pr_url", String(500), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("task_id", "repo_id", "agent", "branch", name="uq_task_repo_links_identity"),
)

task_repo_reports = Table(
    "task_repo_reports",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), nullable=False),
    Column("repo_id", String(ID), ForeignKey("repos.id", ondelete="SET NULL"), nullable=True),
    Column("branch", String(200), nullable=True),
    Column("commit_sha", String(64), nullable=True),
    Column("tests", String(16), nullable=True),
    Column("summary", Text, nullable=True),
    Column("reported_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_task_repo_reports_task_id_created_at", "task_id", "created_at"),
)

# --- Review inbox and project memory -----------------------------------------------------------

# What one full get_task read handed out: [{kind, id, version}], to flag drafts built on inputs
# that changed later.
context_receipts = Table(
    "context_receipts",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("task_id", String(ID), nullable=False),
    Column("token_id", String(ID), nullable=False),
    Column("items", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_context_receipts_project_id_created_at", "project_id", "created_at"),
)

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

# Accepted knowledge: the current text of each record, and every version of it.
memory_records = Table(
    "memory_records",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("title", String(300), nullable=False),
    Column("summary", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("collection", String(200), nullable=True),
    Column("document", String(16), nullable=True),
    Column("status", String(8), nullable=False),
    Column("source_draft_id", String(ID), nullable=True),
    Column("version", Integer, nullable=False),
    Column("created_by", JSON, nullable=False),
    Column("updated_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint("status IN ('approved', 'canon')", name="status"),
    Index("ix_memory_records_project_id_updated_at", "project_id", "updated_at"),
    Index("ix_memory_records_project_id_collection", "project_id", "collection"),
    Index("ix_memory_records_project_id_document", "project_id", "document"),
)

memory_record_versions = Table(
    "memory_record_versions",
    metadata,
    Column(
        "record_id",
        String(ID),
        ForeignKey("memory_records.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("version", Integer, primary_key=True),
    Column("project_id", String(ID), nullable=False),
    Column("title", String(300), nullable=False),
    Column("summary", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("collection", String(200), nullable=True),
    Column("document", String(16), nullable=True),
    Column("status", String(8), nullable=False),
    Column("author", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

# The five project documents (overview, context, decisions, notes, legal): accepted text.
project_documents = Table(
    "project_documents",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("name", String(16), primary_key=True),
    Column("content", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("updated_by", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint("name IN ('overview', 'context', 'decisions', 'notes', 'legal')", name="name"),
)

project_document_versions = Table(
    "project_document_versions",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("name", String(16), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("content", Text, nullable=False),
    Column("author", JSON, nullable=False),
    Column("source_draft_id", String(ID), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
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
    Index(
        "ix_inbox_messages_project_id_participant_id_created_at",
        "project_id",
        "participant_id",
        "created_at",
    ),
    Index("ix_inbox_messages_project_id_created_at", "project_id", "created_at"),
)

# --- The web app -------------------------------------------------------------------------------

# A person's signed-in browser: the cookie holds a secret, this row its SHA-256. Renewed at
# every login (a new row), deleted at logout; the CSRF token belongs to the session.
web_sessions = Table(
    "web_sessions",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("user_id", String(ID), ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Index("ix_web_sessions_user_id", "user_id"),
)
