"""SQL for tasks: rows, numbers, labels, relationships and lifecycle events (listing and the
text search: `task_listing`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Row,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.sql.elements import ColumnElement

from crewboard.domain.board.tasks import (
    AssigneeType,
    Link,
    Priority,
    Relation,
    Task,
    TaskStatus,
    TaskType,
)
from crewboard.storage.board import tables as t
from crewboard.storage.board.task_listing import TaskFilter, TaskListing
from crewboard.storage.board.task_rows import BoardLine, TaskColumns, TaskLine
from crewboard.storage.board.task_summaries import TaskSummaries
from crewboard.storage.rows import record_from_row, record_values

# Services take the filter and the list row from here, beside the repository.
__all__ = [
    "BoardLine",
    "TaskColumns",
    "TaskFilter",
    "TaskLine",
    "TaskRepository",
    "task_columns",
    "task_from_row",
]

# Statements built once, their values passed as parameters: building one (an INSERT with
# .values() for a task's thirty columns most of all) cost more than running it on SQLite.
_INSERT_TASK = insert(t.tasks)
_INSERT_EVENT = insert(t.task_events)
_REPLACE_TASK = update(t.tasks).where(
    t.tasks.c.id == bindparam("task_id_"), t.tasks.c.revision == bindparam("expected_revision_")
)
_LAST_BOARD_ORDER = select(func.max(t.tasks.c.board_order)).where(
    t.tasks.c.project_id == bindparam("project_id"), t.tasks.c.status == bindparam("status")
)
_TASK_BY_ID = select(t.tasks).where(t.tasks.c.id == bindparam("task_id"))
_TASK_BY_NUMBER = select(t.tasks).where(
    t.tasks.c.project_id == bindparam("project_id"), t.tasks.c.number == bindparam("number")
)
_TASKS_BY_ID = select(t.tasks).where(t.tasks.c.id.in_(bindparam("ids", expanding=True)))
_S = t.task_sources.c
_TASKS_OF_SOURCE = (
    select(t.tasks, _S.file_id.label("source_file_id_"), _S.line.label("source_line_"))
    .join(t.task_sources, _S.task_id == t.tasks.c.id)
    .where(_S.file_id.in_(bindparam("file_ids", expanding=True)), _S.line.is_not(None))
    .order_by(_S.file_id, _S.line)
)
_SOURCES_OF = select(_S.task_id, _S.file_id, _S.line).where(
    _S.task_id.in_(bindparam("ids", expanding=True))
)
_INSERT_SOURCE = insert(t.task_sources)
_SET_SOURCE_LINE = (
    update(t.task_sources)
    .where(_S.task_id == bindparam("task_id_"))
    .values(line=bindparam("line_"))
)
_NUMBERS_BY_ID = select(t.tasks.c.id, t.tasks.c.number).where(
    t.tasks.c.id.in_(bindparam("ids", expanding=True))
)
_LINKS_OF = select(t.task_links).where(
    or_(
        t.task_links.c.low_id.in_(bindparam("ids", expanding=True)),
        t.task_links.c.high_id.in_(bindparam("ids", expanding=True)),
    )
)
_BLOCKER_COUNT = (
    select(func.count())
    .select_from(t.task_links)
    .where(
        t.task_links.c.type == "blocks",
        or_(
            t.task_links.c.low_id == bindparam("task_id"),
            t.task_links.c.high_id == bindparam("task_id"),
        ),
        t.task_links.c.blocker_id != bindparam("task_id"),
    )
)
_LIFECYCLE_SUMMARY = select(func.count(), func.max(t.task_events.c.occurred_at)).where(
    t.task_events.c.task_id == bindparam("task_id")
)


def task_from_row(
    row: Row[Any], source_file_id: str | None = None, source_line: int | None = None
) -> Task:
    """The task a tasks row holds; its source file and line where the query joined them."""
    return record_from_row(
        Task,
        row,
        type=TaskType(row.type),
        status=TaskStatus(row.status),
        priority=Priority(row.priority),
        assignee_type=AssigneeType(row.assignee_type) if row.assignee_type else None,
        tags=tuple(row.tags),
        labels=tuple(row.labels),
        context_refs=tuple(row.context_refs),
        context_item_ids=tuple(row.context_item_ids),
        external_reference_ids=tuple(row.external_reference_ids),
        source_file_id=source_file_id,
        source_line=source_line,
    )


def task_columns(task: Task) -> dict[str, Any]:
    """The row values of a task (everything but the id, which never changes)."""
    values = record_values(
        task,
        t.tasks,
        type=task.type.value,
        status=task.status.value,
        priority=task.priority.value,
        assignee_type=task.assignee_type.value if task.assignee_type else None,
        tags=list(task.tags),
        labels=list(task.labels),
        context_refs=list(task.context_refs),
        context_item_ids=list(task.context_item_ids),
        external_reference_ids=list(task.external_reference_ids),
    )
    del values["id"]
    return values


class TaskRepository(TaskListing, TaskSummaries):
    """SQL for tasks: rows, tasks.md sources, labels, links, lifecycle events; the listing
    methods come from TaskListing."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- rows -----------------------------------------------------------------------------

    def next_board_order(self, project_id: str, status: str) -> float:
        current = self.conn.execute(
            _LAST_BOARD_ORDER, {"project_id": project_id, "status": status}
        ).scalar_one()
        return float(current or 0) + 1024.0

    def add(self, task: Task) -> None:
        self.conn.execute(_INSERT_TASK, {"id": task.id, **task_columns(task)})
        self._insert_labels(task)  # a new task has none to clear

    def get(self, task_id: str) -> Task | None:
        row = self.conn.execute(_TASK_BY_ID, {"task_id": task_id}).first()
        return task_from_row(row) if row else None

    def get_by_number(self, project_id: str, number: int) -> Task | None:
        row = self.conn.execute(
            _TASK_BY_NUMBER, {"project_id": project_id, "number": number}
        ).first()
        return task_from_row(row) if row else None

    def get_many(self, task_ids: Iterable[str]) -> dict[str, Task]:
        ids = list(set(task_ids))
        if not ids:
            return {}
        rows = self.conn.execute(_TASKS_BY_ID, {"ids": ids})
        return {row.id: task_from_row(row) for row in rows}

    # --- tasks.md sources ----------------------------------------------------------------

    def add_source(self, task: Task) -> None:
        """Record the file and line `task` (just added) is kept in sync with."""
        self.conn.execute(
            _INSERT_SOURCE,
            {
                "task_id": task.id,
                "project_id": task.project_id,
                "file_id": task.source_file_id,
                "line": task.source_line,
            },
        )

    def of_source_files(self, file_ids: Iterable[str]) -> list[Task]:
        """The tasks kept in sync with lines of these files (sources filled in), by file, line."""
        ids = list(set(file_ids))
        if not ids:
            return []
        return [
            task_from_row(row, row.source_file_id_, row.source_line_)
            for row in self.conn.execute(_TASKS_OF_SOURCE, {"file_ids": ids})
        ]

    def sources_of(self, task_ids: Iterable[str]) -> dict[str, tuple[str, int | None]]:
        """The file and line (None: left the file) of each of these tasks that has a source."""
        ids = list(set(task_ids))
        if not ids:
            return {}
        rows = self.conn.execute(_SOURCES_OF, {"ids": ids})
        return {row.task_id: (row.file_id, row.line) for row in rows}

    def with_sources(self, tasks: Iterable[Task]) -> list[Task]:
        """The tasks with their source file and line filled in (where they have one)."""
        tasks = list(tasks)
        sources = self.sources_of(task.id for task in tasks)
        return [
            replace(task, source_file_id=sources[task.id][0], source_line=sources[task.id][1])
            if task.id in sources
            else task
            for task in tasks
        ]

    def set_source_lines(self, lines: Sequence[tuple[str, int | None]]) -> None:
        """Move tasks to other lines of their file, or (None) off it. No task revision: a line
        that moved is layout, like board order."""
        if lines:
            self.conn.execute(
                _SET_SOURCE_LINE, [{"task_id_": i, "line_": line} for i, line in lines]
            )

    def numbers_of(self, task_ids: Iterable[str]) -> dict[str, int]:
        ids = list(set(task_ids))
        if not ids:
            return {}
        rows = self.conn.execute(_NUMBERS_BY_ID, {"ids": ids})
        return {row.id: row.number for row in rows}

    def replace(self, task: Task, expected_revision: int) -> bool:
        """Write `task` if the row is still at `expected_revision` (one compare-and-set statement)."""
        result = self.conn.execute(
            _REPLACE_TASK,
            {"task_id_": task.id, "expected_revision_": expected_revision, **task_columns(task)},
        )
        if result.rowcount != 1:
            return False
        self._write_labels(task)
        return True

    def _write_labels(self, task: Task) -> None:
        self.conn.execute(delete(t.task_labels).where(t.task_labels.c.task_id == task.id))
        self._insert_labels(task)

    def _insert_labels(self, task: Task) -> None:
        rows = [
            {
                "task_id": task.id,
                "kind": kind,
                "value": value.lower(),
                "project_id": task.project_id,
            }
            for kind, values in (("tag", task.tags), ("label", task.labels))
            for value in dict.fromkeys(v.lower() for v in values)
        ]
        if rows:
            self.conn.execute(insert(t.task_labels), rows)

    # --- relationships ----------------------------------------------------------------------

    def links_of(self, task_ids: Iterable[str]) -> dict[str, list[Link]]:
        ids = list(set(task_ids))
        found: dict[str, list[Link]] = {task_id: [] for task_id in ids}
        if not ids:
            return found
        rows = self.conn.execute(_LINKS_OF, {"ids": ids})
        for row in rows:
            for me, other in ((row.low_id, row.high_id), (row.high_id, row.low_id)):
                if me not in found:
                    continue
                if row.type == "related":
                    relation = Relation.RELATED
                else:
                    relation = Relation.BLOCKS if row.blocker_id == me else Relation.BLOCKED_BY
                found[me].append(Link(relation, other))
        for links in found.values():
            links.sort(key=lambda link: (link.relation, link.other_id))
        return found

    def set_link(
        self, project_id: str, task_id: str, other_id: str, relation: Relation, at: datetime
    ) -> None:
        """Set how `task_id` stands to `other_id`, replacing any earlier relationship of the pair."""
        low, high = sorted((task_id, other_id))
        self.remove_link(task_id, other_id)
        blocker = {Relation.BLOCKS: task_id, Relation.BLOCKED_BY: other_id}.get(relation)
        self.conn.execute(
            insert(t.task_links).values(
                low_id=low,
                high_id=high,
                project_id=project_id,
                type="related" if relation is Relation.RELATED else "blocks",
                blocker_id=blocker,
                created_at=at,
            )
        )

    def remove_link(self, task_id: str, other_id: str) -> bool:
        low, high = sorted((task_id, other_id))
        result = self.conn.execute(
            delete(t.task_links).where(t.task_links.c.low_id == low, t.task_links.c.high_id == high)
        )
        return result.rowcount > 0

    def blocker_count(self, task_id: str) -> int:
        return int(self.conn.execute(_BLOCKER_COUNT, {"task_id": task_id}).scalar_one())

    # --- lifecycle events -------------------------------------------------------------------

    def add_lifecycle_event(
        self,
        task: Task,
        type_: str,
        *,
        actor: dict[str, Any],
        data: dict[str, Any],
        at: datetime,
    ) -> int:
        agent = task.assignee_id if task.assignee_type is AssigneeType.AI else None
        human = task.human_owner_id or (
            task.assignee_id if task.assignee_type is AssigneeType.HUMAN else None
        )
        result = self.conn.execute(
            _INSERT_EVENT,
            {
                "project_id": task.project_id,
                "task_id": task.id,
                "type": type_,
                "occurred_at": at,
                "actor": actor,
                "data": data,
                "status": task.status.value,
                "agent_assignee_id": agent,
                "human_assignee_id": human,
            },
        )
        key = result.inserted_primary_key
        return int(key[0]) if key else 0

    def lifecycle_summary(self, task_id: str) -> tuple[int, datetime | None]:
        row = self.conn.execute(_LIFECYCLE_SUMMARY, {"task_id": task_id}).one()
        return int(row[0]), row[1]

    def lifecycle_events(
        self,
        *,
        project_ids: Sequence[str],
        task_id: str | None = None,
        task_ids: Sequence[str] | None = None,
        agent_assignee_id: str | None = None,
        human_assignee_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        types: Sequence[str] = (),
        after_id: int = 0,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Events oldest first (in the order they were written); `after_id` continues a cursor."""
        c = t.task_events.c
        conditions: list[ColumnElement[bool]] = [
            c.project_id.in_(list(project_ids)),
            c.id > after_id,
        ]
        if task_id is not None:
            conditions.append(c.task_id == task_id)
        if task_ids is not None:
            conditions.append(c.task_id.in_(list(task_ids)))
        if agent_assignee_id is not None:
            conditions.append(c.agent_assignee_id == agent_assignee_id)
        if human_assignee_id is not None:
            conditions.append(c.human_assignee_id == human_assignee_id)
        if since is not None:
            conditions.append(c.occurred_at >= since)
        if until is not None:
            conditions.append(c.occurred_at < until)
        if types:
            conditions.append(c.type.in_(list(types)))
        rows = self.conn.execute(
            select(t.task_events).where(and_(*conditions)).order_by(c.id).limit(limit)
        )
        return [row._asdict() for row in rows]
