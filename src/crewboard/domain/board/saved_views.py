"""Saved board views: a person's named filters, sort and grouping of one project's board."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from crewboard.errors import LimitExceeded, ValidationFailed

MAX_NAME = 60
MAX_QUERY = 600
MAX_VIEWS = 30  # per person and project


@dataclass(frozen=True)
class SavedView:
    """One saved view: `query` is the board's query string (filters, sort, group)."""

    id: str
    project_id: str
    user_id: str
    name: str
    query: str
    updated_at: datetime


def check_view_name(name: str) -> str:
    """The name, trimmed.

    Raises:
        ValidationFailed: empty or longer than MAX_NAME characters.
    """
    cleaned = " ".join(name.split())
    if not cleaned:
        raise ValidationFailed.field("name", "give the view a name, for example “My open work”.")
    if len(cleaned) > MAX_NAME:
        raise ValidationFailed.field("name", f"at most {MAX_NAME} characters.")
    return cleaned


def check_view_count(count: int) -> None:
    """Raises: LimitExceeded when a person already keeps MAX_VIEWS views of the project."""
    if count >= MAX_VIEWS:
        raise LimitExceeded(
            f"You keep {MAX_VIEWS} saved views of this board already; delete one first.",
            {"field": "name", "limit": MAX_VIEWS},
        )
