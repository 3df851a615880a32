"""Paging checks shared by every list that takes `limit` (and `offset`)."""

from __future__ import annotations

import json
from typing import Any

from crewboard.errors import ValidationFailed

MAX_PAGE = 200


def check_limit(limit: int, maximum: int = MAX_PAGE) -> int:
    """Raises: ValidationFailed naming `limit` when it is outside 1..maximum."""
    if not 1 <= limit <= maximum:
        raise ValidationFailed.field("limit", f"must be between 1 and {maximum}; got {limit}.")
    return limit


def check_page(limit: int, offset: int, maximum: int = MAX_PAGE) -> tuple[int, int]:
    """Raises: ValidationFailed naming `limit` (outside 1..maximum) or a negative `offset`."""
    check_limit(limit, maximum)
    if offset < 0:
        raise ValidationFailed.field("offset", f"must be 0 or more; got {offset}.")
    return limit, offset


def next_offset(offset: int, shown: int, total: int) -> int | None:
    following = offset + shown
    return following if following < total else None


def json_size(value: Any) -> int:
    """Bytes of `value` as compact JSON (UTF-8), as an answer carries it."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def fit_rows(rows: list[Any], budget: int) -> list[Any]:
    """Keep leading rows while their JSON stays inside the budget (a page may hold fewer; the
    first row is kept whatever its size)."""
    # The usual page fits whole: one dump of the list tells (each row's own dump, below, is
    # a separator short of the list's, so "fits whole" means the same in both).
    if json_size(rows) + 1 <= budget:
        return rows
    kept: list[Any] = []
    used = 0
    for row in rows:
        used += json_size(row) + 1
        if used > budget and kept:
            break
        kept.append(row)
    return kept
