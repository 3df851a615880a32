"""The short rows task lists load instead of whole tasks: a compact row's line, a board
projection row's line, and some named columns; with the columns each selects."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, NamedTuple

from crewboard.domain.board.tasks import TaskStatus
from crewboard.storage.board import tables as t


class TaskLine(NamedTuple):
    """What a compact list row shows of a task (services/board/views.py compact_row); a named
    tuple, since a page makes two hundred of them (a frozen dataclass took 2 µs each, this
    0.4)."""

    id: str
    project_id: str
    number: int
    title: str
    status: str
    priority: str
    assignee_id: str | None
    due_date: date | None
    revision: int
    coverage: str


LINE_COLUMNS = tuple(getattr(t.tasks.c, name) for name in TaskLine._fields)


class BoardLine(NamedTuple):
    """What the board projection shows of a task (one short array a row, 500 to a page):
    no text, no revision, the tags (a small JSON list) and the assignee's id, which the
    service turns into a name."""

    id: str
    project_id: str
    number: int
    title: str
    status: str
    priority: str
    assignee_id: str | None
    due_date: date | None
    tags: list[str]
    updated_at: datetime


class TaskColumns(NamedTuple):
    """Some of a task's columns (`values`, by column name) for a row of named fields."""

    id: str
    project_id: str
    number: int
    values: dict[str, Any]


BOARD_COLUMNS = tuple(getattr(t.tasks.c, name) for name in BoardLine._fields)
# A task still in the work: not approved or done (what an open blocker is, too).
CLOSED = (TaskStatus.APPROVED.value, TaskStatus.DONE.value)
