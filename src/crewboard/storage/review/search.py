"""SQL for searching hand-ins through their text index (migration 0012): every word, whole, in
the title, summary or content, within one project, newest first."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

from crewboard.domain.review import DraftHit, DraftHits, DraftStatus
from crewboard.storage.search_index import Match, fts_match, postgres_match
from crewboard.storage.types import UTCDateTime

_COLUMNS = "d.id, d.task_id, d.title, d.summary, d.content, d.status, d.created_at"
# SQLite: drafts_fts names the project in its `scope` column (migration 0012).
_SQLITE_MATCH = "d.rowid IN (SELECT rowid FROM drafts_fts WHERE drafts_fts MATCH :fts_query)"
# PostgreSQL: exactly the expression of ix_drafts_search, so the planner can use it.
_POSTGRES_DOCUMENT = (
    "(to_tsvector('simple', d.title || ' ' || d.summary || ' ' || d.content)"
    " || array_to_tsvector(ARRAY[d.project_id::text]))"
)


def _match(dialect: str, project_id: str, words: Sequence[str]) -> Match:
    if dialect == "postgresql":
        return postgres_match(_POSTGRES_DOCUMENT, "d.project_id", project_id, words)
    return fts_match(_SQLITE_MATCH, "d.project_id", "{title summary content}", project_id, words)


def search_drafts(
    conn: Connection, project_id: str, words: Sequence[str], *, limit: int, offset: int
) -> DraftHits:
    """One page of the project's hand-ins whose title, summary or content holds every word
    (whole words, any case), newest first, and how many hold them."""
    if not words:
        return DraftHits([], 0)
    # The condition is built from the constants above; every value goes in as a parameter.
    condition, values = _match(conn.dialect.name, project_id, words)
    rows = conn.execute(
        text(
            f"SELECT {_COLUMNS} FROM drafts AS d WHERE {condition} "
            "ORDER BY d.created_at DESC, d.id DESC LIMIT :limit OFFSET :offset"
        ).columns(created_at=UTCDateTime()),
        {**values, "limit": limit, "offset": offset},
    )
    total = conn.execute(
        text(f"SELECT count(*) FROM drafts AS d WHERE {condition}"), values
    ).scalar_one()
    return DraftHits(
        [DraftHit(**row._asdict() | {"status": DraftStatus(row.status)}) for row in rows],
        int(total),
    )
