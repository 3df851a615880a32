"""The attachment repository: one row per name in a project, the bytes a blob."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Row, bindparam, func, select, update

from crewboard.domain.files import LineIndex
from crewboard.domain.specs import Attachment, AttachmentKind
from crewboard.storage.rows import record_from_row
from crewboard.storage.specs.tables import attachments

_a = attachments.c
_BY_ID = select(attachments).where(_a.id == bindparam("id"))
_BY_NAME = select(attachments).where(
    _a.project_id == bindparam("project_id"), _a.name == bindparam("name")
)


def _attachment(row: Row[Any]) -> Attachment:
    return record_from_row(
        Attachment,
        row,
        kind=AttachmentKind(row.kind),
        size=int(row.size),
        lines=LineIndex(row.total_lines, tuple(row.line_marks)),
    )


def _values(item: Attachment) -> dict[str, Any]:
    return {
        "kind": item.kind.value,
        "media_type": item.media_type,
        "size": item.size,
        "digest": item.digest,
        "total_lines": item.lines.total_lines,
        "line_marks": list(item.lines.marks),
        "updated_by": item.updated_by,
        "updated_at": item.updated_at,
    }


class AttachmentRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def get(self, attachment_id: str) -> Attachment | None:
        row = self.conn.execute(_BY_ID, {"id": attachment_id}).first()
        return None if row is None else _attachment(row)

    def get_by_name(self, project_id: str, name: str) -> Attachment | None:
        row = self.conn.execute(_BY_NAME, {"project_id": project_id, "name": name}).first()
        return None if row is None else _attachment(row)

    def page(
        self, project_id: str, *, limit: int, offset: int, newest: bool = False
    ) -> tuple[list[Attachment], int]:
        """One page of the project's attachments by name (or `newest` changed first), and how
        many there are."""
        where = _a.project_id == project_id
        order = (_a.updated_at.desc(), _a.id.desc()) if newest else (_a.name,)
        rows = self.conn.execute(
            select(attachments).where(where).order_by(*order).limit(limit).offset(offset)
        )
        total = self.conn.execute(select(func.count()).select_from(attachments).where(where))
        return [_attachment(row) for row in rows], int(total.scalar_one())

    def add(self, item: Attachment) -> None:
        self.conn.execute(
            attachments.insert(),
            {
                "id": item.id,
                "project_id": item.project_id,
                "name": item.name,
                "created_by": item.created_by,
                "created_at": item.created_at,
                **_values(item),
            },
        )

    def replace(self, item: Attachment) -> None:
        """New bytes (and their type) for an existing attachment."""
        self.conn.execute(update(attachments).where(_a.id == item.id).values(**_values(item)))
