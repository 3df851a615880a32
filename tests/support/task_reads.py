"""The board's task reads as the doors word them: the typed service results of
`services/board/queries.py` through `contract/board/present.py`, for tests that call the
services directly and look at the answer (get_task, list_tasks, get_week, task_activity)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crewboard.contract.board import present
from crewboard.contract.board.present_week import week_view
from crewboard.domain.board.reads import AgentBrief
from crewboard.domain.identity.records import Actor
from crewboard.services.board import queries, week
from crewboard.services.board import task_activity as activity
from crewboard.services.text_windows import ANSWER_BUDGET
from crewboard.storage.database import Database


def get_task(
    db: Database, actor: Actor, *, budget: int | None = ANSWER_BUDGET, **options: Any
) -> Any:
    """get_task's answer within `budget` (None: whole), or its agent brief's text."""
    room = None if budget is None else present.pack_room_within(budget)
    found = queries.get_task(db, actor, pack_room=room, **options)
    if isinstance(found, AgentBrief):
        return present.get_task_view(found, budget)["text"]
    return present.get_task_view(found, budget)


@dataclass(frozen=True)
class Listed:
    """A page of tasks with its rows worded; `answer` words it showing some leading rows."""

    page: queries.TaskPage
    rows: list[dict[str, Any]]

    @property
    def total(self) -> int:
        return self.page.total

    def answer(self, shown: list[dict[str, Any]]) -> dict[str, Any]:
        return present.task_page_view(self.page, shown)


def list_tasks(db: Database, actor: Actor, **options: Any) -> Listed:
    page = queries.list_tasks(db, actor, **options)
    return Listed(page, present.task_rows(page))


def list_assignee_tasks(db: Database, actor: Actor, **options: Any) -> Listed:
    page = queries.list_assignee_tasks(db, actor, **options)
    return Listed(page, present.task_rows(page))


def get_week(db: Database, actor: Actor, **options: Any) -> dict[str, Any]:
    return week_view(week.get_week(db, actor, **options))


def task_activity(db: Database, actor: Actor, task: str, **options: Any) -> dict[str, Any]:
    return present.task_activity_view(activity.task_activity(db, actor, task, **options))
