"""SQL for searching memory records through their text index (migration 0005): every word in
the title, summary or content, within one project, the most recently changed first."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

from crewboard.domain.memory import MemoryStatus, RecordHit
from crewboard.storage.types import UTCDateTime

_COLUMNS = "r.id, r.title, r.summary, r.content, r.collection, r.document, r.status, r.updated_at"
# SQLite: the FTS5 table names the project in its own column (a phrase: the tokenizer splits
# the id at its underscore) and every word in one of the text columns.
_SQLITE_MATCH = (
    "r.project_id = :project_id AND r.rowid IN "
    "(SELECT rowid FROM memory_fts WHERE memory_fts MATCH :query)"
)
# PostgreSQL: exactly the expression of the GIN index, so the planner can use it.
_POSTGRES_MATCH = (
    "r.project_id = :project_id AND "
    "to_tsvector('simple', r.title || ' ' || r.summary || ' ' || r.content)"
    " @@ plainto_tsquery('simple', :query)"
)


def _query(dialect: str, project_id: str, words: Sequence[str]) -> tuple[str, str]:
    """The match condition and its query text for the dialect."""
    if dialect == "postgresql":
        return _POSTGRES_MATCH, " ".join(words)

    def quoted(value: str) -> str:  # so nothing in it reads as FTS5 query syntax
        return '"' + value.replace('"', '""') + '"'

    every = " AND ".join("{title summary content} : " + quoted(word) for word in words)
    return _SQLITE_MATCH, f"project_id : {quoted(project_id)} AND {every}"


def search_records(
    conn: Connection, project_id: str, words: Sequence[str], *, limit: int, offset: int
) -> tuple[list[RecordHit], int]:
    """One page of the project's records holding every word, and how many hold them."""
    if not words:
        return [], 0
    # The condition is one of the two constants above; every value goes in as a parameter.
    condition, query = _query(conn.dialect.name, project_id, words)
    values = {"project_id": project_id, "query": query, "limit": limit, "offset": offset}
    rows = conn.execute(
        text(
            f"SELECT {_COLUMNS} FROM memory_records AS r WHERE {condition} "
            "ORDER BY r.updated_at DESC, r.id DESC LIMIT :limit OFFSET :offset"
        ).columns(updated_at=UTCDateTime()),
        values,
    )
    total = conn.execute(
        text(f"SELECT count(*) FROM memory_records AS r WHERE {condition}"),
        values,
    ).scalar_one()
    return [RecordHit(**row._asdict() | {"status": MemoryStatus(row.status)}) for row in rows], int(
        total
    )
