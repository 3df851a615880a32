"""Tables of the github area."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import ID, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

# One per project set up for GitHub: the webhook secret and what merged pull requests do.
github_settings = sa.Table(
    "github_settings",
    metadata,
    project_ref(primary_key=True),
    required("secret", sa.String(100)),
    required("on_merge", sa.String(8), server_default="review"),
    required("sync_issues", sa.Boolean, server_default=sa.false()),
    ref("configured_by", "users"),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
)

# Deliveries handled, by GitHub's delivery id: a redelivery of one is answered, not redone.
github_deliveries = sa.Table(
    "github_deliveries",
    metadata,
    sa.Column("delivery_id", sa.String(100), primary_key=True),
    project_ref(),
    required("event", sa.String(64)),
    optional("action", sa.String(64)),
    required("outcome", sa.Text),
    required("received_at", UTCDateTime),
    sa.Index("ix_github_deliveries_project_id_received_at", "project_id", "received_at"),
)

# Issues of a linked repository mirrored as tasks (with the project's sync_issues on).
github_issues = sa.Table(
    "github_issues",
    metadata,
    project_ref(),
    ref("repo_id", "repos"),
    required("issue_number", sa.Integer),
    ref("task_id", "tasks"),
    sa.PrimaryKeyConstraint("repo_id", "issue_number", name="pk_github_issues"),
)

# A task link's pull request as GitHub last told it; `github_updated_at` tells a stale delivery.
github_pulls = sa.Table(
    "github_pulls",
    metadata,
    ref("link_id", "task_repo_links", primary_key=True),
    project_ref(),
    optional("pr_number", sa.Integer),
    optional("pr_state", sa.String(8)),
    optional("head_sha", sa.String(64)),
    required("checks", sa.JSON),
    optional("github_updated_at", UTCDateTime),
)

__all__ = ["ID", "github_deliveries", "github_issues", "github_pulls", "github_settings"]
