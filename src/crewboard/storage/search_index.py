"""The match condition of a search through a text index that holds each row's project beside
its words (hand-ins and task comments, migration 0012, built as the tasks' of 0008).

Every word must appear whole (any case, diacritics ignored on SQLite), as in the tasks' and
memory records' searches: no prefixes, no substrings. Words go in as parameters and are quoted,
so nothing in one reads as FTS5 or tsquery syntax.
"""

from __future__ import annotations

from collections.abc import Sequence

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
