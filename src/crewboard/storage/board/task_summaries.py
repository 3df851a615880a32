"""SQL for the board summary (services/board/summary.py): open tasks per assignee and
status, the overdue count, the longest untouched and the held-up tasks, each counted or
bounded in the database. `TaskRepository` takes these methods from `TaskSummaries`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from sqlalchemy import Connection, case, exists, func, or_, select

from crewboard.domain.board.tasks import TaskStatus
from crewboard.storage.board import tables as t
from crewboard.storage.board.task_rows import BOARD_COLUMNS, CLOSED, BoardLine


class TaskSummaries:
    """The summary half of TaskRepository, which gives it the connection."""

    conn: Connection

    def open_by_assignee(self, project_id: str) -> list[tuple[str | None, str, int]]:
        """(assignee id or None, status, count) of the project's open tasks (not approved or
        done), one row per pair that has any."""
        c = t.tasks.c
        rows = self.conn.execute(
            select(c.assignee_id, c.status, func.count())
            .where(c.project_id == project_id, c.status.not_in(CLOSED))
            .group_by(c.assignee_id, c.status)
        )
        return [(row[0], row[1], int(row[2])) for row in rows]

    def count_overdue(self, project_id: str, today: date) -> int:
        """Open tasks whose due date has passed."""
        c = t.tasks.c
        query = select(func.count()).where(
            c.project_id == project_id, c.status.not_in(CLOSED), c.due_date < today
        )
        return int(self.conn.execute(query).scalar_one())

    def least_recently_updated(self, project_id: str, limit: int) -> list[BoardLine]:
        """The open tasks nobody has changed for longest, the oldest change first."""
        c = t.tasks.c
        query = (
            select(*BOARD_COLUMNS)
            .where(c.project_id == project_id, c.status.not_in(CLOSED))
            .order_by(c.updated_at, c.number)
            .limit(limit)
        )
        return [BoardLine._make(row) for row in self.conn.execute(query)]

    def blocked_lines(self, project_id: str, limit: int) -> tuple[list[BoardLine], int]:
        """Open tasks that are held up, by number, and how many there are in all: those in
        the blocked column and those with a blocker still open."""
        c, links = t.tasks.c, t.task_links.c
        blocker = t.tasks.alias("blocker")
        waiting = exists().where(
            links.type == "blocks",
            or_(links.low_id == c.id, links.high_id == c.id),
            links.blocker_id != c.id,
            blocker.c.id == links.blocker_id,
            blocker.c.status.not_in(CLOSED),
        )
        held = [
            c.project_id == project_id,
            c.status.not_in(CLOSED),
            or_(c.status == TaskStatus.BLOCKED.value, waiting),
        ]
        total = int(self.conn.execute(select(func.count()).where(*held)).scalar_one())
        query = select(*BOARD_COLUMNS).where(*held).order_by(c.number).limit(limit)
        return [BoardLine._make(row) for row in self.conn.execute(query)], total

    def open_blockers_of(self, task_ids: Sequence[str]) -> dict[str, list[int]]:
        """The numbers of each task's blockers that are still open, by task id."""
        if not task_ids:
            return {}
        links = t.task_links.c
        blocker = t.tasks.alias("blocker")
        blocked = case((links.blocker_id == links.low_id, links.high_id), else_=links.low_id)
        rows = self.conn.execute(
            select(blocked, blocker.c.number)
            .select_from(t.task_links.join(blocker, blocker.c.id == links.blocker_id))
            .where(
                links.type == "blocks",
                or_(links.low_id.in_(list(task_ids)), links.high_id.in_(list(task_ids))),
                blocker.c.status.not_in(CLOSED),
            )
            .order_by(blocker.c.number)
        )
        found: dict[str, list[int]] = {}
        for task_id, number in rows:
            if task_id in task_ids:
                found.setdefault(task_id, []).append(int(number))
        return found
