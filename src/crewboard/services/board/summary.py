"""How the board looks, in one small read: tasks per column and per assignee, what is overdue,
what nobody has touched for longest, and what is held up (get_board_summary).

Every part is counted or bounded in the database (the counts from the status and assignee
indexes, the two short lists by a LIMIT), so the answer costs about the same for 50 tasks as
for 100,000 and stays a few kilobytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.services.board.queries import BoardLine, assignee_names
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

OLDEST = 5  # open tasks listed as the longest untouched
BLOCKED = 10  # held-up tasks listed (all are counted)
ASSIGNEES = 20  # assignees listed, those with the most open tasks first (all are counted)


@dataclass(frozen=True)
class AssigneeLoad:
    """One assignee's open tasks (None: nobody's), by status."""

    assignee_id: str | None
    by_status: dict[str, int]

    @property
    def open(self) -> int:
        return sum(self.by_status.values())


@dataclass(frozen=True)
class BoardSummary:
    project: Project
    columns: dict[str, int]  # every status, in board order, zeros included
    loads: list[AssigneeLoad]  # most open tasks first; the unassigned among them
    names: dict[str, str]  # the assignees' names, by id
    overdue: int  # open tasks past their due date
    oldest: list[BoardLine]  # open tasks, the longest untouched first
    blocked: list[BoardLine]  # held-up tasks by number (BLOCKED of them)
    blocked_total: int
    blockers: dict[str, list[int]]  # each listed blocked task's open blockers' numbers


def board_summary(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> BoardSummary:
    """The summary of one project's board as the actor may see it.

    Raises:
        NotFound: the project is not open to the actor.
    """

    def work(uow: UnitOfWork) -> BoardSummary:
        found = access_project(uow, actor, project, workspace_id=workspace_id).project
        per: dict[str | None, dict[str, int]] = {}
        for assignee_id, status, count in uow.tasks.open_by_assignee(found.id):
            per.setdefault(assignee_id, {})[status] = count
        loads = sorted(
            (AssigneeLoad(a, counts) for a, counts in per.items()),
            key=lambda load: (-load.open, load.assignee_id or ""),
        )
        oldest = uow.tasks.least_recently_updated(found.id, OLDEST)
        blocked, blocked_total = uow.tasks.blocked_lines(found.id, BLOCKED)
        shown = {load.assignee_id for load in loads[:ASSIGNEES]}
        shown |= {line.assignee_id for line in (*oldest, *blocked)}
        return BoardSummary(
            project=found,
            columns=uow.tasks.count_by_status(found.id),
            loads=loads,
            names=assignee_names(uow, [found.id], shown),
            overdue=uow.tasks.count_overdue(found.id, uow.now.date()),
            oldest=oldest,
            blocked=blocked,
            blocked_total=blocked_total,
            blockers=uow.tasks.open_blockers_of([line.id for line in blocked]),
        )

    return db.read(work)
