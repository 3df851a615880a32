"""Tables of the artifacts area: one row per artifact, one per kept revision, and each kept
revision's files (path, facts, digest). The bytes are blobs (`storage/blobs.py`)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

from crewboard.storage.schema import ID, metadata
from crewboard.storage.types import UTCDateTime

artifacts = Table(
    "artifacts",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("slug", String(64), nullable=False),
    Column("title", String(200), nullable=False),
    Column("description", Text, nullable=False),
    Column("revision_count", Integer, nullable=False),
    Column("created_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_by", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index("ix_artifacts_project_id_slug", "project_id", "slug", unique=True),
)

# The kept revisions (the newest KEPT_REVISIONS); older ones are deleted with their files.
artifact_revisions = Table(
    "artifact_revisions",
    metadata,
    Column(
        "artifact_id", String(ID), ForeignKey("artifacts.id", ondelete="CASCADE"), nullable=False
    ),
    Column("revision", Integer, nullable=False),
    Column("kind", String(8), nullable=False),
    Column("base_revision", Integer, nullable=True),
    Column("file_count", Integer, nullable=False),
    Column("total_size", BigInteger, nullable=False),
    Column("author", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("artifact_id", "revision"),
    CheckConstraint("kind IN ('full', 'delta', 'rollback')", name="kind"),
)

artifact_files = Table(
    "artifact_files",
    metadata,
    Column("artifact_id", String(ID), nullable=False),
    Column("revision", Integer, nullable=False),
    Column("path", String(512), nullable=False),
    Column("kind", String(8), nullable=False),
    Column("media_type", String(100), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("digest", String(64), nullable=False, info={"blob_ref": True}),
    Column("total_lines", Integer, nullable=False),
    Column("line_marks", JSON, nullable=False),
    PrimaryKeyConstraint("artifact_id", "revision", "path"),
    ForeignKeyConstraint(
        ["artifact_id", "revision"],
        ["artifact_revisions.artifact_id", "artifact_revisions.revision"],
        ondelete="CASCADE",
    ),
    Index("ix_artifact_files_digest", "digest"),
)

# Short-lived grants to look at one revision in the sandboxed preview: the web app makes one
# when a person opens the preview, and the preview's files are fetched with its token in the
# path (a sandboxed frame has no origin of its own, so it sends no session cookie).
artifact_previews = Table(
    "artifact_previews",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column(
        "artifact_id", String(ID), ForeignKey("artifacts.id", ondelete="CASCADE"), nullable=False
    ),
    Column("revision", Integer, nullable=False),
    Column("created_by", JSON, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Index("ix_artifact_previews_expires_at", "expires_at"),
)
