"""Reading the board: one task (with lifecycle, checklist, relationships, readiness) and lists."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, NamedTuple

from crewboard.domain.board.claims import HeldClaim
from crewboard.domain.board.reads import AgentBrief, TaskRead, TaskShown, TaskSource, TaskText
from crewboard.domain.board.tasks import (
    Relation,
    Task,
    TaskStatus,
    parse_task_key,
    search_words,
)
from crewboard.domain.identity.access import parse_enum_list
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project, TeamRole
from crewboard.errors import ValidationFailed
from crewboard.services.board.context import (
    PACK_BUDGET,
    context_for_task,
    named_records,
    needs_receipt,
)
from crewboard.services.board.fitting import check_text_request
from crewboard.services.board.note_reads import question_counts, task_notes_section
from crewboard.services.board.task_lookup import access_task, render_task, task_ids_of
from crewboard.services.board.task_sources import source_file_ids, sources_of
from crewboard.services.board.views import (
    AGENT_BRIEF_LIMIT,
    BOARD_COLUMNS,
    CLAIM_FIELD,
    CLAIM_LINE_ROOM,
    COMPACT_FIELDS,
    DEFAULT_LIST_FIELDS,
    FIELD_COLUMNS,
    FINISHED,
    LIST_FIELDS,
    LIST_TEXT_FIELDS,
    SUMMARY_FIELDS,
    agent_brief,
    checklist,
    readiness,
)
from crewboard.services.cursors import seal, unseal
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, open_projects
from crewboard.services.paging import check_page
from crewboard.services.seats import ai_seat_of
from crewboard.storage.board.claims import ClaimRepository
from crewboard.storage.board.tasks import BoardLine as BoardLine  # noqa: PLC0414 - for present
from crewboard.storage.board.tasks import TaskColumns as TaskColumns  # noqa: PLC0414 - for present
from crewboard.storage.board.tasks import TaskFilter
from crewboard.storage.board.tasks import TaskLine as TaskLine  # noqa: PLC0414 - a compact row, for present
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_LIST = 200
MAX_Q = 200


def get_task(
    db: Database,
    actor: Actor,
    *,
    task: str | None = None,
    number: int | None = None,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    include_context_pack: bool = True,
    format: str | None = None,  # the wire name of the field
    text_field: str | None = None,
    text_offset: int | None = None,
    text_limit: int | None = None,
    pack_room: Callable[[TaskRead], int] | None = None,
) -> TaskRead | TaskText | AgentBrief:
    """A task with its lifecycle summary, checklist, relationships, readiness and notes, and
    its context pack built within `pack_room(read)` bytes (PACK_BUDGET when None).

    `format="agent_brief"` reads the plain text for a subagent (at most 3000 characters)
    instead; `text_field` (brief or description) reads that text from `text_offset`, at most
    `text_limit` characters (contract/board/present.py cuts the window to fit).

    Raises:
        ValidationFailed: neither `task` nor `number`, or `number` without a project when the
            actor has several; bad window arguments. NotFound.
    """
    offset, limit = check_text_request(text_field, text_offset, text_limit, format=format)
    if format is not None and format != "agent_brief":
        raise ValidationFailed.field("format", f"{format!r} is not a format.", ["agent_brief"])
    if task is None and number is None:
        raise ValidationFailed.field(
            "taskId", "pass taskId (or a key such as CRW-12), or number with projectId."
        )

    def find(uow: UnitOfWork) -> tuple[Task, Project]:
        ref = task if task is not None else str(number)
        where = project or _only_project(uow, actor, number)
        return access_task(uow, actor, ref, project=where, workspace_id=workspace_id)

    if text_field is not None:

        def text(uow: UnitOfWork) -> TaskText:
            found, project_ = find(uow)
            held = held_claim(uow, found.id)
            return TaskText(found, project_, text_field, offset, limit, claim=held)

        return db.read(text)
    if format == "agent_brief":
        return db.read(lambda uow: _agent_brief(uow, *find(uow)))

    def full(uow: UnitOfWork) -> TaskRead:
        found, project_ = find(uow)
        read = _whole_task(uow, found, project_)
        if not include_context_pack:
            return read
        room = PACK_BUDGET if pack_room is None else pack_room(read)
        parent = uow.tasks.get(found.parent_task_id) if found.parent_task_id else None
        blockers = list(uow.tasks.get_many(_blocker_ids(read.shown)).values())
        pack = context_for_task(
            uow, actor, project_, found, parent=parent, blockers=blockers, budget=room
        )
        return replace(read, pack=pack)

    # A full read by a token that can hand in writes its context receipt.
    if include_context_pack and needs_receipt(actor):
        return db.write(full)
    return db.read(full)


def _agent_brief(uow: UnitOfWork, found: Task, project: Project) -> AgentBrief:
    """get_task's plain text for a subagent (services/board/views.py agent_brief)."""
    shown = render_task(uow, found, project)
    blockers = list(uow.tasks.get_many(_blocker_ids(shown)).values())
    parent = uow.tasks.get(found.parent_task_id) if found.parent_task_id else None
    named = [(r.title, r.summary or r.content) for r in named_records(uow, project, found)]
    held = held_claim(uow, found.id)
    return AgentBrief(agent_brief(
        project, found, parent, blockers, uow.state.get(project.id).content, named=named,
        role=_assignee_role(uow, project, found), questions=question_counts(uow, found),
        limit=AGENT_BRIEF_LIMIT - (CLAIM_LINE_ROOM if held else 0),
    ), claim=held)  # fmt: skip


def held_claim(uow: UnitOfWork, task_id: str) -> HeldClaim | None:
    """The task's live claim with its holder's names, None when no one holds it."""
    return ClaimRepository(uow.conn).held([task_id], uow.now).get(task_id)


def _blocker_ids(shown: TaskShown) -> list[str]:
    return [link.other_id for link in shown.links if link.relation is Relation.BLOCKED_BY]


def _whole_task(uow: UnitOfWork, found: Task, project: Project) -> TaskRead:
    """get_task's read without the context pack: the task, its lifecycle, checklist,
    subtasks, readiness and notes."""
    shown = render_task(uow, found, project)
    source = sources_of(uow, [found.id]).get(found.id)  # a task from a tasks.md
    blockers = list(uow.tasks.get_many(_blocker_ids(shown)).values())
    subtasks, subtasks_total = uow.tasks.search(
        TaskFilter(project_ids=[project.id], parent_task_id=found.id), limit=MAX_LIST
    )
    items = checklist(found)
    events, latest = uow.tasks.lifecycle_summary(found.id)
    return TaskRead(
        shown=shown,
        source=source,
        event_count=events,
        latest_event_at=latest,
        role=_assignee_role(uow, project, found),
        checklist=items,
        subtasks=tuple(subtasks),
        subtasks_total=subtasks_total,
        readiness=readiness(
            found, blockers, sum(1 for s in subtasks if s.status not in FINISHED), items
        ),
        notes=task_notes_section(uow, found),
        claim=held_claim(uow, found.id),
    )


def _assignee_role(uow: UnitOfWork, project: Project, task: Task) -> TeamRole | None:
    """The team role the task is assigned to (with the model, effort and rank it asks for)."""
    if task.assignee_id is None or not task.assignee_id.startswith("rol_"):
        return None
    return uow.team.get(project.id, task.assignee_id)


def _only_project(uow: UnitOfWork, actor: Actor, number: int | None) -> str | None:
    """A bare task number needs a project; with exactly one open project, that one."""
    if number is None:
        return None
    page = uow.projects.list_for_user(
        actor.user_id, only_project_id=actor.project_cap, limit=2, offset=0
    )
    if page.total != 1:
        raise ValidationFailed.field(
            "projectId", "a task number needs projectId when you can open several projects."
        )
    return page.rows[0][0].id


@dataclass(frozen=True)
class TaskPage:
    """One page of a task list: compact lines (the compact projection) or tasks shown whole,
    to be cut to `columns`. A door may show a leading part of `rows` (its size budget);
    `cursor_after` then continues after the last row shown."""

    rows: Sequence[TaskShown] | Sequence[TaskLine] | Sequence[BoardLine] | Sequence[TaskColumns]
    projects: Mapping[str, Project]  # each row's project, by id
    sources: Mapping[str, TaskSource]  # where rows of tasks from a tasks.md stand, by task id
    columns: tuple[str, ...]
    total: int
    offset: int  # where the page starts in the whole listing
    more_after: bool  # tasks past the last row match as well
    caller: str
    binding: dict[str, Any]  # the normalised filters a cursor is sealed to
    claims: Mapping[str, HeldClaim] = field(default_factory=dict)  # live ones, by task id
    names: Mapping[str, str] = field(default_factory=dict)  # assignees' names (board rows)
    exact: bool = False  # `fields` named the columns: the rows carry those and the key only

    def has_more(self, shown: int) -> bool:
        """Whether tasks follow the first `shown` rows."""
        return self.more_after or shown < len(self.rows)

    def cursor_after(self, shown: int) -> str | None:
        """The cursor that continues after the first `shown` rows (None: nothing follows)."""
        if not shown or not self.has_more(shown):
            return None
        row = self.rows[shown - 1]
        number = row.task.number if isinstance(row, TaskShown) else row.number
        project_id = row.task.project_id if isinstance(row, TaskShown) else row.project_id
        position = (number, project_id, self.offset + shown)
        return seal(_CURSOR_KIND, position, caller=self.caller, binding=self.binding)


PROJECTIONS = ("compact", "preview", "summary", "board")
MAX_BOARD_LIST = 500  # rows a page of the board projection (others: MAX_LIST)
_CURSOR_KIND = "tasks.1"


def list_tasks(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    statuses: list[str] | None = None,
    numbers: list[int] | None = None,
    q: str | None = None,
    parent_task_id: str | None = None,
    tag: str | None = None,
    label: str | None = None,
    assignee: str | None = None,
    cycle: str | None = None,
    updated_since: datetime | None = None,
    file: str | None = None,
    fields: list[str] | None = None,
    projection: str = "preview",
    include_details: bool = False,
    order: str = "asc",
    limit: int = 50,
    offset: int = 0,
    cursor: str | None = None,
) -> TaskPage:
    """Tasks matching every filter, by number (then project), one page of rows.

    `projection` picks the default columns (compact: key, title, status, priority, revision,
    and assignee and due date when set; preview: with a 500-character description; summary:
    no long text; board: BOARD_COLUMNS, a short array a row, up to 500 rows a page);
    `fields`, when given, replaces them, and the rows then carry the named columns and the
    key only; `include_details` adds the brief and the description (cut to 500 characters
    each, like preview's) to any but the board's. `file` (a
    tasks.md's id or path) keeps the tasks on its lines. `cursor` continues a listing
    after the last row an earlier page showed, with the same filters and caller.

    Raises:
        ValidationFailed, LimitExceeded: a bad filter, named with its accepted values; a cursor
            from other filters or another caller, or sent with a non-zero offset. NotFound.
    """
    chosen = _columns(projection, fields)
    if include_details and chosen is BOARD_COLUMNS:
        raise ValidationFailed.field(
            "includeDetails",
            "the board projection carries no text; leave it out, or use projection preview.",
        )
    if include_details:
        chosen = (*dict.fromkeys((*chosen, *LIST_TEXT_FIELDS)),)
    filters = _filters(
        statuses=statuses,
        numbers=numbers,
        q=q,
        order=order,
        limit=limit,
        offset=offset,
        board=chosen is BOARD_COLUMNS,
    )
    binding = {
        "project": project,
        "workspace": "*" if workspace_id is ANY_WORKSPACE else workspace_id,
        "statuses": sorted(set(filters["statuses"])),
        "numbers": sorted(set(numbers or ())),
        "words": sorted(filters["words"]),
        "parent": parent_task_id,
        "tag": tag and tag.lower(),
        "label": label and label.lower(),
        "assignee": assignee,
        "cycle": cycle,
        "updatedSince": updated_since and updated_since.astimezone(UTC).isoformat(),
        "order": order,
    }
    if file is not None:  # only when given, so the cursors of earlier pages still read
        binding["file"] = file
    after, start = _resume(actor, cursor, offset, binding)

    def work(uow: UnitOfWork) -> TaskPage:
        projects = open_projects(uow, actor, project, workspace_id)
        if not projects:
            return TaskPage((), {}, {}, chosen, 0, start, False, actor.principal, binding)
        chosen_assignee = assignee_filter(uow, actor, assignee)
        search_filter = TaskFilter(
            project_ids=list(projects),
            statuses=filters["statuses"],
            numbers=numbers or (),
            words=filters["words"],
            parent_task_id=_parent_id(uow, projects, parent_task_id),
            tag=tag,
            label=label,
            assignee_id=chosen_assignee.assignee_id,
            unassigned=chosen_assignee.unassigned,
            assigned_or_owned_by=chosen_assignee.assigned_or_owned_by,
            cycle=cycle,
            updated_since=updated_since,
            source_file_ids=() if file is None else source_file_ids(uow, list(projects), file),
        )
        paging: dict[str, Any] = {
            "descending": order == "desc",
            "limit": limit + 1,  # one more tells whether another page follows
            "offset": offset,
            "after": after,
        }
        rows: Sequence[TaskShown] | Sequence[TaskLine] | Sequence[BoardLine] | Sequence[TaskColumns]
        names: Mapping[str, str] = {}
        if chosen is BOARD_COLUMNS:  # no text, no revision: key, title, who, tags, when
            board, total = uow.tasks.search_board_lines(search_filter, **paging)
            rows, more = board[:limit], len(board) > limit
            ids = [line.id for line in rows]
            names = assignee_names(uow, list(projects), {line.assignee_id for line in rows})
        elif fields and all(name == "key" or name in FIELD_COLUMNS for name in chosen):
            # Named columns of the task table alone: read those, not whole tasks.
            wanted = [FIELD_COLUMNS[name] for name in chosen if name != "key"]
            picked, total = uow.tasks.search_columns(search_filter, wanted, **paging)
            rows, more = picked[:limit], len(picked) > limit
            ids = [row.id for row in rows]
        elif chosen is COMPACT_FIELDS:  # no text, JSON columns, links or related numbers
            lines, total = uow.tasks.search_lines(search_filter, **paging)
            rows, more = lines[:limit], len(lines) > limit
            ids = [line.id for line in rows]
        else:
            found, total = uow.tasks.search(search_filter, **paging)
            more = len(found) > limit
            rows = _shown(uow, projects, found[:limit])
            ids = [t.id for t in found[:limit]]
        # Where tasks stand in a tasks.md: rows of named fields and board rows do not show it.
        shows_sources = not fields and chosen is not BOARD_COLUMNS
        sources = sources_of(uow, ids) if shows_sources else {}
        held = ClaimRepository(uow.conn).held(ids, uow.now) if CLAIM_FIELD in chosen else {}
        return TaskPage(
            rows,
            projects,
            sources,
            chosen,
            total,
            start,
            more,
            actor.principal,
            binding,
            held,
            names,
            exact=bool(fields),
        )

    return db.read(work)


def _shown(
    uow: UnitOfWork, projects: Mapping[str, Project], tasks: Sequence[Task]
) -> list[TaskShown]:
    """The tasks with their relationships and the numbers those and their parents name."""
    links = uow.tasks.links_of(t.id for t in tasks)
    related = {o.other_id for ls in links.values() for o in ls} | {
        t.parent_task_id for t in tasks if t.parent_task_id
    }
    numbers = uow.tasks.numbers_of(related)
    return [TaskShown(t, projects[t.project_id], tuple(links[t.id]), numbers) for t in tasks]


def list_assignee_tasks(
    db: Database,
    actor: Actor,
    *,
    assignee: str,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    statuses: list[str] | None = None,
    fields: list[str] | None = None,
    projection: str = "preview",
    order: str = "asc",
    limit: int = 50,
    offset: int = 0,
    cursor: str | None = None,
) -> TaskPage:
    """The tasks one role or person is assigned (`me`: the caller's own, see
    `assignee_filter`), as `list_tasks` lists them.

    Raises:
        ValidationFailed: `assignee` is not a role id, a user id or `me`; as `list_tasks`.
    """
    if assignee != "me" and not assignee.startswith(("rol_", "usr_")):
        raise ValidationFailed.field(
            "assigneeId", "name a role id (rol_…) from list_team, a user id (usr_…) or 'me'."
        )
    return list_tasks(
        db,
        actor,
        project=project,
        workspace_id=workspace_id,
        statuses=statuses,
        assignee=assignee,
        fields=fields,
        projection=projection,
        order=order,
        limit=limit,
        offset=offset,
        cursor=cursor,
    )


def _resume(
    actor: Actor, cursor: str | None, offset: int, binding: dict[str, Any]
) -> tuple[tuple[int, str] | None, int]:
    """Where a page starts: the keyset position a cursor names (and its running offset), or
    the offset.

    Raises:
        ValidationFailed: naming `offset` when both come, or `cursor` when it is not one of
            ours for these filters and this caller.
    """
    if cursor is None:
        return None, offset
    if offset:
        raise ValidationFailed.field(
            "offset", "pass a cursor or an offset, not both; leave offset out with a cursor."
        )
    position = unseal(
        _CURSOR_KIND, cursor, caller=actor.principal, binding=binding, tool="list_tasks"
    )
    match position:
        case [int(number), str(project_id), int(start)] if start >= 0:
            return (number, project_id), start
    raise ValidationFailed.field("cursor", "is not a cursor from list_tasks; start again.")


def _columns(projection: str, fields: list[str] | None) -> tuple[str, ...]:
    """The columns of each row: `fields` when given, else the projection's own."""
    if projection not in PROJECTIONS:
        raise ValidationFailed.field(
            "projection", f"{projection!r} is not a projection.", list(PROJECTIONS)
        )
    if not fields:
        return {
            "compact": COMPACT_FIELDS,
            "preview": DEFAULT_LIST_FIELDS,
            "summary": SUMMARY_FIELDS,
            "board": BOARD_COLUMNS,
        }[projection]
    chosen = _fields(fields)
    text = [name for name in chosen if name in LIST_TEXT_FIELDS]
    if projection == "summary" and text:
        raise ValidationFailed.field(
            "fields",
            f"{text[0]!r} is long text, which the summary projection leaves out; ask for it "
            "with projection preview.",
            [name for name in LIST_FIELDS if name not in LIST_TEXT_FIELDS],
        )
    return chosen


def _parent_id(uow: UnitOfWork, projects: dict[str, Project], ref: str | None) -> str | None:
    """The parent filter as a task id: a key (CRW-12) names that task of an open project."""
    if ref is None or (key := parse_task_key(ref)) is None:
        return ref
    for project in projects.values():
        if project.key == key[0]:
            return task_ids_of(uow, project, (ref,))[0]
    return ref


def _fields(names: list[str]) -> tuple[str, ...]:
    for name in names:
        if name not in LIST_FIELDS:
            raise ValidationFailed.field("fields", f"{name!r} is not a column.", list(LIST_FIELDS))
    return tuple(dict.fromkeys(names))


def _filters(
    *,
    statuses: list[str] | None,
    numbers: list[int] | None,
    q: str | None,
    order: str,
    limit: int,
    offset: int,
    board: bool = False,
) -> dict[str, Any]:
    if not board and limit > MAX_LIST:
        raise ValidationFailed.field(
            "limit",
            f"at most {MAX_LIST} rows a page; projection board takes up to {MAX_BOARD_LIST} "
            f"short rows; got {limit}.",
        )
    check_page(limit, offset, MAX_BOARD_LIST)
    if order not in ("asc", "desc"):
        raise ValidationFailed.field("order", f"{order!r} is not an order.", ["asc", "desc"])
    if numbers is not None and len(numbers) > MAX_LIST:
        raise ValidationFailed.field("number", f"at most {MAX_LIST} numbers.")
    if q is not None and len(q) > MAX_Q:
        raise ValidationFailed.field("q", f"at most {MAX_Q} characters.")
    return {
        "statuses": [s.value for s in parse_enum_list(statuses or [], TaskStatus, "status")],
        "words": search_words(q or ""),
    }


class AssigneeFilter(NamedTuple):
    """The TaskFilter fields an `assignee` filter sets."""

    assignee_id: str | None = None
    unassigned: bool = False
    assigned_or_owned_by: str | None = None


def assignee_filter(uow: UnitOfWork, actor: Actor, assignee: str | None) -> AssigneeFilter:
    """`none` is unassigned; any other value but `me` is the assignee's id (an AI seat by its
    role id, from list_team). `me` is the caller's own tasks: for a person (directly or by a
    personal token), those assigned to them or whose human owner they are; for an agent
    token, those assigned to the AI seat it acts as, or, without a seat, as for its person."""
    if assignee is None:
        return AssigneeFilter()
    if assignee == "none":
        return AssigneeFilter(unassigned=True)
    if assignee != "me":
        return AssigneeFilter(assignee_id=assignee)
    seat = ai_seat_of(uow, actor)
    if seat is not None:
        return AssigneeFilter(assignee_id=seat.id)
    return AssigneeFilter(assigned_or_owned_by=actor.user_id)


def assignee_names(
    uow: UnitOfWork, project_ids: Sequence[str], assignee_ids: set[str | None]
) -> dict[str, str]:
    """The names of the AI roles and people among `assignee_ids`, by id (an id no longer
    on a team, or of a person since removed, is left out: a row then shows the id)."""
    wanted = {a for a in assignee_ids if a}
    if not wanted:
        return {}
    names = {r.id: r.name for r in uow.team.list_many(project_ids) if r.id in wanted}
    people = [a for a in wanted if a not in names]
    names |= {u.id: u.display_name for u in uow.users.get_many(people).values()}
    return names
