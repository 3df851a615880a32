"""Word-by-word LIKE matching, for kinds that have no text index (hand-ins, task comments).

Tasks (`q`) and memory records have text indexes (migrations 0003, 0005, 0008); hand-ins and
task comments have none yet. Their search reads only the newest SCAN_LIMIT rows of one
project (found through an index on the project or its tasks) and matches each word as a
case-insensitive substring there, so its cost stays flat however large the project grows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, and_, or_

SCAN_LIMIT = 2000  # newest rows of one project a LIKE search reads


def every_word_in(columns: Sequence[Any], words: Sequence[str]) -> ColumnElement[bool]:
    """Each word in at least one of the columns, case-insensitive (ILIKE on PostgreSQL);
    `%`, `_` and the escape character in a word match only themselves."""
    return and_(
        *(or_(*(column.icontains(word, autoescape=True) for column in columns)) for word in words)
    )
