"""SQL for searching hand-ins through their text index (migration 0012): every word, whole, in
the title, summary or content, within one project, newest first."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection

from crewboard.domain.review import DraftHit, DraftHits, DraftStatus
from crewboard.storage.search_index import ScopedIndex, search_page

_COLUMNS = "d.id, d.task_id, d.title, d.summary, d.content, d.status, d.created_at"
_INDEX = ScopedIndex(
    table="drafts AS d",
    alias="d",
    # SQLite: drafts_fts names the project in its `scope` column (migration 0012).
    membership="d.rowid IN (SELECT rowid FROM drafts_fts WHERE drafts_fts MATCH :fts_query)",
    columns="{title summary content}",
    # PostgreSQL: exactly the expression of ix_drafts_search, so the planner can use it.
    document=(
        "(to_tsvector('simple', d.title || ' ' || d.summary || ' ' || d.content)"
        " || array_to_tsvector(ARRAY[d.project_id::text]))"
    ),
)


def search_drafts(
    conn: Connection, project_id: str, words: Sequence[str], *, limit: int, offset: int
) -> DraftHits:
    """One page of the project's hand-ins whose title, summary or content holds every word
    (whole words, any case), newest first, and how many hold them."""
    if not words:
        return DraftHits([], 0)
    rows, total = search_page(
        conn, _INDEX, project_id, words, select=_COLUMNS, limit=limit, offset=offset
    )
    return DraftHits(
        [DraftHit(**row._asdict() | {"status": DraftStatus(row.status)}) for row in rows], total
    )
