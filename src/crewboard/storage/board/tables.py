"""Tables of the board area: tasks, their labels, links, events, notes, outputs, questions,
repository links and reports, and the context receipts `get_task` writes."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import (
    ID,
    EventId,
    id_column,
    metadata,
    optional,
    project_ref,
    ref,
    required,
)
from crewboard.storage.types import UTCDateTime

tasks = sa.Table(
    "tasks",
    metadata,
    id_column(),
    project_ref(),
    required("number", sa.Integer),
    required("title", sa.String(300)),
    required("description", sa.Text),
    required("brief", sa.Text),
    required("type", sa.String(16)),
    required("status", sa.String(16)),
    required("priority", sa.String(8)),
    optional("assignee_id", sa.String(ID)),
    optional("assignee_type", sa.String(8)),
    ref("human_owner_id", "users", ondelete="SET NULL", nullable=True),
    required("tags", sa.JSON),
    required("labels", sa.JSON),
    optional("due_date", sa.Date),
    optional("start_date", sa.Date),
    optional("story_points", sa.Integer),
    optional("cycle", sa.String(64)),
    ref("parent_task_id", "tasks", ondelete="SET NULL", nullable=True),
    required("context_refs", sa.JSON),
    required("context_item_ids", sa.JSON),
    required("external_reference_ids", sa.JSON),
    optional("output_destination", sa.String(200)),
    required("board_order", sa.Float),
    required("revision", sa.Integer),
    required("coverage", sa.String(12)),
    required("created_by", sa.JSON),
    required("updated_by", sa.JSON),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    sa.UniqueConstraint("project_id", "number", name="uq_tasks_project_id_number"),
    sa.CheckConstraint(
        "status IN ('backlog', 'ready_for_ai', 'in_progress', 'blocked', 'review', 'approved', 'done')",
        name="status",
    ),
    sa.CheckConstraint(
        "assignee_type IS NULL OR assignee_type IN ('ai', 'human')", name="assignee_type"
    ),
    sa.Index("ix_tasks_project_id_status_number", "project_id", "status", "number"),
    sa.Index("ix_tasks_project_id_updated_at", "project_id", "updated_at"),
    sa.Index("ix_tasks_project_id_parent_task_id_number", "project_id", "parent_task_id", "number"),
    sa.Index("ix_tasks_project_id_status_board_order", "project_id", "status", "board_order"),
    sa.Index("ix_tasks_project_id_assignee_id", "project_id", "assignee_id"),
    sa.Index("ix_tasks_project_id_due_date", "project_id", "due_date"),
)


# A task kept in sync with a line of a `tasks.md` spec file (services/specs/tasks_md.py): the
# file's id (a specs row, named without a foreign key: the board sits below specs) and the line's
# number, NULL once the line left the file (the task was closed then).
task_sources = sa.Table(
    "task_sources",
    metadata,
    ref("task_id", "tasks", primary_key=True),
    required("project_id", sa.String(ID)),
    required("file_id", sa.String(ID)),
    optional("line", sa.Integer),
    sa.Index("ix_task_sources_file_id_line", "file_id", "line"),
)


# Tags and labels, lower-cased, one row each: filters use the index instead of scanning JSON.
task_labels = sa.Table(
    "task_labels",
    metadata,
    ref("task_id", "tasks", primary_key=True),
    sa.Column("kind", sa.String(8), primary_key=True),
    sa.Column("value", sa.String(64), primary_key=True),
    required("project_id", sa.String(ID)),
    sa.CheckConstraint("kind IN ('tag', 'label')", name="kind"),
    sa.Index("ix_task_labels_project_id_kind_value", "project_id", "kind", "value"),
)


# One relationship per pair of tasks: (low, high) ordered ids. `blocks` names its blocker.
task_links = sa.Table(
    "task_links",
    metadata,
    ref("low_id", "tasks", primary_key=True),
    ref("high_id", "tasks", primary_key=True),
    required("project_id", sa.String(ID)),
    required("type", sa.String(8)),
    optional("blocker_id", sa.String(ID)),
    required("created_at", UTCDateTime),
    sa.CheckConstraint("type IN ('blocks', 'related')", name="type"),
    sa.Index("ix_task_links_high_id", "high_id"),
)


# Lifecycle events, written in the transaction of the change they record.
task_events = sa.Table(
    "task_events",
    metadata,
    sa.Column("id", EventId, primary_key=True, autoincrement=True),
    project_ref(),
    ref("task_id", "tasks"),
    required("type", sa.String(24)),
    required("occurred_at", UTCDateTime),
    required("actor", sa.JSON),
    required("data", sa.JSON),
    required("status", sa.String(16)),
    optional("agent_assignee_id", sa.String(ID)),
    optional("human_assignee_id", sa.String(ID)),
    sa.CheckConstraint(
        "type IN ('assignment_changed', 'status_changed', 'blocker_changed')", name="type"
    ),
    sa.Index("ix_task_events_task_id_id", "task_id", "id"),
    sa.Index("ix_task_events_project_id_occurred_at", "project_id", "occurred_at"),
    sa.Index("ix_task_events_agent_assignee_id", "agent_assignee_id", "occurred_at"),
    sa.Index("ix_task_events_human_assignee_id", "human_assignee_id", "occurred_at"),
    sqlite_autoincrement=True,
)


# Comments and agent progress notes on a task (kind tells them apart).
task_comments = sa.Table(
    "task_comments",
    metadata,
    id_column(),
    project_ref(),
    ref("task_id", "tasks"),
    required("kind", sa.String(16)),
    required("content", sa.Text),
    required("author", sa.JSON),
    required("created_at", UTCDateTime),
    sa.CheckConstraint("kind IN ('comment', 'agent_update')", name="kind"),
    sa.Index("ix_task_comments_task_id_created_at", "task_id", "created_at"),
)


# Named deliverables saved on a task.
task_outputs = sa.Table(
    "task_outputs",
    metadata,
    id_column(),
    project_ref(),
    ref("task_id", "tasks"),
    required("name", sa.String(200)),
    required("content", sa.Text),
    required("author", sa.JSON),
    required("created_at", UTCDateTime),
    sa.Index("ix_task_outputs_task_id_created_at", "task_id", "created_at"),
)


# Questions an agent asks; a person answers in the inbox and the answer shows on the task.
task_questions = sa.Table(
    "task_questions",
    metadata,
    id_column(),
    project_ref(),
    ref("task_id", "tasks"),
    required("question", sa.Text),
    required("asked_by", sa.JSON),
    required("asked_at", UTCDateTime),
    optional("answer", sa.Text),
    optional("answered_by", sa.JSON),
    optional("answered_at", UTCDateTime),
    sa.Index("ix_task_questions_project_id_answered_at", "project_id", "answered_at"),
    sa.Index("ix_task_questions_task_id", "task_id"),
)


# Code repositories a project works in, and the links of tasks to branches in them.
repos = sa.Table(
    "repos",
    metadata,
    id_column(),
    project_ref(),
    required("name", sa.String(200)),
    required("url", sa.String(500)),
    required("default_branch", sa.String(200)),
    required("created_at", UTCDateTime),
    sa.UniqueConstraint("project_id", "name", name="uq_repos_project_id_name"),
)


task_repo_links = sa.Table(
    "task_repo_links",
    metadata,
    id_column(),
    project_ref(),
    ref("task_id", "tasks"),
    ref("repo_id", "repos"),
    required("agent", sa.String(ID)),
    required("branch", sa.String(200)),
    optional("target_branch", sa.String(200)),
    optional("title", sa.String(300)),
    optional("summary", sa.Text),
    optional("pr_url", sa.String(500)),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    sa.UniqueConstraint(
        "task_id", "repo_id", "agent", "branch", name="uq_task_repo_links_identity"
    ),
)


task_repo_reports = sa.Table(
    "task_repo_reports",
    metadata,
    id_column(),
    project_ref(),
    ref("task_id", "tasks"),
    ref("repo_id", "repos", ondelete="SET NULL", nullable=True),
    optional("branch", sa.String(200)),
    optional("commit_sha", sa.String(64)),
    optional("tests", sa.String(16)),
    optional("summary", sa.Text),
    required("reported_by", sa.JSON),
    required("created_at", UTCDateTime),
    sa.Index("ix_task_repo_reports_task_id_created_at", "task_id", "created_at"),
)


# What one full get_task read handed out: [{kind, id, version}], to flag drafts built on inputs
# that changed later.
context_receipts = sa.Table(
    "context_receipts",
    metadata,
    id_column(),
    project_ref(),
    required("task_id", sa.String(ID)),
    required("token_id", sa.String(ID)),
    required("items", sa.JSON),
    required("created_at", UTCDateTime),
    sa.Index("ix_context_receipts_project_id_created_at", "project_id", "created_at"),
)
