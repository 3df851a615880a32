"""SQL behind context packs and context receipts: reads of accepted memory (records and the
project documents, written elsewhere) and the receipts that record what one read handed out."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Integer, bindparam, func, insert, select, text

from crewboard.domain.board.context import Receipt
from crewboard.domain.memory import DocumentText, IndexEntry, MemoryStatus, RecordText
from crewboard.storage.board import tables as t
from crewboard.storage.memory import tables as memory_tables
from crewboard.storage.projects import tables as projects_tables
from crewboard.storage.review import tables as review_tables
from crewboard.storage.rows import record_from_row, record_values

# How much of a summary and of a content an index line is taken from (its first line).
LINE_SOURCE_CHARS = 400

_RECORD_COLUMNS = "id, title, summary, content, collection, document, status, version"
# Ranking is the costly part of a match: only the newest MATCH_CANDIDATES records that share a
# word with the task are ranked, so a pack costs the same in a project of 100 records or
# 100,000 (in a large project the best match among the newest few hundred wins).
MATCH_CANDIDATES = 400
# Both statements use exactly the expression of the text index made by migration 0005, so the
# planner can use it (FTS5 table on SQLite, GIN index on PostgreSQL). On SQLite the FTS5 table
# is walked newest rowid first and stops after the candidates; bm25 weighs the title most and
# the project id column (there only to scope the match) not at all.
_SQLITE_MATCH = text(
    f"SELECT r.{_RECORD_COLUMNS.replace(', ', ', r.')} FROM ("
    "  SELECT rowid, bm25(memory_fts, 0.0, 4.0, 2.0, 1.0) AS score FROM memory_fts"
    "  WHERE memory_fts MATCH :query ORDER BY rowid DESC LIMIT :candidates"
    ") AS hit JOIN memory_records AS r ON r.rowid = hit.rowid "
    "WHERE r.project_id = :project_id ORDER BY hit.score LIMIT :limit"
)
_POSTGRES_MATCH = text(
    f"SELECT {_RECORD_COLUMNS} FROM ("
    f"  SELECT {_RECORD_COLUMNS}, updated_at,"
    "   to_tsvector('simple', title || ' ' || summary || ' ' || content) AS doc"
    "  FROM memory_records WHERE project_id = :project_id AND"
    "   to_tsvector('simple', title || ' ' || summary || ' ' || content)"
    "   @@ to_tsquery('simple', :query)"
    "  ORDER BY updated_at DESC LIMIT :candidates"
    ") AS hit ORDER BY ts_rank(doc, to_tsquery('simple', :query)) DESC, updated_at DESC "
    "LIMIT :limit"
)

# Built once, values passed as parameters: building one costs more than running it on SQLite.
_R = memory_tables.memory_records.c
_D = memory_tables.project_documents.c
_RECEIPTS = t.context_receipts
_RECORDS_BY_ID = select(
    _R.id, _R.title, _R.summary, _R.content, _R.collection, _R.document, _R.status, _R.version
).where(_R.project_id == bindparam("project_id"), _R.id.in_(bindparam("ids", expanding=True)))
_INDEX = (
    select(
        _R.id,
        _R.title,
        func.substr(_R.summary, 1, LINE_SOURCE_CHARS).label("summary_start"),
        func.substr(_R.content, 1, LINE_SOURCE_CHARS).label("content_start"),
    )
    .where(_R.project_id == bindparam("project_id"))
    .order_by(_R.updated_at.desc(), _R.id)
    .limit(bindparam("limit", type_=Integer))
    .offset(bindparam("offset", type_=Integer))
)
_COUNT_RECORDS = (
    select(func.count())
    .select_from(memory_tables.memory_records)
    .where(_R.project_id == bindparam("project_id"))
)
_DOCUMENTS = select(_D.name, _D.content, _D.version).where(
    _D.project_id == bindparam("project_id"), _D.name.in_(bindparam("names", expanding=True))
)
_ANY_DOCUMENT_TEXT = (
    select(_D.name).where(_D.project_id == bindparam("project_id"), _D.content != "").limit(1)
)
_RECORD_VERSIONS = select(_R.id, _R.title, _R.version).where(
    _R.id.in_(bindparam("ids", expanding=True))
)
_DOCUMENT_VERSIONS = select(_D.project_id, _D.name, _D.version).where(
    _D.project_id.in_(bindparam("project_ids", expanding=True))
)
_STATE_REVISIONS = select(
    projects_tables.project_state.c.project_id, projects_tables.project_state.c.revision
).where(projects_tables.project_state.c.project_id.in_(bindparam("project_ids", expanding=True)))
_TASK_BRIEFS = select(t.tasks.c.id, t.tasks.c.title, t.tasks.c.brief).where(
    t.tasks.c.id.in_(bindparam("task_ids", expanding=True))
)
_INSERT_RECEIPT = insert(_RECEIPTS)
_RECEIPTS_BY_ID = select(_RECEIPTS).where(_RECEIPTS.c.id.in_(bindparam("ids", expanding=True)))
_STALE_RECEIPTS = (
    select(_RECEIPTS.c.id)
    .where(
        _RECEIPTS.c.project_id == bindparam("project_id"),
        _RECEIPTS.c.created_at < bindparam("before"),
        ~select(review_tables.drafts.c.id)
        .where(review_tables.drafts.c.context_receipt_id == _RECEIPTS.c.id)
        .exists(),
    )
    .limit(bindparam("limit", type_=Integer))
)
_DELETE_RECEIPTS = _RECEIPTS.delete().where(_RECEIPTS.c.id.in_(bindparam("ids", expanding=True)))


class ContextRepository:
    """Reads of memory for packs, and the context_receipts table."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- memory, read only -----------------------------------------------------------------

    def records(self, project_id: str, ids: Iterable[str]) -> dict[str, RecordText]:
        """The project's records among `ids` (ids of other projects are simply absent)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        rows = self.conn.execute(_RECORDS_BY_ID, {"project_id": project_id, "ids": wanted})
        return {row.id: _record(row) for row in rows}

    def matching(self, project_id: str, words: list[str], limit: int) -> list[RecordText]:
        """Records sharing any of `words` (letters and digits only), best match first."""
        if not words or limit <= 0:
            return []
        if self.conn.dialect.name == "postgresql":
            query = " | ".join(f"'{word}'" for word in words)
            statement = _POSTGRES_MATCH
        else:
            # The project's id as a phrase in its own column, then any of the words.
            any_word = " OR ".join(f'"{word}"' for word in words)
            query = f'project_id : "{project_id}" AND ({any_word})'
            statement = _SQLITE_MATCH
        rows = self.conn.execute(
            statement,
            {
                "project_id": project_id,
                "query": query,
                "limit": limit,
                "candidates": MATCH_CANDIDATES,
            },
        )
        return [_record(row) for row in rows]

    def index(
        self, project_id: str, skip: set[str], *, limit: int, offset: int = 0
    ) -> list[IndexEntry]:
        """The project's records from `offset` on, most recently updated first, `limit` rows
        read; those in `skip` are left out of the answer (so it may hold fewer)."""
        rows = self.conn.execute(
            _INDEX, {"project_id": project_id, "limit": limit, "offset": offset}
        )
        return [
            IndexEntry(row.id, row.title, row.summary_start, row.content_start)
            for row in rows
            if row.id not in skip
        ]

    def count_records(self, project_id: str) -> int:
        return int(self.conn.execute(_COUNT_RECORDS, {"project_id": project_id}).scalar_one())

    def documents(self, project_id: str, names: Iterable[str]) -> dict[str, DocumentText]:
        """The accepted text of the named documents that exist (empty text included)."""
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return {}
        rows = self.conn.execute(_DOCUMENTS, {"project_id": project_id, "names": wanted})
        return {row.name: DocumentText(row.name, row.content, row.version) for row in rows}

    def has_documents(self, project_id: str) -> bool:
        """Whether any project document holds accepted text."""
        row = self.conn.execute(_ANY_DOCUMENT_TEXT, {"project_id": project_id}).first()
        return row is not None

    def record_versions(self, ids: Iterable[str]) -> dict[str, tuple[str, int]]:
        """Current (title, version) of each record among `ids` that still exists."""
        wanted = list(set(ids))
        if not wanted:
            return {}
        rows = self.conn.execute(_RECORD_VERSIONS, {"ids": wanted})
        return {row.id: (row.title, row.version) for row in rows}

    def document_versions(self, project_ids: Iterable[str]) -> dict[tuple[str, str], int]:
        """Current version of every document of these projects, keyed by (project, name)."""
        wanted = list(set(project_ids))
        if not wanted:
            return {}
        rows = self.conn.execute(_DOCUMENT_VERSIONS, {"project_ids": wanted})
        return {(row.project_id, row.name): row.version for row in rows}

    def state_revisions(self, project_ids: Iterable[str]) -> dict[str, int]:
        """Current state page revision of each project that has a page (absent: revision 0)."""
        wanted = list(set(project_ids))
        if not wanted:
            return {}
        rows = self.conn.execute(_STATE_REVISIONS, {"project_ids": wanted})
        return {row.project_id: row.revision for row in rows}

    def task_briefs(self, task_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """Current (title, brief) of each task among `task_ids` that still exists."""
        wanted = list(set(task_ids))
        if not wanted:
            return {}
        rows = self.conn.execute(_TASK_BRIEFS, {"task_ids": wanted})
        return {row.id: (row.title, row.brief) for row in rows}

    # --- receipts --------------------------------------------------------------------------

    def add_receipt(self, receipt: Receipt) -> None:
        self.conn.execute(
            _INSERT_RECEIPT,
            record_values(receipt, _RECEIPTS),
        )

    def receipts(self, ids: Iterable[str]) -> dict[str, Receipt]:
        wanted = list(set(ids))
        if not wanted:
            return {}
        rows = self.conn.execute(_RECEIPTS_BY_ID, {"ids": wanted})
        return {
            row.id: Receipt(
                row.id, row.project_id, row.task_id, row.token_id, list(row.items), row.created_at
            )
            for row in rows
        }

    def prune_receipts(self, project_id: str, before: datetime, *, limit: int = 100) -> int:
        """Delete up to `limit` of a project's receipts made before `before` that no draft
        names (a hand-in keeps its receipt for as long as it exists); the number deleted."""
        ids = list(
            self.conn.execute(
                _STALE_RECEIPTS, {"project_id": project_id, "before": before, "limit": limit}
            ).scalars()
        )
        if not ids:
            return 0
        return int(self.conn.execute(_DELETE_RECEIPTS, {"ids": ids}).rowcount or 0)


def _record(row: Any) -> RecordText:
    return record_from_row(RecordText, row, status=MemoryStatus(row.status))
