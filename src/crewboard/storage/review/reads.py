"""SQL for inbox read markers: which inbox items each person has read.

The unread count is one COUNT over the inbox's four sources (waiting hand-ins, pending
proposals, open questions, messages for the person or a seat they hold) less what the person
has read: it runs on every signed-in page, so it stays one statement.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    String,
    Subquery,
    and_,
    delete,
    exists,
    func,
    literal,
    literal_column,
    or_,
    select,
    union_all,
)
from sqlalchemy.dialects import postgresql, sqlite

from crewboard.storage.board import tables as board_tables
from crewboard.storage.projects import tables as projects_tables
from crewboard.storage.review import tables as t

ITEM_TABLES = {
    "hand_in": t.drafts,
    "proposal": t.proposals,
    "question": board_tables.task_questions,
    "message": t.inbox_messages,
}


def _kind(name: str) -> ColumnElement[str]:
    # Inline text, not a bound parameter: PostgreSQL cannot type an untyped parameter in a UNION.
    return literal_column(f"'{name}'", String).label("kind")


def waiting_items(
    project_id: str, user_id: str, waiting_drafts: Sequence[str], kind: str | None = None
) -> Subquery:
    """(kind, id) of everything in the person's inbox of one project, of one kind or all."""
    d, p, q, m = (ITEM_TABLES[k].c for k in ("hand_in", "proposal", "question", "message"))
    r = projects_tables.team_roles.c
    seats = select(r.id).where(
        r.project_id == project_id, r.member_user_id == user_id, r.archived_at.is_(None)
    )
    parts = {
        "hand_in": select(_kind("hand_in"), d.id.label("id")).where(
            d.project_id == project_id,
            d.status.in_(list(waiting_drafts)),
            ~_newer_version(waiting_drafts),
        ),
        "proposal": select(_kind("proposal"), p.id.label("id")).where(
            p.project_id == project_id, p.status == "pending"
        ),
        "question": select(_kind("question"), q.id.label("id")).where(
            q.project_id == project_id, q.answered_at.is_(None)
        ),
        "message": select(_kind("message"), m.id.label("id")).where(
            m.project_id == project_id,
            m.dismissed_at.is_(None),
            or_(m.participant_id == user_id, m.participant_id.in_(seats)),
        ),
    }
    chosen = [parts[kind]] if kind is not None else list(parts.values())
    return union_all(*chosen).subquery("items")


def _hand(c: Any) -> ColumnElement[str]:
    """Who handed a draft in, as versions are told apart (`domain.review.hand_of`)."""
    return func.coalesce(c.role_id, c.token_id, "")


def _newer_version(waiting_drafts: Sequence[str]) -> ColumnElement[bool]:
    """A newer waiting version of the outer draft exists: the inbox shows only the newest
    of a chain's versions by the same hand."""
    d, newer = t.drafts.c, t.drafts.alias("newer").c
    return exists().where(
        newer.root_task_id == d.root_task_id,
        _hand(newer) == _hand(d),
        newer.status.in_(list(waiting_drafts)),
        or_(
            newer.created_at > d.created_at,
            and_(newer.created_at == d.created_at, newer.id > d.id),
        ),
    )


def _dialect(conn: Connection) -> Any:
    return postgresql if conn.dialect.name == "postgresql" else sqlite


class InboxReadRepository:
    """Per-person read markers of inbox items."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def item_project(self, kind: str, item_id: str) -> str | None:
        """The project an inbox item belongs to; None when there is no such item."""
        table = ITEM_TABLES[kind]
        found: str | None = self.conn.execute(
            select(table.c.project_id).where(table.c.id == item_id)
        ).scalar_one_or_none()
        return found

    def mark(
        self, user_id: str, project_id: str, items: Iterable[tuple[str, str]], at: datetime
    ) -> None:
        """Mark items read; those already read keep the time they were first read."""
        rows = [
            {
                "user_id": user_id,
                "item_kind": kind,
                "item_id": item_id,
                "project_id": project_id,
                "read_at": at,
            }
            for kind, item_id in items
        ]
        if rows:
            statement = _dialect(self.conn).insert(t.inbox_reads).on_conflict_do_nothing()
            self.conn.execute(statement, rows)

    def unmark(self, user_id: str, kind: str, item_id: str) -> bool:
        """Make an item new again for the person; False when it was not read."""
        c = t.inbox_reads.c
        result = self.conn.execute(
            delete(t.inbox_reads).where(
                c.user_id == user_id, c.item_kind == kind, c.item_id == item_id
            )
        )
        return result.rowcount == 1

    def mark_all(
        self,
        user_id: str,
        project_id: str,
        waiting_drafts: Sequence[str],
        at: datetime,
        kind: str | None = None,
    ) -> int:
        """Mark everything in the person's inbox of a project read (or all of one kind), in one
        statement; how many items became read."""
        items = waiting_items(project_id, user_id, waiting_drafts, kind)
        unread = select(
            literal(user_id, String),
            items.c.kind,
            items.c.id,
            literal(project_id, String),
            literal(at, t.inbox_reads.c.read_at.type),
        ).where(~self._read(user_id, items))
        statement = (
            _dialect(self.conn)
            .insert(t.inbox_reads)
            .from_select(["user_id", "item_kind", "item_id", "project_id", "read_at"], unread)
            .on_conflict_do_nothing()
            .returning(t.inbox_reads.c.item_id)  # a count the drivers agree on (not rowcount)
        )
        return len(self.conn.execute(statement).all())

    def read_of(self, user_id: str, item_ids: Sequence[str]) -> set[tuple[str, str]]:
        """Which of these items the person has read, as (kind, id)."""
        if not item_ids:
            return set()
        c = t.inbox_reads.c
        rows = self.conn.execute(
            select(c.item_kind, c.item_id).where(
                c.user_id == user_id, c.item_id.in_(list(item_ids))
            )
        )
        return {(row.item_kind, row.item_id) for row in rows}

    def unread_count(self, user_id: str, project_id: str, waiting_drafts: Sequence[str]) -> int:
        """How many items of the person's inbox of one project they have not read: one query."""
        items = waiting_items(project_id, user_id, waiting_drafts)
        count = self.conn.execute(
            select(func.count()).select_from(items).where(~self._read(user_id, items))
        ).scalar_one()
        return int(count)

    @staticmethod
    def _read(user_id: str, items: Subquery) -> Any:
        c = t.inbox_reads.c
        return exists().where(
            c.user_id == user_id, c.item_kind == items.c.kind, c.item_id == items.c.id
        )
