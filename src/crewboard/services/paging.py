"""Paging checks shared by every list that takes `limit` (and `offset`)."""

from __future__ import annotations

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
