"""SQL for the activity stream: the event log of some projects, and the hand-ins it names."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, not_, or_, select

from crewboard.storage import schema as shared
from crewboard.storage.review import tables as t


@dataclass(frozen=True)
class EventRow:
    id: int
    project_id: str
    type: str
    actor: dict[str, Any]
    payload: dict[str, Any]
    created_at: datetime
    task_id: str | None
    token_id: str | None


@dataclass(frozen=True)
class HandIn:
    """What activity shows of a draft: never its text."""

    id: str
    status: str
    token_id: str | None
    idempotency_key: str | None
    task_id: str | None


@dataclass(frozen=True)
class EventQuery:
    """Which events: of these projects, none of the `noise` type prefixes, and optionally one
    task, one token's events (`token_id`) of the types starting with one of `only_prefixes`,
    after an event id (oldest first) or else newest first."""

    project_ids: Sequence[str]
    limit: int
    noise: tuple[str, ...] = ()
    task_id: str | None = None
    token_id: str | None = None
    only_prefixes: tuple[str, ...] = ()
    after_id: int | None = None


class ActivityRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def events(self, query: EventQuery) -> list[EventRow]:
        if not query.project_ids:
            return []
        c = shared.events.c
        conditions: list[ColumnElement[bool]] = [c.project_id.in_(list(query.project_ids))]
        if query.noise:
            conditions.append(
                not_(or_(*(c.type.startswith(p, autoescape=True) for p in query.noise)))
            )
        if query.task_id is not None:
            conditions.append(c.task_id == query.task_id)
        if query.token_id is not None:
            conditions.append(c.token_id == query.token_id)
        if query.only_prefixes:
            conditions.append(
                or_(*(c.type.startswith(p, autoescape=True) for p in query.only_prefixes))
            )
        if query.after_id is not None:
            conditions.append(c.id > query.after_id)
        order = c.id.asc() if query.after_id is not None else c.id.desc()
        rows = self.conn.execute(
            select(shared.events).where(*conditions).order_by(order).limit(query.limit)
        )
        return [
            EventRow(**{name: getattr(row, name) for name in EventRow.__dataclass_fields__})
            for row in rows
        ]

    def hand_ins(self, draft_ids: Iterable[str]) -> dict[str, HandIn]:
        ids = sorted(set(draft_ids))
        if not ids:
            return {}
        d = t.drafts.c
        rows = self.conn.execute(
            select(d.id, d.status, d.token_id, d.idempotency_key, d.task_id).where(d.id.in_(ids))
        )
        return {
            row.id: HandIn(row.id, row.status, row.token_id, row.idempotency_key, row.task_id)
            for row in rows
        }
