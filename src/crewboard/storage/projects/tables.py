"""Tables of the projects area: workspaces, projects and members, the state page, team roles."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from crewboard.storage.schema import ID, metadata
from crewboard.storage.types import UTCDateTime

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

# How a project's handoffs go (`domain.projects.HandoffSettings`); no row: the defaults. A
# table of its own, so that adding it never rebuilt `projects` (SQLite).
project_handoffs = Table(
    "project_handoffs",
    metadata,
    Column(
        "project_id",
        String(ID),
        ForeignKey("projects.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("zone_a", String(64), nullable=False),
    Column("zone_b", String(64), nullable=False),
    Column("notify_assignees", Boolean, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)
