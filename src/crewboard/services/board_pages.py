"""What the web app's board and task pages show, each gathered by one call.

Read-only compositions of the board's public reads (list_tasks per column, get_task,
task_activity, list_task_events, list_team), plus the hand-ins of one task, which no other
service lists. Every permission check happens in the reads they call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crewboard.domain.models import Actor
from crewboard.domain.tasks import TaskStatus
from crewboard.errors import ValidationFailed
from crewboard.services.review import draft_view, drafts_of
from crewboard.services.task_notes import task_activity
from crewboard.services.task_queries import get_task, list_tasks
from crewboard.services.tasks import access_task
from crewboard.services.team import list_team
from crewboard.services.week import list_task_events
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

COLUMNS = tuple(status.value for status in TaskStatus)
COLUMN_PAGE = 50
TIMELINE_EVENTS = 100
HANDINS_SHOWN = 50
TILE_FIELDS = [
    "number",
    "key",
    "title",
    "status",
    "priority",
    "assigneeId",
    "tags",
    "dueDate",
    "boardOrder",
    "revision",
]


@dataclass(frozen=True)
class BoardFilters:
    """The board's filters as a person set them (None: not filtering on that)."""

    assignee: str | None = None
    tag: str | None = None
    q: str | None = None


def board_columns(
    db: Database,
    actor: Actor,
    *,
    project: str,
    filters: BoardFilters,
    column: str | None = None,
    offset: int = 0,
) -> dict[str, Any]:
    """Every status column (or one, from `offset`) with its first tasks and total, and the team.

    Raises:
        ValidationFailed: an unknown column, a bad offset or filter. NotFound: the project.
    """
    if column is not None and column not in COLUMNS:
        raise ValidationFailed.field("column", f"{column!r} is not a column.", list(COLUMNS))
    team = list_team(db, actor, project=project)[0]
    columns = [
        _column(db, actor, project, status, filters=filters, offset=offset if column else 0)
        for status in ([column] if column else COLUMNS)
    ]
    return {"team": team, "columns": columns, "names": names_of(team)}


def _column(
    db: Database, actor: Actor, project: str, status: str, *, filters: BoardFilters, offset: int
) -> dict[str, Any]:
    rows, total = list_tasks(
        db,
        actor,
        project=project,
        statuses=[status],
        q=filters.q,
        tag=filters.tag,
        assignee=filters.assignee,
        fields=TILE_FIELDS,
        limit=COLUMN_PAGE,
        offset=offset,
    )
    # A page is chosen by number (list_tasks' order); within it, tiles follow board order.
    rows.sort(key=lambda row: (row["boardOrder"] is None, row["boardOrder"] or 0.0))
    following = offset + len(rows)
    return {
        "status": status,
        "tasks": rows,
        "total": total,
        "offset": offset,
        "nextOffset": following if following < total else None,
        "previousOffset": max(0, offset - COLUMN_PAGE) if offset > 0 else None,
    }


def names_of(team: dict[str, Any]) -> dict[str, str]:
    """Display names of a project's roles and people, by id."""
    names = {role["id"]: role["name"] for role in team["roles"]}
    names.update({person["userId"]: person["displayName"] for person in team["people"]})
    return names


def task_page(db: Database, actor: Actor, *, project: str, ref: str) -> dict[str, Any]:
    """One task as its page shows it: the task, what was said and linked, its history, hand-ins.

    Raises:
        NotFound: the task is not open to the actor, or it is in another project.
    """
    found = get_task(db, actor, task=ref, project=project, include_context_pack=False)
    assert isinstance(found, dict)  # noqa: S101 - only format="agent_brief" answers text
    task_id = str(found["task"]["id"])
    team = list_team(db, actor, project=project)[0]
    events = list_task_events(db, actor, task=task_id, limit=TIMELINE_EVENTS)
    return {
        **found,
        "activity": task_activity(db, actor, task_id),
        "timeline": events.events,
        "timelineMore": events.has_more,
        "handins": task_handins(db, actor, task_id),
        "team": team,
        "names": names_of(team),
    }


def task_handins(db: Database, actor: Actor, task: str) -> list[dict[str, Any]]:
    """The hand-ins (drafts) of a task and of its chain of revisions, newest first.

    Raises:
        NotFound: the task is not open to the actor.
    """

    def work(uow: UnitOfWork) -> list[dict[str, Any]]:
        found, project = access_task(uow, actor, task)
        repo = drafts_of(uow)
        chain = repo.chain(repo.root_for(found.id))
        numbers = uow.tasks.numbers_of({d.task_id for d in chain if d.task_id})
        views = [
            draft_view(
                d,
                project,
                f"{project.key}-{numbers[d.task_id]}" if d.task_id in numbers else None,
            )
            for d in reversed(chain)
        ]
        return views[:HANDINS_SHOWN]

    result: list[dict[str, Any]] = db.read(work)
    return result
