"""Finding a task: by id, key (CRW-12) or number, with the access check every use case needs."""

from __future__ import annotations

from collections.abc import Iterable

from crewboard.domain.board.reads import TaskShown
from crewboard.domain.board.tasks import (
    Task,
    parse_task_key,
)
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.errors import (
    NotFound,
)
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.storage.board.tasks import TaskFilter
from crewboard.storage.uow import UnitOfWork


def task_not_found(ref: str) -> NotFound:
    return NotFound(
        f"No task {ref!r} is open to you; list_tasks finds tasks by number, text or status.",
        {"resource": "task", "ref": ref},
    )


def access_task(
    uow: UnitOfWork,
    actor: Actor,
    ref: str,
    *,
    project: str | None = None,
    scope: Scope = Scope.READ,
    role: Role = Role.READ,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> tuple[Task, Project]:
    """A task by id (tsk_…), key (CRW-12) or number (with `project`), permission-checked.

    Raises:
        NotFound: no such task, or it is in a project the actor cannot open.
        PermissionDenied, ValidationFailed: as `access_project`.
    """
    task: Task | None = None
    if "\x00" in ref:
        raise task_not_found(ref)
    if ref.startswith("tsk_"):
        task = uow.tasks.get(ref)
    elif (key := parse_task_key(ref)) is not None:
        found = uow.projects.get_by_key(key[0])
        task = uow.tasks.get_by_number(found.id, key[1]) if found else None
    elif ref.isdigit() and project is not None:
        access = access_project(uow, actor, project)
        task = uow.tasks.get_by_number(access.project.id, int(ref))
    if task is None:
        raise task_not_found(ref)
    try:
        access = access_project(
            uow, actor, task.project_id, scope=scope, role=role, workspace_id=workspace_id
        )
    except NotFound:
        raise task_not_found(ref) from None
    if project is not None and project not in (access.project.id, access.project.key):
        raise task_not_found(ref)
    return task, access.project


def find_project_tasks(uow: UnitOfWork, project: Project, refs: Iterable[str]) -> dict[str, Task]:
    """The tasks of `project` named by id, key (CRW-12) or number, by ref; unknown refs absent."""
    refs = list(refs)
    by_id = uow.tasks.get_many(ref for ref in refs if ref.startswith("tsk_"))
    numbers: dict[str, int] = {}
    for ref in refs:
        key = parse_task_key(ref)
        if key is not None and key[0] == project.key:
            numbers[ref] = key[1]
        elif ref.isascii() and ref.isdigit():
            numbers[ref] = int(ref)
    by_number: dict[int, Task] = {}
    if numbers:
        wanted = sorted(set(numbers.values()))
        rows, _ = uow.tasks.search(
            TaskFilter(project_ids=[project.id], numbers=wanted), limit=len(wanted)
        )
        by_number = {task.number: task for task in rows}
    found: dict[str, Task] = {}
    for ref in refs:
        task = by_id.get(ref) if ref in by_id else by_number.get(numbers.get(ref, 0))
        if task is not None and task.project_id == project.id:
            found[ref] = task
    return found


def task_ids_of(uow: UnitOfWork, project: Project, refs: Iterable[str]) -> tuple[str, ...]:
    """Each ref (an id, or a key such as CRW-12) as the id of that task of `project`, once.

    A ref that names no task of the project stays as given: the caller's check refuses it,
    naming its own field.
    """
    refs = tuple(refs)
    # An id needs no look-up here: the caller's check reads it anyway.
    found = find_project_tasks(uow, project, [ref for ref in refs if not ref.startswith("tsk_")])
    return tuple(dict.fromkeys(found[ref].id if ref in found else ref for ref in refs))


def render_task(uow: UnitOfWork, task: Task, project: Project) -> TaskShown:
    """The task with its relationships and the numbers of the tasks they name."""
    links = uow.tasks.links_of([task.id])[task.id]
    related = [link.other_id for link in links] + (
        [task.parent_task_id] if task.parent_task_id else []
    )
    return TaskShown(task, project, tuple(links), uow.tasks.numbers_of(related))
