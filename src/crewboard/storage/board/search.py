"""SQL for searching task comments and agent updates through their text index (migration 0012):
every word, whole, in the content, within one project, newest first.

A comment carries its task's project (task_comments.project_id, set when it is written; a task
never changes project), and the index holds it beside the words: finding and counting a
project's matches needs no join. Only the page of rows shown is joined to its tasks, for their
numbers and titles."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection

from crewboard.domain.board.notes import CommentHit, CommentHits, NoteKind
from crewboard.storage.search_index import ScopedIndex, search_page

_COLUMNS = (
    "c.id, c.task_id, t.number AS task_number, t.title AS task_title, c.kind, c.content, "
    "c.created_at"
)
_INDEX = ScopedIndex(
    table="task_comments AS c",
    alias="c",
    # SQLite: comments_fts names the project in its `scope` column (migration 0012).
    membership="c.rowid IN (SELECT rowid FROM comments_fts WHERE comments_fts MATCH :fts_query)",
    columns="{content}",
    # PostgreSQL: exactly the expression of ix_task_comments_search, so the planner can use it.
    document="(to_tsvector('simple', c.content) || array_to_tsvector(ARRAY[c.project_id::text]))",
)


def search_comments(
    conn: Connection, project_id: str, words: Sequence[str], *, limit: int, offset: int
) -> CommentHits:
    """One page of the comments and agent updates on the project's tasks that hold every word
    (whole words, any case), newest first, and how many hold them."""
    if not words:
        return CommentHits([], 0)
    rows, total = search_page(
        conn,
        _INDEX,
        project_id,
        words,
        select=_COLUMNS,
        join=" JOIN tasks AS t ON t.id = c.task_id",
        limit=limit,
        offset=offset,
    )
    return CommentHits(
        [CommentHit(**row._asdict() | {"kind": NoteKind(row.kind)}) for row in rows], total
    )
