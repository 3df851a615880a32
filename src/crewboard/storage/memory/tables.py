"""Tables of the memory area: accepted records and project documents, each with versions."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
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

# Accepted knowledge: the current text of each record, and every version of it.
memory_records = Table(
    "memory_records",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("title", String(300), nullable=False),
    Column("summary", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("collection", String(200), nullable=True),
    Column("document", String(16), nullable=True),
    Column("status", String(8), nullable=False),
    Column("source_draft_id", String(ID), nullable=True),
    Column("version", Integer, nullable=False),
    Column("created_by", JSON, nullable=False),
    Column("updated_by", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint("status IN ('approved', 'canon')", name="status"),
    Index("ix_memory_records_project_id_updated_at", "project_id", "updated_at"),
    Index("ix_memory_records_project_id_collection", "project_id", "collection"),
    Index("ix_memory_records_project_id_document", "project_id", "document"),
)


memory_record_versions = Table(
    "memory_record_versions",
    metadata,
    Column(
        "record_id",
        String(ID),
        ForeignKey("memory_records.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("version", Integer, primary_key=True),
    Column("project_id", String(ID), nullable=False),
    Column("title", String(300), nullable=False),
    Column("summary", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("collection", String(200), nullable=True),
    Column("document", String(16), nullable=True),
    Column("status", String(8), nullable=False),
    Column("author", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)


# The five project documents (overview, context, decisions, notes, legal): accepted text.
project_documents = Table(
    "project_documents",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("name", String(16), primary_key=True),
    Column("content", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("updated_by", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint("name IN ('overview', 'context', 'decisions', 'notes', 'legal')", name="name"),
)


project_document_versions = Table(
    "project_document_versions",
    metadata,
    Column(
        "project_id", String(ID), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("name", String(16), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("content", Text, nullable=False),
    Column("author", JSON, nullable=False),
    Column("source_draft_id", String(ID), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
)
