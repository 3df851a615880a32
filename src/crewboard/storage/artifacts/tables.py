"""Tables of the artifacts area: one row per artifact, one per kept revision, and each kept
revision's files (path, facts, digest). The bytes are blobs (`storage/blobs.py`)."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import ID, id_column, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

artifacts = sa.Table(
    "artifacts",
    metadata,
    id_column(),
    project_ref(),
    required("slug", sa.String(64)),
    required("title", sa.String(200)),
    required("description", sa.Text),
    required("revision_count", sa.Integer),
    required("created_by", sa.JSON),
    required("created_at", UTCDateTime),
    required("updated_by", sa.JSON),
    required("updated_at", UTCDateTime),
    sa.Index("ix_artifacts_project_id_slug", "project_id", "slug", unique=True),
)

# The kept revisions (the newest KEPT_REVISIONS); older ones are deleted with their files.
artifact_revisions = sa.Table(
    "artifact_revisions",
    metadata,
    ref("artifact_id", "artifacts"),
    required("revision", sa.Integer),
    required("kind", sa.String(8)),
    optional("base_revision", sa.Integer),
    required("file_count", sa.Integer),
    required("total_size", sa.BigInteger),
    required("author", sa.JSON),
    required("created_at", UTCDateTime),
    sa.PrimaryKeyConstraint("artifact_id", "revision"),
    sa.CheckConstraint("kind IN ('full', 'delta', 'rollback')", name="kind"),
)

artifact_files = sa.Table(
    "artifact_files",
    metadata,
    required("artifact_id", sa.String(ID)),
    required("revision", sa.Integer),
    required("path", sa.String(512)),
    required("kind", sa.String(8)),
    required("media_type", sa.String(100)),
    required("size", sa.BigInteger),
    required("digest", sa.String(64), info={"blob_ref": True}),
    required("total_lines", sa.Integer),
    required("line_marks", sa.JSON),
    sa.PrimaryKeyConstraint("artifact_id", "revision", "path"),
    sa.ForeignKeyConstraint(
        ["artifact_id", "revision"],
        ["artifact_revisions.artifact_id", "artifact_revisions.revision"],
        ondelete="CASCADE",
    ),
    sa.Index("ix_artifact_files_digest", "digest"),
)

# Short-lived grants to look at one revision in the sandboxed preview: the web app makes one
# when a person opens the preview, and the preview's files are fetched with its token in the
# path (a sandboxed frame has no origin of its own, so it sends no session cookie).
artifact_previews = sa.Table(
    "artifact_previews",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    ref("artifact_id", "artifacts"),
    required("revision", sa.Integer),
    required("created_by", sa.JSON),
    required("expires_at", UTCDateTime),
    sa.Index("ix_artifact_previews_expires_at", "expires_at"),
)
