"""SQL for searching task comments and agent updates through their text index (migration 0012):
every word, whole, in the content, within one project, newest first.

A comment carries its task's project (task_comments.project_id, set when it is written; a task
never changes project), and the index holds it beside the words: finding and counting a
project's matches needs no join. Only the page of rows shown is joined to its tasks, for their
numbers and titles."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

from crewboard.domain.board.notes import CommentHit, CommentHits, NoteKind
from crewboard.storage.search_index import Match, fts_match, postgres_match
from crewboard.storage.types import UTCDateTime

_COLUMNS = (
    "c.id, c.task_id, t.number AS task_number, t.title AS task_title, c.kind, c.content, "
    "c.created_at"
)
# SQLite: comments_fts names the project in its `scope` column (migration 0012).
_SQLITE_MATCH = "c.rowid IN (SELECT rowid FROM comments_fts WHERE comments_fts MATCH :fts_query)"
# PostgreSQL: exactly the expression of ix_task_comments_search, so the planner can use it.
_POSTGRES_DOCUMENT = (
    "(to_tsvector('simple', c.content) || array_to_tsvector(ARRAY[c.project_id::text]))"
)


def _match(dialect: str, project_id: str, words: Sequence[str]) -> Match:
    if dialect == "postgresql":
        return postgres_match(_POSTGRES_DOCUMENT, "c.project_id", project_id, words)
    return fts_match(_SQLITE_MATCH, "c.project_id", "{content}", project_id, words)


def search_comments(
    conn: Connection, project_id: str, words: Sequence[str], *, limit: int, offset: int
) -> CommentHits:
    """One page of the comments and agent updates on the project's tasks that hold every word
    (whole words, any case), newest first, and how many hold them."""
    if not words:
        return CommentHits([], 0)
    # The condition is built from the constants above; every value goes in as a parameter.
    condition, values = _match(conn.dialect.name, project_id, words)
    rows = conn.execute(
        text(
            f"SELECT {_COLUMNS} FROM task_comments AS c JOIN tasks AS t ON t.id = c.task_id "
            f"WHERE {condition} "
            "ORDER BY c.created_at DESC, c.id DESC LIMIT :limit OFFSET :offset"
        ).columns(created_at=UTCDateTime()),
        {**values, "limit": limit, "offset": offset},
    )
    total = conn.execute(
        text(f"SELECT count(*) FROM task_comments AS c WHERE {condition}"), values
    ).scalar_one()
    return CommentHits(
        [CommentHit(**row._asdict() | {"kind": NoteKind(row.kind)}) for row in rows], int(total)
    )
