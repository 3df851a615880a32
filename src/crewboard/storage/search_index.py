"""The match condition of a search through a text index that holds each row's project beside
its words (hand-ins and task comments, migration 0012, built as the tasks' of 0008).

Every word must appear whole (any case, diacritics ignored on SQLite), as in the tasks' and
memory records' searches: no prefixes, no substrings. Words go in as parameters and are quoted,
so nothing in one reads as FTS5 or tsquery syntax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Row, text

from crewboard.storage.types import UTCDateTime

Match = tuple[str, dict[str, str]]  # an SQL condition, and the values of its parameters


def _fts_quoted(value: str) -> str:
    """An FTS5 string: a phrase of the value's tokens, nothing in it read as query syntax."""
    return '"' + value.replace('"', '""') + '"'


def fts_match(
    membership: str, project_column: str, columns: str, project_id: str, words: Sequence[str]
) -> Match:
    """SQLite: `membership` tests the row against `:fts_query`, which names the project's
    scope token (its id without the underscore, one token) and every word in `columns` (an
    FTS5 column filter such as `{title summary content}`). The project column is checked
    again, unary `+` keeping the planner on the text index rather than the project's rows."""
    every = " AND ".join(f"{columns} : {_fts_quoted(word)}" for word in words)
    query = f"scope : {_fts_quoted(project_id.replace('_', ''))} AND {every}"
    condition = f"{membership} AND +{project_column} = :project_id"
    return condition, {"fts_query": query, "project_id": project_id}


def postgres_match(
    document: str, project_column: str, project_id: str, words: Sequence[str]
) -> Match:
    """PostgreSQL: `document` (exactly the GIN index's expression) holds every word and the
    project's lexeme, so the index answers only that project's matches.

    Text cannot make a lexeme holding an underscore (the parser splits words there, and every
    id has one), so the project column is left out then, as the tasks' search does
    (storage/board/tasks.py `_scoped_in_text_index`): a prepared generic plan would otherwise
    AND the index's matches with every row of the project from a B-tree."""
    # The project id as a tsquery lexeme, quoted so no character of it reads as syntax.
    scope = "'" + project_id.replace("\\", "\\\\").replace("'", "''") + "'"
    condition = f"{document} @@ (plainto_tsquery('simple', :ts_query) && CAST(:scope AS tsquery))"
    if "_" not in project_id:
        condition += f" AND {project_column} = :project_id"
    return condition, {"ts_query": " ".join(words), "scope": scope, "project_id": project_id}


@dataclass(frozen=True)
class ScopedIndex:
    """A table searched through such an index, its rows newest first: `table` names it with
    its alias (`drafts AS d`), whose rows have `id`, `project_id` and `created_at`;
    `membership` and `columns` are the SQLite side (see `fts_match`), `document` the
    PostgreSQL one (see `postgres_match`). Every piece is a constant of the caller's module."""

    table: str
    alias: str
    membership: str
    columns: str
    document: str

    def match(self, dialect: str, project_id: str, words: Sequence[str]) -> Match:
        """The condition that a row of the project holds every word, on this dialect."""
        project_column = f"{self.alias}.project_id"
        if dialect == "postgresql":
            return postgres_match(self.document, project_column, project_id, words)
        return fts_match(self.membership, project_column, self.columns, project_id, words)


def search_page(
    conn: Connection,
    index: ScopedIndex,
    project_id: str,
    words: Sequence[str],
    *,
    select: str,
    join: str = "",
    limit: int,
    offset: int,
) -> tuple[list[Row[Any]], int]:
    """One page of the project's rows holding every word (`select` from the table and its
    `join`), newest first, and how many rows hold them."""
    # The condition is built from constants; every value goes in as a parameter.
    condition, values = index.match(conn.dialect.name, project_id, words)
    newest = f"{index.alias}.created_at DESC, {index.alias}.id DESC"
    rows = conn.execute(
        text(
            f"SELECT {select} FROM {index.table}{join} WHERE {condition} "
            f"ORDER BY {newest} LIMIT :limit OFFSET :offset"
        ).columns(created_at=UTCDateTime()),
        {**values, "limit": limit, "offset": offset},
    ).all()
    total = conn.execute(
        text(f"SELECT count(*) FROM {index.table} WHERE {condition}"), values
    ).scalar_one()
    return list(rows), int(total)
