"""Table definitions: the schema the migrations must produce (a test compares the two)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
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
    Index("ix_events_project_id_id", "project_id", "id"),
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
