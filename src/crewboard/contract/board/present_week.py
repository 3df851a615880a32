"""The week in words: get_week's typed read (domain/board/week.py WeekRead) as the answer every
door gives, with times in the reader's zone and tasks by their keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from crewboard.domain.board.tasks import Task
from crewboard.domain.board.week import (
    Piece,
    WeekRead,
    combined_coverage,
    day_hours,
    minutes_by_kind,
    minutes_by_worker,
)
from crewboard.domain.projects import Project
from crewboard.services.board.views import task_key
from crewboard.services.views import iso


def week_view(read: WeekRead) -> dict[str, Any]:
    """Monday to Sunday: tasks due each day, in-progress stretches per day, minutes, undated work."""
    zone, days, pieces = read.zone, read.days, list(read.pieces)
    sheet = _Sheet(zone, read.projects, read.held)
    return {
        "week": {
            "from": days[0].isoformat(),
            "to": days[-1].isoformat(),
            "timeZone": read.time_zone,
            "startsAt": iso(read.start.astimezone(zone)),
            "endsAt": iso(read.end.astimezone(zone)),
        },
        "now": iso(read.now.astimezone(zone)),
        "days": [sheet.day(day, read.due, pieces) for day in days],
        "minutes": minutes_by_kind(pieces),
        "assignees": [
            {"assigneeId": w.id, "assigneeType": str(w.kind), "minutes": m}
            for w, m in minutes_by_worker(pieces)
        ],
        "dueTotal": read.due_total,
        "undated": [sheet.task_row(t) for t in read.undated],
        "undatedTotal": read.undated_total,
        "coverage": combined_coverage(read.held[p.stretch.task_id].coverage for p in pieces),
    }


@dataclass(frozen=True)
class _Sheet:
    """Renders the week's rows: times in the reader's zone, tasks with their keys."""

    zone: ZoneInfo
    projects: Mapping[str, Project]
    held: Mapping[str, Task]  # the tasks the stretches belong to

    def day(self, day: date, due: Sequence[Task], pieces: list[Piece]) -> dict[str, Any]:
        hours = day_hours(day, self.zone)
        todays = sorted(
            (p for p in pieces if p.day == day), key=lambda p: (p.start, p.stretch.task_id)
        )
        return {
            "date": day.isoformat(),
            "hours": int(hours) if hours.is_integer() else hours,
            "due": [self.task_row(t) for t in due if t.due_date == day],
            "inProgress": [self.piece_row(p) for p in todays],
            "minutes": minutes_by_kind(todays),
        }

    def task_row(self, task: Task) -> dict[str, Any]:
        project = self.projects[task.project_id]
        return {
            "id": task.id,
            "key": task_key(project, task),
            "projectId": task.project_id,
            "workspaceId": project.workspace_id,
            "title": task.title,
            "status": str(task.status),
            "assigneeId": task.assignee_id,
            "assigneeType": task.assignee_type and str(task.assignee_type),
            "dueDate": task.due_date and task.due_date.isoformat(),
            "revision": task.revision,
        }

    def piece_row(self, piece: Piece) -> dict[str, Any]:
        stretch, local = piece.stretch, self._local
        task = self.held[stretch.task_id]
        return {
            "taskId": task.id,
            "taskKey": task_key(self.projects[task.project_id], task),
            "title": task.title,
            "assigneeId": stretch.worker and stretch.worker.id,
            "assigneeType": stretch.worker and str(stretch.worker.kind),
            "from": local(piece.start),
            "to": local(piece.end),
            "minutes": piece.minutes,
            "stretch": {
                "startedAt": local(stretch.start),
                "endedAt": None if stretch.ongoing else local(stretch.end),
                "ongoing": stretch.ongoing,
                "minutes": stretch.minutes,
            },
        }

    def _local(self, moment: datetime) -> str:
        return moment.astimezone(self.zone).isoformat()
