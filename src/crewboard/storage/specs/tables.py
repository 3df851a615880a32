"""Tables of the specs area: spec files (one row each, with the newest revision's facts) and
every revision (immutable). The bytes are blobs (`storage/blobs.py`), named by digest."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
)

from crewboard.storage.schema import ID, metadata
from crewboard.storage.types import UTCDateTime

spec_files = Table(
    "spec_files",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("path", String(512), nullable=False),
    Column("kind", String(8), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("total_lines", Integer, nullable=False),
    Column("revision_count", Integer, nullable=False),
    Column("content_version", String(40), nullable=False),
    Column("digest", String(64), nullable=False),
    Column("created_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_by", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("trashed_at", UTCDateTime, nullable=True),
    Column("trashed_by", JSON, nullable=True),
    CheckConstraint("kind IN ('text', 'binary')", name="kind"),
    # One file per path, in the trash or not: a trashed file keeps its path for its restore.
    Index("ix_spec_files_project_id_path", "project_id", "path", unique=True),
)

spec_file_revisions = Table(
    "spec_file_revisions",
    metadata,
    Column(
        "file_id", String(ID), ForeignKey("spec_files.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("revision", Integer, primary_key=True),
    Column("project_id", String(ID), nullable=False),
    Column("kind", String(8), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("digest", String(64), nullable=False),
    Column("content_version", String(40), nullable=False),
    Column("total_lines", Integer, nullable=False),
    Column("line_marks", JSON, nullable=False),  # byte offset of every 256th line
    Column("author", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_spec_file_revisions_digest", "digest"),
)
