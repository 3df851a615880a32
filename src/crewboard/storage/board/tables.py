"""Tables of the board area: tasks, their labels, links, events, notes, outputs, questions,
repository links and reports, and the context receipts `get_task` writes."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    CheckConstraint,
    Column,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from crewboard.storage.schema import ID, EventId, metadata
from crewboard.storage.types import UTCDateTime

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


# A task kept in sync with a line of a `tasks.md` spec file (services/specs/tasks_md.py): the
# file's id (a specs row, named without a foreign key: the board sits below specs) and the line's
# number, NULL once the line left the file (the task was closed then).
task_sources = Table(
    "task_sources",
    metadata,
    Column("task_id", String(ID), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True),
    Column("project_id", String(ID), nullable=False),
    Column("file_id", String(ID), nullable=False),
    Column("line", Integer, nullable=True),
    Index("ix_task_sources_file_id_line", "file_id", "line"),
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
