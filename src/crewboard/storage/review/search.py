"""SQL for searching hand-ins: a bounded LIKE over one project's newest drafts (no text index)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, func, select

from crewboard.storage.like import SCAN_LIMIT, every_word_in
from crewboard.storage.review import tables as t


@dataclass(frozen=True)
class DraftHit:
    id: str
    task_id: str | None
    title: str
    summary: str
    content: str
    status: str
    created_at: datetime


@dataclass(frozen=True)
class DraftHits:
    rows: list[DraftHit]
    total: int  # matches among the rows searched
    cut: bool  # the project has more hand-ins than were searched (only the newest)


def search_drafts(
    conn: Connection, project_id: str, words: Sequence[str], *, limit: int, offset: int
) -> DraftHits:
    """Hand-ins of the project whose title, summary or content holds every word, newest first;
    only the project's newest SCAN_LIMIT hand-ins are searched."""
    d = t.drafts.c
    newest = (
        select(d.id)
        .where(d.project_id == project_id)
        .order_by(d.created_at.desc(), d.id.desc())
        .limit(SCAN_LIMIT)
        .subquery("newest")
    )
    match = [
        d.project_id == project_id,
        d.id.in_(select(newest.c.id)),
        every_word_in([d.title, d.summary, d.content], words),
    ]
    rows = conn.execute(
        select(d.id, d.task_id, d.title, d.summary, d.content, d.status, d.created_at)
        .where(*match)
        .order_by(d.created_at.desc(), d.id.desc())
        .limit(limit)
        .offset(offset)
    )
    total = conn.execute(select(func.count()).select_from(t.drafts).where(*match)).scalar_one()
    scanned = conn.execute(select(func.count()).select_from(newest)).scalar_one()
    return DraftHits(
        [DraftHit(**row._asdict()) for row in rows], int(total), int(scanned) >= SCAN_LIMIT
    )
