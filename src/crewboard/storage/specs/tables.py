"""Tables of the specs area: spec files (one row each, with the newest revision's facts) and
every revision (immutable). The bytes are blobs (`storage/blobs.py`), named by digest."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import ID, id_column, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

spec_files = sa.Table(
    "spec_files",
    metadata,
    id_column(),
    project_ref(),
    required("path", sa.String(512)),
    required("kind", sa.String(8)),
    required("size", sa.BigInteger),
    required("total_lines", sa.Integer),
    required("revision_count", sa.Integer),
    required("content_version", sa.String(40)),
    required("digest", sa.String(64), info={"blob_ref": True}),
    required("created_by", sa.JSON),
    required("created_at", UTCDateTime),
    required("updated_by", sa.JSON),
    required("updated_at", UTCDateTime),
    optional("trashed_at", UTCDateTime),
    optional("trashed_by", sa.JSON),
    sa.CheckConstraint("kind IN ('text', 'binary')", name="kind"),
    # One file per path, in the trash or not: a trashed file keeps its path for its restore.
    sa.Index("ix_spec_files_project_id_path", "project_id", "path", unique=True),
)

spec_file_revisions = sa.Table(
    "spec_file_revisions",
    metadata,
    ref("file_id", "spec_files", primary_key=True),
    sa.Column("revision", sa.Integer, primary_key=True),
    required("project_id", sa.String(ID)),
    required("kind", sa.String(8)),
    required("size", sa.BigInteger),
    required("digest", sa.String(64), info={"blob_ref": True}),
    required("content_version", sa.String(40)),
    required("total_lines", sa.Integer),
    required("line_marks", sa.JSON),  # byte offset of every 256th line
    required("author", sa.JSON),
    required("created_at", UTCDateTime),
    sa.Index("ix_spec_file_revisions_digest", "digest"),
)

# Files people and agents attach to a project: one row per name, replaced whole by an upload
# with `override`; the bytes are a blob.
attachments = sa.Table(
    "attachments",
    metadata,
    id_column(),
    project_ref(),
    required("name", sa.String(255)),
    required("kind", sa.String(8)),
    required("media_type", sa.String(100)),
    required("size", sa.BigInteger),
    required("digest", sa.String(64), info={"blob_ref": True}),
    required("total_lines", sa.Integer),
    required("line_marks", sa.JSON),
    required("created_by", sa.JSON),
    required("created_at", UTCDateTime),
    required("updated_by", sa.JSON),
    required("updated_at", UTCDateTime),
    sa.CheckConstraint("kind IN ('text', 'image', 'document')", name="kind"),
    sa.Index("ix_attachments_project_id_name", "project_id", "name", unique=True),
    sa.Index("ix_attachments_digest", "digest"),
)

# Comment threads on a passage of a spec file. The anchor is the passage in revision
# `anchor_revision` (character offsets of its text); every save of the file moves it to the new
# revision, or marks the thread orphaned when the passage is gone.
spec_comment_threads = sa.Table(
    "spec_comment_threads",
    metadata,
    id_column(),
    project_ref(),
    ref("file_id", "spec_files"),
    required("status", sa.String(8)),
    required("orphaned", sa.Boolean),
    required("anchor_quote", sa.Text),
    required("anchor_prefix", sa.Text),
    required("anchor_suffix", sa.Text),
    required("anchor_start", sa.Integer),
    required("anchor_end", sa.Integer),
    required("anchor_revision", sa.Integer),
    required("created_by", sa.JSON),
    required("created_at", UTCDateTime),
    optional("resolved_by", sa.JSON),
    optional("resolved_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    sa.CheckConstraint("status IN ('open', 'resolved')", name="status"),
    sa.Index("ix_spec_comment_threads_file_id_status", "file_id", "status", "orphaned"),
)

# The comments of a thread, in `seq` order (a per-project counter). A first comment deleted
# while it has replies stays as a placeholder (`deleted`, its body emptied).
spec_comments = sa.Table(
    "spec_comments",
    metadata,
    id_column(),
    ref("thread_id", "spec_comment_threads"),
    required("project_id", sa.String(ID)),
    required("seq", sa.Integer),
    required("author", sa.JSON),
    required("body", sa.Text),
    required("content_version", sa.String(40)),
    required("deleted", sa.Boolean),
    required("ai_work", sa.Boolean),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    sa.Index("ix_spec_comments_thread_id_seq", "thread_id", "seq"),
)
