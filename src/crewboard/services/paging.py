"""Paging checks shared by every list that takes `limit` and `offset`."""

from __future__ import annotations

from crewboard.errors import ValidationFailed

MAX_PAGE = 200


def check_page(limit: int, offset: int) -> tuple[int, int]:
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationFailed.field("limit", f"must be between 1 and {MAX_PAGE}; got {limit}.")
    if offset < 0:
        raise ValidationFailed.field("offset", f"must be 0 or more; got {offset}.")
    return limit, offset


def next_offset(offset: int, shown: int, total: int) -> int | None:
    following = offset + shown
    return following if following < total else None
