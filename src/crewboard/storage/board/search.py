"""SQL for searching task comments and agent updates: a bounded LIKE over one project's newest
notes (no text index), reached through the project's tasks (task_comments has no index on its
project)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, func, select

from crewboard.storage.board import tables as t
from crewboard.storage.like import SCAN_LIMIT, every_word_in


@dataclass(frozen=True)
class CommentHit:
    id: str
    task_id: str
    task_number: int
    task_title: str
    kind: str  # comment | agent_update
    content: str
    created_at: datetime


@dataclass(frozen=True)
class CommentHits:
    rows: list[CommentHit]
    total: int  # matches among the notes searched
    cut: bool  # the project has more notes than were searched (only the newest)


def search_comments(
    conn: Connection, project_id: str, words: Sequence[str], *, limit: int, offset: int
) -> CommentHits:
    """Comments and agent updates on the project's tasks that hold every word, newest first;
    only the project's newest SCAN_LIMIT notes are searched."""
    c, task = t.task_comments.c, t.tasks.c
    on_tasks = t.task_comments.join(t.tasks, task.id == c.task_id)
    newest = (
        select(c.id)
        .select_from(on_tasks)
        .where(task.project_id == project_id, c.project_id == project_id)
        .order_by(c.created_at.desc(), c.id.desc())
        .limit(SCAN_LIMIT)
        .subquery("newest")
    )
    match = [
        task.project_id == project_id,
        c.project_id == project_id,
        c.id.in_(select(newest.c.id)),
        every_word_in([c.content], words),
    ]
    rows = conn.execute(
        select(
            c.id,
            c.task_id,
            task.number.label("task_number"),
            task.title.label("task_title"),
            c.kind,
            c.content,
            c.created_at,
        )
        .select_from(on_tasks)
        .where(*match)
        .order_by(c.created_at.desc(), c.id.desc())
        .limit(limit)
        .offset(offset)
    )
    total = conn.execute(select(func.count()).select_from(on_tasks).where(*match)).scalar_one()
    scanned = conn.execute(select(func.count()).select_from(newest)).scalar_one()
    return CommentHits(
        [CommentHit(**row._asdict()) for row in rows], int(total), int(scanned) >= SCAN_LIMIT
    )
