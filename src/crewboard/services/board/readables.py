"""What a caller can read, one row per thing: state pages, project documents, tasks, records.

The MCP door lists these as resources. The walk goes project by project (the caller's open,
unarchived projects, by key) and, inside each, through three parts: the state page and the
documents ever written, then the tasks by number, then the accepted records (most recently
changed first). A `Position` names where a row stands in that walk, so a page can start at
any row; positions are offsets, so a change between two pages may shift a row by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from crewboard.domain.identity.access import Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.services.memory.records import DOCUMENT_TITLES, memory_of
from crewboard.services.paging import check_limit
from crewboard.storage.board.tasks import TaskFilter
from crewboard.storage.database import Database
from crewboard.storage.memory.records import RecordFilter
from crewboard.storage.uow import UnitOfWork

Kind = Literal["state", "document", "task", "record"]
Part = Literal["state", "tasks", "memory"]  # what a caller may be shown, by the tool that reads it
PARTS: tuple[Part, ...] = ("state", "tasks", "memory")
MAX_READABLES = 500
HEAD, TASKS, RECORDS = 0, 1, 2  # the parts of one project, in walk order


@dataclass(frozen=True, order=True)
class Position:
    """Where a row stands: the project's offset among the caller's, its part, the row's offset."""

    project: int = 0
    part: int = HEAD
    offset: int = 0


@dataclass(frozen=True)
class Readable:
    kind: Kind
    project_key: str
    ref: str  # the document's name, the task's key or the record's id; "" for the state page
    title: str
    detail: str  # a task's status and priority, a record's summary, a document's version
    position: Position


def list_readables(
    db: Database,
    actor: Actor,
    *,
    start: Position = Position(),
    limit: int = 100,
    parts: frozenset[Part] = frozenset(PARTS),
) -> tuple[list[Readable], Position | None]:
    """Up to `limit` rows from `start`, and the position of the next row (None at the end).

    `parts` narrows what is walked: `state` the state pages, `tasks` the tasks, `memory` the
    documents and records. A token without the read scope sees nothing.

    Raises:
        ValidationFailed: limit outside 1-500.
    """
    check_limit(limit, MAX_READABLES)
    if Scope.READ not in actor.scopes or not parts:
        return [], None

    def work(uow: UnitOfWork) -> tuple[list[Readable], Position | None]:
        rows: list[Readable] = []
        at = start
        project = _project_at(uow, actor, at.project)
        while project is not None and len(rows) <= limit:  # one row more names the next page
            if at.part > RECORDS:
                at = Position(at.project + 1)
                project = _project_at(uow, actor, at.project)
                continue
            rows.extend(_part_rows(uow, project, at, limit + 1 - len(rows), parts))
            at = Position(at.project, at.part + 1)
        following = rows[limit].position if len(rows) > limit else None
        return rows[:limit], following

    return db.read(work)


def _project_at(uow: UnitOfWork, actor: Actor, offset: int) -> Project | None:
    page = uow.projects.list_for_user(
        actor.user_id,
        only_project_id=actor.project_cap,
        include_archived=False,
        limit=1,
        offset=offset,
    )
    return page.rows[0][0] if page.rows else None


def _part_rows(
    uow: UnitOfWork, project: Project, at: Position, room: int, parts: frozenset[Part]
) -> list[Readable]:
    """At most `room` rows of one part of `project`, from `at.offset`."""
    if at.part == HEAD:
        return _head_rows(uow, project, at, parts)[:room]
    if at.part == TASKS and "tasks" in parts:
        tasks, _ = uow.tasks.search(
            TaskFilter(project_ids=[project.id]), limit=room, offset=at.offset
        )
        return [
            Readable(
                "task",
                project.key,
                f"{project.key}-{task.number}",
                task.title,
                f"{task.status}, {task.priority} priority",
                Position(at.project, TASKS, at.offset + i),
            )
            for i, task in enumerate(tasks)
        ]
    if at.part == RECORDS and "memory" in parts:
        records, _ = memory_of(uow).search(
            RecordFilter((project.id,)), include_content=False, limit=room, offset=at.offset
        )
        return [
            Readable(
                "record",
                project.key,
                record.id,
                record.title,
                record.summary,
                Position(at.project, RECORDS, at.offset + i),
            )
            for i, record in enumerate(records)
        ]
    return []


def _head_rows(
    uow: UnitOfWork, project: Project, at: Position, parts: frozenset[Part]
) -> list[Readable]:
    """The state page and the documents ever written, from `at.offset`."""
    head: list[tuple[Kind, str, str, str]] = []
    if "state" in parts:
        revision = uow.state.get(project.id).revision
        head.append(("state", "", "State page", f"revision {revision}"))
    if "memory" in parts:
        head.extend(
            ("document", doc.name, DOCUMENT_TITLES[doc.name], f"version {doc.version}")
            for doc in memory_of(uow).documents((project.id,))
        )
    return [
        Readable(kind, project.key, ref, title, detail, Position(at.project, HEAD, i))
        for i, (kind, ref, title, detail) in enumerate(head)
        if i >= at.offset
    ]
