"""Tables of the projects area: workspaces, projects and members, the state page, team roles."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import id_column, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

workspaces = sa.Table(
    "workspaces",
    metadata,
    id_column(),
    required("name", sa.String(120)),
    ref("created_by", "users", ondelete=None),
    required("created_at", UTCDateTime),
)


workspace_members = sa.Table(
    "workspace_members",
    metadata,
    ref("workspace_id", "workspaces", primary_key=True),
    ref("user_id", "users", primary_key=True),
    required("role", sa.String(16)),
    required("created_at", UTCDateTime),
    sa.CheckConstraint("role IN ('member', 'admin')", name="role"),
    sa.Index("ix_workspace_members_user_id", "user_id"),
)


projects = sa.Table(
    "projects",
    metadata,
    id_column(),
    ref("workspace_id", "workspaces", ondelete=None, nullable=True),
    ref("owner_user_id", "users", ondelete=None),
    required("key", sa.String(10), unique=True),
    required("name", sa.String(120)),
    required("goal", sa.Text),
    required("phase", sa.String(100)),
    required("status", sa.String(16)),
    required("description", sa.Text),
    required("type", sa.String(16)),
    required("collections", sa.JSON),
    optional("archived_at", UTCDateTime),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    sa.CheckConstraint("status IN ('planning', 'active', 'paused', 'done')", name="status"),
    sa.CheckConstraint("type IN ('greenfield', 'brownfield', 'auto')", name="type"),
    sa.Index("ix_projects_workspace_id", "workspace_id"),
)


project_members = sa.Table(
    "project_members",
    metadata,
    project_ref(primary_key=True),
    ref("user_id", "users", primary_key=True),
    required("role", sa.String(8)),
    required("created_at", UTCDateTime),
    sa.CheckConstraint("role IN ('read', 'write', 'admin')", name="role"),
    sa.Index("ix_project_members_user_id", "user_id"),
)


# The project's state page: the current text, and every saved version (restorable).
project_state = sa.Table(
    "project_state",
    metadata,
    project_ref(primary_key=True),
    required("content", sa.Text),
    required("revision", sa.Integer),
    required("updated_by", sa.JSON),
    required("updated_at", UTCDateTime),
)


project_state_versions = sa.Table(
    "project_state_versions",
    metadata,
    project_ref(primary_key=True),
    sa.Column("revision", sa.Integer, primary_key=True),
    required("content", sa.Text),
    required("author", sa.JSON),
    optional("restored_from", sa.Integer),
    required("created_at", UTCDateTime),
)


# Team roles (seats): an AI or human role on a project's team.
team_roles = sa.Table(
    "team_roles",
    metadata,
    id_column(),
    project_ref(),
    required("name", sa.String(120)),
    required("role", sa.String(500)),
    required("kind", sa.String(8)),
    ref("member_user_id", "users", ondelete="SET NULL", nullable=True),
    optional("model", sa.String(120)),
    optional("effort", sa.String(16)),
    required("rank", sa.Integer),
    required("level", sa.Integer),
    required("xp", sa.Integer),
    optional("archived_at", UTCDateTime),
    required("created_at", UTCDateTime),
    sa.CheckConstraint("kind IN ('ai', 'human')", name="kind"),
    sa.Index("ix_team_roles_project_id", "project_id"),
)

# How a project's handoffs go (`domain.projects.HandoffSettings`); no row: the defaults. A
# table of its own, so that adding it never rebuilt `projects` (SQLite).
project_handoffs = sa.Table(
    "project_handoffs",
    metadata,
    project_ref(primary_key=True),
    required("zone_a", sa.String(64)),
    required("zone_b", sa.String(64)),
    required("notify_assignees", sa.Boolean),
    required("updated_at", UTCDateTime),
)
