"""The event log: every change as an ordered, gap-free row, read by the live streams."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Integer, bindparam, func, select

from crewboard.storage import schema as shared

_E = shared.events.c
# Built once: live streams and the check-in read "after N" of one project on every call.
_AFTER_IN_PROJECT = (
    select(shared.events)
    .where(_E.project_id == bindparam("project_id"), _E.id > bindparam("after_id", type_=Integer))
    .order_by(_E.id)
    .limit(bindparam("limit", type_=Integer))
)


class EventRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def list_after(
        self, *, project_id: str | None, after_id: int = 0, limit: int = 100
    ) -> list[dict[str, Any]]:
        if project_id is not None:
            rows = self.conn.execute(
                _AFTER_IN_PROJECT, {"project_id": project_id, "after_id": after_id, "limit": limit}
            )
            return [row._asdict() for row in rows]
        query = select(shared.events).where(_E.id > after_id).order_by(_E.id).limit(limit)
        return [row._asdict() for row in self.conn.execute(query)]

    def latest(self, project_id: str) -> int:
        """The newest event id of one project (0 when it has none)."""
        query = select(func.max(shared.events.c.id)).where(shared.events.c.project_id == project_id)
        return int(self.conn.execute(query).scalar() or 0)

    def latest_any(self) -> int:
        """The newest event id of the whole log (0 when it is empty)."""
        return int(self.conn.execute(select(func.max(shared.events.c.id))).scalar() or 0)

    def list_after_many(
        self, project_ids: Sequence[str], *, after_id: int, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Events of these projects after `after_id`, oldest first."""
        e = shared.events
        query = (
            select(e.c.id, e.c.project_id, e.c.type, e.c.task_id, e.c.created_at)
            .where(e.c.project_id.in_(project_ids), e.c.id > after_id)
            .order_by(e.c.id)
            .limit(limit)
        )
        return [row._asdict() for row in self.conn.execute(query)]

    def count(self, *, project_id: str | None = None, type_: str | None = None) -> int:
        query = select(func.count()).select_from(shared.events)
        if project_id is not None:
            query = query.where(shared.events.c.project_id == project_id)
        if type_ is not None:
            query = query.where(shared.events.c.type == type_)
        return int(self.conn.execute(query).scalar_one())
