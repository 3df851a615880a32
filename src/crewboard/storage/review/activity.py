"""SQL for the activity stream: the event log of some projects, and the hand-ins it names."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Connection, false, not_, or_, select

from crewboard.domain.identity.access import TokenKind
from crewboard.domain.review import DraftStatus, EventRow, HandIn, TokenName
from crewboard.storage import schema as shared
from crewboard.storage.identity import tables as identity
from crewboard.storage.review import tables as t


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
    # The web page's filters and paging: a person's own events (directly or through a personal
    # token, not their agents'), and events before an id (newest first).
    person_id: str | None = None
    before_id: int | None = None


# The actor kinds of a person acting as themselves (an agent token acts as its seat).
PERSON_KINDS = ("person", "personal_token")


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
        if query.before_id is not None:
            conditions.append(c.id < query.before_id)
        if query.person_id is not None:
            conditions.append(c.actor["userId"].as_string() == query.person_id)
            conditions.append(c.actor["kind"].as_string().in_(PERSON_KINDS))
        order = c.id.asc() if query.after_id is not None else c.id.desc()
        rows = self.conn.execute(
            select(shared.events).where(*conditions).order_by(order).limit(query.limit)
        )
        return [
            EventRow(**{name: getattr(row, name) for name in EventRow.__dataclass_fields__})
            for row in rows
        ]

    def tokens(self, project_id: str, token_ids: Iterable[str]) -> list[TokenName]:
        """The agent tokens of a project (revoked ones too: their work stays in the log) and
        the tokens named, in one query."""
        k = identity.api_tokens.c
        named = sorted(set(token_ids))
        rows = self.conn.execute(
            select(k.id, k.name, k.kind, k.user_id, k.project_id, k.revoked_at, k.seat_id).where(
                or_(
                    (k.project_id == project_id) & (k.kind == "agent"),
                    k.id.in_(named) if named else false(),
                )
            )
        )
        return [TokenName(**dict(row._mapping) | {"kind": TokenKind(row.kind)}) for row in rows]

    def hand_ins(self, draft_ids: Iterable[str]) -> dict[str, HandIn]:
        ids = sorted(set(draft_ids))
        if not ids:
            return {}
        d = t.drafts.c
        rows = self.conn.execute(
            select(d.id, d.status, d.token_id, d.idempotency_key, d.task_id).where(d.id.in_(ids))
        )
        return {
            row.id: HandIn(
                row.id, DraftStatus(row.status), row.token_id, row.idempotency_key, row.task_id
            )
            for row in rows
        }
