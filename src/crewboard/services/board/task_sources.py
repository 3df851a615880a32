"""Tasks kept in sync with a line of a spec file (`tasks.md`), seen from the board.

The board sits below specs and never imports it. It defines what it needs from the files as a
protocol; `crewboard.services.specs.tasks_md.install(db)` registers the implementation on the
Database (`create_app` and the CLI call it), and the board calls it through the unit of work,
inside the same transaction. With nothing registered, tasks simply have no file to rewrite.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from crewboard.domain.board.reads import TaskSource
from crewboard.domain.board.tasks import Task
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.errors import CrewboardError, NotFound
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

HOOK = "board.task_sources"


class TaskSourceFiles(Protocol):
    """What the board asks of the files its tasks come from."""

    def refusals(
        self,
        uow: UnitOfWork,
        project: Project,
        file_ids: Iterable[str],
        expected: Mapping[str, str],
    ) -> dict[str, CrewboardError]:
        """Why each of these files cannot take a box change now (it changed since the
        contentVersion `expected` names for it), by file id; files that can are absent."""
        ...

    def statuses_changed(
        self, uow: UnitOfWork, actor: Actor, project: Project, tasks: list[Task]
    ) -> None:
        """Rewrite the boxes of these tasks (their new statuses): one new revision per file
        whose text changes, saved by `actor`."""
        ...

    def describe(self, uow: UnitOfWork, file_ids: Iterable[str]) -> dict[str, SourceFile]:
        """Each file's path and current contentVersion, by id."""
        ...

    def find(self, uow: UnitOfWork, project_ids: Sequence[str], ref: str) -> list[str]:
        """The ids of the tasks files `ref` names (an id, or a path in each of these projects).

        Raises:
            NotFound: no such file in these projects (field `file`).
            ValidationFailed: a bad path, or a file that is not a tasks.md (field `file`).
        """
        ...


@dataclass(frozen=True)
class SourceFile:
    path: str
    content_version: str


def register(db: Database, files: TaskSourceFiles) -> None:
    db.hooks[HOOK] = files


def source_files(uow: UnitOfWork) -> TaskSourceFiles | None:
    # Only `register` writes this entry.
    return cast("TaskSourceFiles | None", uow.hooks.get(HOOK))


def has_source(task: Task) -> bool:
    return task.source_file_id is not None and task.source_line is not None


def load_sources(uow: UnitOfWork, tasks: Mapping[str, Task]) -> dict[str, Task]:
    """The same tasks (by the same keys) with their source file and line filled in, where they
    have one. Without the files' hook there is nothing to sync, and nothing is read."""
    if source_files(uow) is None or not tasks:
        return dict(tasks)
    loaded = uow.tasks.with_sources(tasks.values())
    return dict(zip(tasks.keys(), loaded, strict=True))


def status_moved(
    uow: UnitOfWork,
    actor: Actor,
    project: Project,
    tasks: list[Task],
    *,
    before: list[Task] | None = None,
) -> None:
    """Tasks changed in this unit of work (all of `tasks` moved status, or those whose status
    differs from `before`'s): once the use case is done, still in its transaction, the boxes
    of those from a file are rewritten, one new revision per file, by `actor`.

    `save_task` calls this for every status it writes, so each way a status moves (the batch,
    update_task, the web board, a hand-in or a decision) keeps the files in step."""
    files = source_files(uow)
    if files is None:
        return
    was = {task.id: task.status for task in before or ()}
    moved = [task.id for task in tasks if before is None or was.get(task.id) is not task.status]
    if moved:
        pending = uow.before_commit(HOOK, _BoxChanges(uow, files))
        cast("_BoxChanges", pending).add(actor, project, moved)


class _BoxChanges:
    """The tasks whose status moved in one unit of work, rewritten into their files at its end."""

    def __init__(self, uow: UnitOfWork, files: TaskSourceFiles) -> None:
        self.uow = uow
        self.files = files
        self.moved: dict[str, tuple[Actor, Project]] = {}

    def add(self, actor: Actor, project: Project, task_ids: list[str]) -> None:
        for task_id in task_ids:
            self.moved.pop(task_id, None)
            self.moved[task_id] = (actor, project)

    def __call__(self) -> None:
        # The tasks as they are now (a task moved twice shows where it ended), by who moved
        # them last and project.
        now = self.uow.tasks.with_sources(self.uow.tasks.get_many(self.moved).values())
        groups: dict[tuple[str, str], list[Task]] = {}
        for task in now:
            if has_source(task):
                actor, project = self.moved[task.id]
                groups.setdefault((project.id, actor.principal), []).append(task)
        for tasks in groups.values():
            actor, project = self.moved[tasks[0].id]
            self.files.statuses_changed(self.uow, actor, project, tasks)


def source_file_ids(uow: UnitOfWork, project_ids: Sequence[str], ref: str) -> list[str]:
    """The tasks.md files `ref` (a file's id or path) names in these projects: list_tasks'
    `file` filter. Without the files' hook no file exists.

    Raises:
        NotFound, ValidationFailed: naming `file`.
    """
    files = source_files(uow)
    if files is None:
        raise NotFound(
            f"No tasks.md file {ref!r} here.", {"resource": "specFile", "field": "file", "ref": ref}
        )
    return files.find(uow, project_ids, ref)


def sources_of(uow: UnitOfWork, task_ids: Sequence[str]) -> dict[str, TaskSource]:
    """Where each of these tasks that came from a tasks.md file stands: its file (path and
    `contentVersion`, what set_task_status' expectedVersions takes) and line, by task id."""
    files = source_files(uow)
    if files is None or not task_ids:
        return {}
    sources = {
        task_id: source
        for task_id, source in uow.tasks.sources_of(task_ids).items()
        if source[1] is not None
    }
    if not sources:
        return {}
    described = files.describe(uow, {file_id for file_id, _ in sources.values()})
    shown: dict[str, TaskSource] = {}
    for task_id, (file_id, line) in sources.items():
        source = described.get(file_id)
        shown[task_id] = TaskSource(
            file_id=file_id,
            path=source.path if source else None,
            line=line,
            content_version=source.content_version if source else None,
        )
    return shown
