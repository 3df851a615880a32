"""SQL for project memory: accepted records and the five project documents, every version kept."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, false, func, literal, or_, select

from crewboard.domain.memory import (
    Document,
    DocumentVersion,
    MemoryRecord,
    MemoryStatus,
    RecordVersion,
)
from crewboard.domain.validation import INT32_MAX
from crewboard.storage.memory import tables as t
from crewboard.storage.rows import record_from_row, record_values


@dataclass(frozen=True)
class RecordFilter:
    """Which records to list. `collections` maps a project id to the collection kept there."""

    project_ids: tuple[str, ...]
    document: str | None = None
    collections: dict[str, str] | None = None
    ids: tuple[str, ...] | None = None


_RECORD_FIELDS = tuple(c.name for c in t.memory_records.columns)


def _memory_record(row: Any) -> MemoryRecord:
    return record_from_row(
        MemoryRecord,
        row,
        status=MemoryStatus(row.status),
        content_length=row._mapping.get("content_length"),  # lists read no content
    )


def _record_values(record: MemoryRecord) -> dict[str, Any]:
    """The record's columns, its standing as the stored text."""
    values = {k: v for k, v in asdict(record).items() if k in _RECORD_FIELDS}
    return values | {"status": record.status.value}


class MemoryRepository:
    """Memory records and project documents of one transaction."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- records --------------------------------------------------------------------------

    def add_record(self, record: MemoryRecord) -> None:
        """Insert the record and its first version."""
        values = _record_values(record)
        self.conn.execute(t.memory_records.insert().values(**values))
        self._add_version(record, author=record.created_by)

    def record(self, record_id: str) -> MemoryRecord | None:
        row = self.conn.execute(
            select(t.memory_records).where(t.memory_records.c.id == record_id)
        ).first()
        return _memory_record(row) if row else None

    def replace_record(self, record: MemoryRecord, *, expected_version: int) -> bool:
        """Save `record` (its version already raised) unless another change came first."""
        c = t.memory_records.c
        values = {
            k: v
            for k, v in _record_values(record).items()
            if k not in ("id", "project_id", "created_by", "created_at")
        }
        result = self.conn.execute(
            t.memory_records.update()
            .where(c.id == record.id, c.version == expected_version)
            .values(**values)
        )
        if result.rowcount != 1:
            return False
        self._add_version(record, author=record.updated_by)
        return True

    def delete_record(self, record_id: str) -> bool:
        """Delete the record and its versions; False when there was none."""
        self.conn.execute(
            t.memory_record_versions.delete().where(
                t.memory_record_versions.c.record_id == record_id
            )
        )
        result = self.conn.execute(
            t.memory_records.delete().where(t.memory_records.c.id == record_id)
        )
        return result.rowcount == 1

    def _add_version(self, record: MemoryRecord, *, author: dict[str, Any]) -> None:
        self.conn.execute(
            t.memory_record_versions.insert().values(
                **record_values(
                    record,
                    t.memory_record_versions,
                    record_id=record.id,
                    status=record.status.value,
                    author=author,
                    created_at=record.updated_at,
                )
            )
        )

    def record_versions(self, record_id: str) -> list[RecordVersion]:
        """Every version of a record, the newest first."""
        c = t.memory_record_versions.c
        rows = self.conn.execute(
            select(t.memory_record_versions)
            .where(c.record_id == record_id)
            .order_by(c.version.desc())
        )
        return [
            RecordVersion(**row._asdict() | {"status": MemoryStatus(row.status)}) for row in rows
        ]

    def search(
        self, filters: RecordFilter, *, include_content: bool, limit: int, offset: int
    ) -> tuple[list[MemoryRecord], int]:
        """Records matching the filter, the most recently changed first, and how many match."""
        c = t.memory_records.c
        where = _where(filters)
        total = self.conn.execute(
            select(func.count()).select_from(t.memory_records).where(where)
        ).scalar_one()
        text = c.content if include_content else literal("")
        columns = [c[name] for name in _RECORD_FIELDS if name != "content"]
        rows = self.conn.execute(
            select(
                *columns,
                text.label("content"),
                func.length(c.content).label("content_length"),
            )
            .where(where)
            .order_by(c.updated_at.desc(), c.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return [_memory_record(row) for row in rows], int(total)

    # --- documents ------------------------------------------------------------------------

    def document(self, project_id: str, name: str) -> Document:
        """The document as saved, or version 0 with no text when it was never written."""
        c = t.project_documents.c
        row = self.conn.execute(
            select(t.project_documents).where(c.project_id == project_id, c.name == name)
        ).first()
        if row is None:
            return Document(project_id, name, "", 0, None, None)
        return Document(**row._asdict())

    def documents(self, project_ids: tuple[str, ...]) -> list[Document]:
        """Every document ever written in these projects, by project then name."""
        if not project_ids:
            return []
        c = t.project_documents.c
        rows = self.conn.execute(
            select(t.project_documents)
            .where(c.project_id.in_(project_ids))
            .order_by(c.project_id, c.name)
        )
        return [Document(**row._asdict()) for row in rows]

    def save_document(
        self,
        project_id: str,
        name: str,
        *,
        content: str,
        author: dict[str, Any],
        at: datetime,
        expected_version: int,
        source_draft_id: str | None = None,
    ) -> Document | None:
        """Write version `expected_version + 1`; None when the document is not at that version."""
        c = t.project_documents.c
        if expected_version >= INT32_MAX:
            return None  # the version after it would not fit the column
        version = expected_version + 1
        values = {"content": content, "version": version, "updated_by": author, "updated_at": at}
        if expected_version == 0:
            if self.document(project_id, name).version != 0:
                return None
            self.conn.execute(
                t.project_documents.insert().values(project_id=project_id, name=name, **values)
            )
        else:
            result = self.conn.execute(
                t.project_documents.update()
                .where(c.project_id == project_id, c.name == name, c.version == expected_version)
                .values(**values)
            )
            if result.rowcount != 1:
                return None
        self.conn.execute(
            t.project_document_versions.insert().values(
                project_id=project_id,
                name=name,
                version=version,
                content=content,
                author=author,
                source_draft_id=source_draft_id,
                created_at=at,
            )
        )
        return Document(project_id, name, content, version, author, at)

    def document_versions(self, project_id: str, name: str) -> list[DocumentVersion]:
        """Every saved version of a document, the newest first."""
        c = t.project_document_versions.c
        rows = self.conn.execute(
            select(t.project_document_versions)
            .where(c.project_id == project_id, c.name == name)
            .order_by(c.version.desc())
        )
        return [DocumentVersion(**row._asdict()) for row in rows]


def _where(filters: RecordFilter) -> ColumnElement[bool]:
    c = t.memory_records.c
    if not filters.project_ids:
        return false()
    clauses: list[ColumnElement[bool]] = [c.project_id.in_(filters.project_ids)]
    if filters.document is not None:
        clauses.append(c.document == filters.document)
    if filters.ids is not None:
        clauses.append(c.id.in_(filters.ids) if filters.ids else false())
    if filters.collections is not None:
        pairs = [
            and_(c.project_id == project_id, c.collection == name)
            for project_id, name in filters.collections.items()
        ]
        clauses.append(or_(*pairs) if pairs else false())
    return and_(*clauses)
