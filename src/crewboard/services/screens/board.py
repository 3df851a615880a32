"""What the web app's board and task pages show, each gathered by one call.

Read-only compositions of the board's public reads (get_task, task_activity,
list_task_events, list_team), the board's columns (tiles in board order, one read), and the
hand-ins of one task, which no other service lists. Every read checks access first.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from crewboard.domain.board.reads import TaskRead
from crewboard.domain.board.tasks import TaskStatus, search_words
from crewboard.domain.identity.naming import name_of
from crewboard.domain.identity.records import Actor
from crewboard.domain.review import WAITING, DraftRow
from crewboard.errors import ValidationFailed
from crewboard.services.board.queries import MAX_Q, assignee_filter, get_task
from crewboard.services.board.task_activity import task_activity
from crewboard.services.board.task_lookup import access_task
from crewboard.services.board.task_updates import update_task
from crewboard.services.board.week import list_task_events
from crewboard.services.identity.access import access_project
from crewboard.services.projects.team import list_team, team_view
from crewboard.services.review.decisions import approve, drafts_of
from crewboard.services.screens.task_history import task_history
from crewboard.storage.board.claims import ClaimRepository
from crewboard.storage.board.task_listing import BOARD_SORTS
from crewboard.storage.board.tasks import TaskFilter
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

COLUMNS = tuple(status.value for status in TaskStatus)
COLUMN_PAGE = 50  # tiles of one column opened on its own
BOARD_PAGE = 20  # tiles per column on the whole board (each column's "more" opens the rest)
TIMELINE_EVENTS = 100
HANDINS_SHOWN = 50


@dataclass(frozen=True)
class BoardFilters:
    """The board's filters as a person set them (None: not filtering on that)."""

    assignee: str | None = None
    tag: str | None = None
    q: str | None = None
    sort: str = "board"
    group: str | None = None


def board_columns(
    db: Database,
    actor: Actor,
    *,
    project: str,
    filters: BoardFilters,
    column: str | None = None,
    offset: int = 0,
) -> dict[str, Any]:
    """Every status column (or one, from `offset`) with its first tiles and total, and the team.

    One read: tiles carry only what the board shows and come in board order; an unfiltered
    board takes its column totals from one count by status.

    Raises:
        ValidationFailed: an unknown column, a bad offset or filter. NotFound: the project.
    """
    if column is not None and column not in COLUMNS:
        raise ValidationFailed.field("column", f"{column!r} is not a column.", list(COLUMNS))
    if offset < 0:
        raise ValidationFailed.field("offset", f"must be 0 or more; got {offset}.")
    if filters.q is not None and len(filters.q) > MAX_Q:
        raise ValidationFailed.field("q", f"at most {MAX_Q} characters.")
    if filters.sort not in BOARD_SORTS:
        raise ValidationFailed.field(
            "sort", f"{filters.sort!r} is not an order.", list(BOARD_SORTS)
        )
    if filters.group is not None and filters.group not in GROUPS:
        raise ValidationFailed.field("group", f"{filters.group!r} is not a grouping.", list(GROUPS))
    team = team_view(list_team(db, actor, project=project)[0], actor.user_id)

    def work(uow: UnitOfWork) -> list[dict[str, Any]]:
        found = access_project(uow, actor, project).project
        chosen = assignee_filter(uow, actor, filters.assignee)
        base = TaskFilter(
            project_ids=[found.id],
            words=search_words(filters.q or ""),
            tag=filters.tag or None,
            assignee_id=chosen.assignee_id,
            unassigned=chosen.unassigned,
            assigned_or_owned_by=chosen.assigned_or_owned_by,
        )
        filtered = bool(base.words or base.tag or filters.assignee)
        # One column counts its own rows; the whole board counts every status at once.
        totals = None if filtered or column else uow.tasks.count_by_status(found.id)
        columns = [
            _column(
                uow,
                found.key,
                replace(base, statuses=[status]),
                offset=offset if column else 0,
                size=COLUMN_PAGE if column else BOARD_PAGE,
                total=None if totals is None else totals.get(status, 0),
                sort=filters.sort,
            )
            for status in ([column] if column else COLUMNS)
        ]
        return _with_signals(uow, columns)

    names = names_of(team)
    columns = db.read(work)
    if filters.group:
        for col in columns:
            col["groups"] = _groups(col["tasks"], filters.group, names)
    return {"team": team, "columns": columns, "names": names}


def _column(
    uow: UnitOfWork,
    key: str,
    f: TaskFilter,
    *,
    offset: int,
    size: int,
    total: int | None,
    sort: str,
) -> dict[str, Any]:
    rows, count = uow.tasks.board_tiles(f, limit=size, offset=offset, total=total, sort=sort)
    tiles = [
        {
            "id": row["id"],
            "number": row["number"],
            "key": f"{key}-{row['number']}",
            "title": row["title"],
            "status": row["status"],
            "priority": row["priority"],
            "assigneeId": row["assignee_id"],
            "assigneeType": row["assignee_type"],
            "tags": row["tags"],
            "dueDate": row["due_date"].isoformat() if row["due_date"] else None,
            "revision": row["revision"],
            "boardOrder": row["board_order"],
        }
        for row in rows
    ]
    following = offset + len(tiles)
    return {
        "status": f.statuses[0],
        "tasks": tiles,
        "total": count,
        "offset": offset,
        "nextOffset": following if following < count else None,
        "previousOffset": max(0, offset - size) if offset > 0 else None,
    }


def _with_signals(uow: UnitOfWork, columns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each tile's signals, three reads for the whole board whatever its size: `claim` (who
    holds it, until when), `blockers` (unfinished tasks blocking it), `handInWaiting`, and
    `overdue` (a due date before today, UTC, on an unsettled task)."""
    tiles = [tile for col in columns for tile in col["tasks"]]
    ids = [tile["id"] for tile in tiles]
    held = ClaimRepository(uow.conn).held(ids, uow.now)
    blockers = uow.tasks.open_blockers(ids)
    waiting = drafts_of(uow).waiting_of(ids)
    today = uow.now.date().isoformat()
    for tile in tiles:
        if (claim := held.get(tile["id"])) is not None:
            tile["claim"] = {"by": claim.name, "until": claim.claim.expires_at.isoformat()}
        tile["blockers"] = blockers.get(tile["id"], 0)
        tile["handInWaiting"] = tile["id"] in waiting
        tile["overdue"] = bool(
            tile["dueDate"] and tile["dueDate"] < today and tile["status"] not in SETTLED
        )
    return columns


GROUPS = ("assignee", "priority", "tag")
_PRIORITY_GROUPS = (
    ("high", "High priority"),
    ("medium", "Medium priority"),
    ("low", "Low priority"),
)


def _groups(tiles: list[dict[str, Any]], by: str, names: dict[str, str]) -> list[dict[str, Any]]:
    """A column's tiles under sub-headers (each keeps the column's order): by assignee (names
    A to Z, then unassigned), priority (high first) or first tag (A to Z, then untagged)."""
    if by == "priority":
        order = [(value, label) for value, label in _PRIORITY_GROUPS]
        keyed = [(tile["priority"], tile) for tile in tiles]
    elif by == "assignee":
        keyed = [(tile["assigneeId"] or "", tile) for tile in tiles]
        seen = {key for key, _ in keyed if key}
        order = sorted(((k, names.get(k, k)) for k in seen), key=lambda kv: kv[1].lower())
        order.append(("", "Unassigned"))
    else:
        keyed = [((tile["tags"][0] if tile["tags"] else ""), tile) for tile in tiles]
        seen = {key for key, _ in keyed if key}
        order = [(k, f"#{k}") for k in sorted(seen, key=str.lower)]
        order.append(("", "No tag"))
    groups = [
        {"key": key, "label": label, "tasks": [tile for k, tile in keyed if k == key]}
        for key, label in order
    ]
    return [group for group in groups if group["tasks"]]


def names_of(team: dict[str, Any]) -> dict[str, str]:
    """Display names of a project's roles and people, by id."""
    names = {role["id"]: role["name"] for role in team["roles"]}
    names.update({person["userId"]: person["displayName"] for person in team["people"]})
    return names


def task_page(db: Database, actor: Actor, *, project: str, ref: str) -> dict[str, Any]:
    """One task as its page shows it: the task (`read`, get_task's typed read, which the page
    words), what was said and linked, its history, hand-ins.

    Raises:
        NotFound: the task is not open to the actor, or it is in another project.
    """
    found = get_task(db, actor, task=ref, project=project, include_context_pack=False)
    assert isinstance(found, TaskRead)  # noqa: S101 - no format or text window asked for
    task_id = found.shown.task.id
    team = team_view(list_team(db, actor, project=project)[0], actor.user_id)
    events = list_task_events(db, actor, task=task_id, limit=TIMELINE_EVENTS)
    return {
        "read": found,
        "activity": task_activity(db, actor, task_id),
        "timeline": events.events,
        "timelineMore": events.has_more,
        "history": task_history(db, actor, task_id, events.events),
        "handins": task_handins(db, actor, task_id),
        "team": team,
        "names": names_of(team),
    }


def task_handins(db: Database, actor: Actor, task: str) -> list[DraftRow]:
    """The hand-ins (drafts) of a task and of its chain of revisions, newest first.

    Raises:
        NotFound: the task is not open to the actor.
    """

    def work(uow: UnitOfWork) -> list[DraftRow]:
        found, project = access_task(uow, actor, task)
        repo = drafts_of(uow)
        chain = repo.chain(repo.root_for(found.id))
        numbers = uow.tasks.numbers_of({d.task_id for d in chain if d.task_id})
        rows = [
            DraftRow(
                d,
                project,
                f"{project.key}-{numbers[d.task_id]}" if d.task_id in numbers else None,
            )
            for d in reversed(chain)
        ]
        return rows[:HANDINS_SHOWN]

    result: list[DraftRow] = db.read(work)
    return result


# A move to one of these settles the task; a hand-in still waiting would then disagree with it.
SETTLED = frozenset({TaskStatus.APPROVED, TaskStatus.DONE})


def waiting_hand_in(db: Database, actor: Actor, *, project: str, task: str) -> str | None:
    """The id of a hand-in of this task still waiting for a person, if any: a board move to
    Approved or Done is refused while one waits, so the board and the inbox agree. (A hand-in
    arriving after this read moves the task to review, so a move from the revision read before
    it is refused as a conflict.)

    Raises:
        NotFound: the task is not open to the actor.
    """

    def work(uow: UnitOfWork) -> str | None:
        found, _project = access_task(uow, actor, task, project=project)
        repo = drafts_of(uow)
        for draft in reversed(repo.chain(repo.root_for(found.id))):
            if draft.task_id == found.id and draft.status in WAITING:
                return draft.id
        return None

    result: str | None = db.read(work)
    return result


def tile_now(db: Database, actor: Actor, *, project: str, ref: str) -> dict[str, Any]:
    """A task as a board tile shows it, read now (a move's conflict view compares it with what
    the tile showed).

    Raises:
        NotFound: the task is not open to the actor.
    """

    def work(uow: UnitOfWork) -> dict[str, Any]:
        task, found = access_task(uow, actor, ref, project=project)
        by = task.updated_by or {}
        return {
            "key": f"{found.key}-{task.number}",
            "title": task.title,
            "status": task.status.value,
            "priority": task.priority.value,
            "assigneeId": task.assignee_id,
            "revision": task.revision,
            "updatedAt": task.updated_at.isoformat(),
            "updatedBy": name_of(by),
        }

    result: dict[str, Any] = db.read(work)
    return result


def approve_and_settle(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: str,
    task: str,
    status: str,
    hand_in: str,
) -> dict[str, Any]:
    """A board move to Approved or Done that the person chose to make by approving the hand-in
    waiting on the task: approve it (that settles the task as Approved), then, for Done, move
    the task on from the revision the approval left. Answers the task as a tile shows it.

    Raises:
        NotFound: the task or the hand-in. ValidationFailed: the hand-in is not of this task or
        no longer waits. PermissionDenied, RevisionConflict: as approve and update_task.
    """
    if waiting_hand_in(db, actor, project=project, task=task) != hand_in:
        raise ValidationFailed.field(
            "handIn", "that hand-in is not the one waiting on this task; reload the board."
        )
    approve(db, actor, hand_in)
    now = tile_now(db, actor, project=project, ref=task)
    if status == now["status"]:
        return now
    update_task(
        db,
        actor,
        project=project,
        workspace_id=workspace_id,
        idempotency_key=None,
        task_id=task,
        expected_revision=int(now["revision"]),
        patch={"status": status},
    )
    return tile_now(db, actor, project=project, ref=task)
