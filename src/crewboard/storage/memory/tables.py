"""Tables of the memory area: accepted records and project documents, each with versions."""

from __future__ import annotations

import sqlalchemy as sa

from crewboard.storage.schema import ID, id_column, metadata, optional, project_ref, ref, required
from crewboard.storage.types import UTCDateTime

# Accepted knowledge: the current text of each record, and every version of it.
memory_records = sa.Table(
    "memory_records",
    metadata,
    id_column(),
    project_ref(),
    required("title", sa.String(300)),
    required("summary", sa.Text),
    required("content", sa.Text),
    optional("collection", sa.String(200)),
    optional("document", sa.String(16)),
    required("status", sa.String(8)),
    optional("source_draft_id", sa.String(ID)),
    required("version", sa.Integer),
    required("created_by", sa.JSON),
    required("updated_by", sa.JSON),
    required("created_at", UTCDateTime),
    required("updated_at", UTCDateTime),
    sa.CheckConstraint("status IN ('approved', 'canon')", name="status"),
    sa.Index("ix_memory_records_project_id_updated_at", "project_id", "updated_at"),
    sa.Index("ix_memory_records_project_id_collection", "project_id", "collection"),
    sa.Index("ix_memory_records_project_id_document", "project_id", "document"),
)


memory_record_versions = sa.Table(
    "memory_record_versions",
    metadata,
    ref("record_id", "memory_records", primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    required("project_id", sa.String(ID)),
    required("title", sa.String(300)),
    required("summary", sa.Text),
    required("content", sa.Text),
    optional("collection", sa.String(200)),
    optional("document", sa.String(16)),
    required("status", sa.String(8)),
    required("author", sa.JSON),
    required("created_at", UTCDateTime),
)


# The five project documents (overview, context, decisions, notes, legal): accepted text.
project_documents = sa.Table(
    "project_documents",
    metadata,
    project_ref(primary_key=True),
    sa.Column("name", sa.String(16), primary_key=True),
    required("content", sa.Text),
    required("version", sa.Integer),
    required("updated_by", sa.JSON),
    required("updated_at", UTCDateTime),
    sa.CheckConstraint(
        "name IN ('overview', 'context', 'decisions', 'notes', 'legal')", name="name"
    ),
)


project_document_versions = sa.Table(
    "project_document_versions",
    metadata,
    project_ref(primary_key=True),
    sa.Column("name", sa.String(16), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    required("content", sa.Text),
    required("author", sa.JSON),
    optional("source_draft_id", sa.String(ID)),
    required("created_at", UTCDateTime),
)
