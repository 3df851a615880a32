"""The searchable text of things whose words are not in a column of their own: spec files and
artifacts (their bytes are blobs) and handoffs (four bodies), one row each, written by their
area's service in the same transaction as the change, and searched through one text index
(migration 0026): an FTS5 table on SQLite, a GIN expression index on PostgreSQL, each holding
the row's project (and kind) beside its words, as the hand-ins' and comments' do (0012).

Every word must appear whole (any case), as in every other search; words go in as parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Connection, text

from crewboard.storage.schema import ID, metadata, project_ref, required
from crewboard.storage.search_index import fts_match, postgres_match
from crewboard.storage.types import UTCDateTime

KINDS = ("spec_file", "artifact", "handoff")
MAX_TEXT = 200_000  # characters of a thing's text kept for search (the rest is not found)

search_texts = sa.Table(
    "search_texts",
    metadata,
    sa.Column("id", sa.String(ID), primary_key=True),  # the thing's own id (spf_, art_, hof_)
    project_ref(),
    required("kind", sa.String(16)),
    required("title", sa.String(512)),
    required("content", sa.Text),
    required("created_at", UTCDateTime),  # when its text last changed: newest first
    sa.CheckConstraint("kind IN ('spec_file', 'artifact', 'handoff')", name="kind"),
    sa.Index("ix_search_texts_project_id_kind", "project_id", "kind"),
)

# SQLite: search_texts_fts names the project and kind in its `scope` column (migration 0026).
_MEMBERSHIP = (
    "s.rowid IN (SELECT rowid FROM search_texts_fts WHERE search_texts_fts MATCH :fts_query)"
)
# PostgreSQL: exactly the expression of ix_search_texts_search, so the planner can use it. A
# path's separators are spaces there, or its parser keeps "docs/cart.md" as one word.
_DOCUMENT = (
    "(to_tsvector('simple', translate(s.title, '/.-', '   ') || ' ' || s.content)"
    " || array_to_tsvector(ARRAY[s.project_id::text]))"
)
# Spec files in the trash bin are not found (their text stays for a restore).
_VISIBLE = {
    "spec_file": " AND s.id IN (SELECT f.id FROM spec_files AS f WHERE f.trashed_at IS NULL)",
}


# What a result links by besides its id: an artifact's slug, a handoff's day.
_LINK = {
    "artifact": "(SELECT a.slug FROM artifacts AS a WHERE a.id = s.id)",
    "handoff": "(SELECT CAST(h.day AS VARCHAR(10)) FROM handoffs AS h WHERE h.id = s.id)",
    "spec_file": "s.id",
}


@dataclass(frozen=True)
class TextHit:
    id: str
    title: str
    content: str
    created_at: datetime
    link: str | None


def put_text(
    conn: Connection, *, kind: str, id: str, project_id: str, title: str, content: str,
    at: datetime,
) -> None:  # fmt: skip
    """Keep (or replace) the searchable text of one thing."""
    row = {"title": title[:512], "content": content[:MAX_TEXT], "created_at": at}
    done = conn.execute(sa.update(search_texts).where(search_texts.c.id == id).values(**row))
    if done.rowcount == 0:
        conn.execute(sa.insert(search_texts).values(id=id, project_id=project_id, kind=kind, **row))


def drop_text(conn: Connection, id: str) -> None:
    """Forget a thing's text (it was deleted)."""
    conn.execute(sa.delete(search_texts).where(search_texts.c.id == id))


def search_texts_of(
    conn: Connection, kind: str, project_id: str, words: Sequence[str], *, limit: int,
    offset: int,
) -> tuple[list[TextHit], int]:  # fmt: skip
    """One page of the project's things of `kind` holding every word, newest first, and how
    many hold them: two statements, whatever the project holds."""
    if not words or kind not in KINDS:
        return [], 0
    if conn.dialect.name == "postgresql":
        condition, values = postgres_match(_DOCUMENT, "s.project_id", project_id, words)
    else:
        condition, values = fts_match(
            _MEMBERSHIP, "s.project_id", "{title content}", project_id, words
        )
    condition += " AND s.kind = :kind" + _VISIBLE.get(kind, "")
    values = {**values, "kind": kind}
    # The condition is built from constants; every value goes in as a parameter.
    rows = conn.execute(
        text(
            f"SELECT s.id, s.title, s.content, s.created_at, {_LINK[kind]} AS link "
            "FROM search_texts AS s "
            f"WHERE {condition} ORDER BY s.created_at DESC, s.id DESC "
            "LIMIT :limit OFFSET :offset"
        ).columns(created_at=UTCDateTime()),
        {**values, "limit": limit, "offset": offset},
    ).all()
    total = conn.execute(
        text(f"SELECT count(*) FROM search_texts AS s WHERE {condition}"), values
    ).scalar_one()
    hits = [TextHit(**row._asdict()) for row in rows]
    return [h if h.link is None else replace(h, link=str(h.link)[:200]) for h in hits], int(total)
