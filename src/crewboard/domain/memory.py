"""Project memory: accepted records and the five project documents, every version kept, and the
shapes in which searches and context packs read them. Pure values, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class ProjectDocument(StrEnum):
    """The five documents every project has; `legal` holds asset rights."""

    OVERVIEW = "overview"
    CONTEXT = "context"
    DECISIONS = "decisions"
    NOTES = "notes"
    LEGAL = "legal"


class MemoryStatus(StrEnum):
    APPROVED = "approved"
    CANON = "canon"  # settled: a person marked it as the project's fixed truth


@dataclass(frozen=True)
class MemoryRecord:
    """An accepted record. Read without its text, `content` is "" and `content_length` is set."""

    id: str
    project_id: str
    title: str
    summary: str
    content: str
    collection: str | None
    document: str | None
    status: MemoryStatus
    source_draft_id: str | None
    version: int
    created_by: dict[str, Any]
    updated_by: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    content_length: int | None = field(default=None, compare=False)

    @property
    def length(self) -> int:
        """Characters of the whole content, loaded or not."""
        return self.content_length if self.content_length is not None else len(self.content)


@dataclass(frozen=True)
class RecordVersion:
    record_id: str
    version: int
    project_id: str
    title: str
    summary: str
    content: str
    collection: str | None
    document: str | None
    status: MemoryStatus
    author: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class Document:
    """A project document as saved; a document never written is version 0 with no text."""

    project_id: str
    name: str
    content: str
    version: int
    updated_by: dict[str, Any] | None
    updated_at: datetime | None


@dataclass(frozen=True)
class DocumentVersion:
    project_id: str
    name: str
    version: int
    content: str
    author: dict[str, Any]
    source_draft_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class RecordHit:
    id: str
    title: str
    summary: str
    content: str
    collection: str | None
    document: str | None
    status: MemoryStatus
    updated_at: datetime


@dataclass(frozen=True)
class RecordText:
    """What a context pack hands out of an accepted record: its current text, standing and
    version, without who wrote it or when (a pack reads only these columns)."""

    id: str
    title: str
    summary: str
    content: str
    collection: str | None
    document: str | None
    status: MemoryStatus
    version: int


@dataclass(frozen=True)
class IndexEntry:
    """A record listed by id and title only, with the start of its summary (or content)."""

    id: str
    title: str
    summary_start: str
    content_start: str


@dataclass(frozen=True)
class DocumentText:
    name: str
    content: str
    version: int


@dataclass(frozen=True)
class MemoryPage:
    """A page of accepted memory as read: the documents shown (on the first page only) and the
    records from `offset`, before any fitting to an answer; `total` counts every record."""

    documents: tuple[Document, ...]
    records: tuple[MemoryRecord, ...]
    total: int
    offset: int
    include_content: bool


@dataclass(frozen=True)
class MemoryText:
    """One text asked for in windows: a record's content (`record_id` set) or a project
    document's text (`document` set), with the window wanted of it."""

    project_id: str
    record_id: str | None
    document: str | None
    version: int
    text: str
    offset: int
    limit: int
