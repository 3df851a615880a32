"""Tables of the specs area: spec files (one row each, with the newest revision's facts) and
every revision (immutable). The bytes are blobs (`storage/blobs.py`), named by digest."""

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
    String,
    Table,
    Text,
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
    Column("digest", String(64), nullable=False, info={"blob_ref": True}),
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
    Column("digest", String(64), nullable=False, info={"blob_ref": True}),
    Column("content_version", String(40), nullable=False),
    Column("total_lines", Integer, nullable=False),
    Column("line_marks", JSON, nullable=False),  # byte offset of every 256th line
    Column("author", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_spec_file_revisions_digest", "digest"),
)

# Files people and agents attach to a project: one row per name, replaced whole by an upload
# with `override`; the bytes are a blob.
attachments = Table(
    "attachments",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(255), nullable=False),
    Column("kind", String(8), nullable=False),
    Column("media_type", String(100), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("digest", String(64), nullable=False, info={"blob_ref": True}),
    Column("total_lines", Integer, nullable=False),
    Column("line_marks", JSON, nullable=False),
    Column("created_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_by", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint("kind IN ('text', 'image', 'document')", name="kind"),
    Index("ix_attachments_project_id_name", "project_id", "name", unique=True),
    Index("ix_attachments_digest", "digest"),
)

# Comment threads on a passage of a spec file. The anchor is the passage in revision
# `anchor_revision` (character offsets of its text); every save of the file moves it to the new
# revision, or marks the thread orphaned when the passage is gone.
spec_comment_threads = Table(
    "spec_comment_threads",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("file_id", String(ID), ForeignKey("spec_files.id", ondelete="CASCADE"), nullable=False),
    Column("status", String(8), nullable=False),
    Column("orphaned", Boolean, nullable=False),
    Column("anchor_quote", Text, nullable=False),
    Column("anchor_prefix", Text, nullable=False),
    Column("anchor_suffix", Text, nullable=False),
    Column("anchor_start", Integer, nullable=False),
    Column("anchor_end", Integer, nullable=False),
    Column("anchor_revision", Integer, nullable=False),
    Column("created_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("resolved_by", JSON, nullable=True),
    Column("resolved_at", UTCDateTime, nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint("status IN ('open', 'resolved')", name="status"),
    Index("ix_spec_comment_threads_file_id_status", "file_id", "status", "orphaned"),
)

# The comments of a thread, in `seq` order (a per-project counter). A first comment deleted
# while it has replies stays as a placeholder (`deleted`, its body emptied).
spec_comments = Table(
    "spec_comments",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column(
        "thread_id",
        String(ID),
        ForeignKey("spec_comment_threads.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("project_id", String(ID), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("author", JSON, nullable=False),
    Column("body", Text, nullable=False),
    Column("content_version", String(40), nullable=False),
    Column("deleted", Boolean, nullable=False),
    Column("ai_work", Boolean, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index("ix_spec_comments_thread_id_seq", "thread_id", "seq"),
)
