"""Board changes to many tasks in one call.

`update_tasks` applies one planning change to every task it names, all or nothing.
`set_task_status` moves tasks to new statuses and answers with an outcome per task: the ones
that can change are written, the others say why not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from crewboard.domain.board.tasks import (
    MAX_TAGS,
    Link,
    Relation,
    Task,
    TaskStatus,
)
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.errors import (
    CrewboardError,
    LimitExceeded,
    NotFound,
    RevisionConflict,
    ValidationFailed,
)
from crewboard.services.board.batch_checks import (
    PLANNING_FIELDS,
    PlanningChange,
    check_planning_change,
    check_status_changes,
    check_task_refs,
)
from crewboard.services.board.task_checks import (
    check_assignment,
    check_status_allowed,
)
from crewboard.services.board.task_lookup import find_project_tasks, task_not_found
from crewboard.services.board.task_sources import (
    has_source,
    load_sources,
    source_files,
)
from crewboard.services.board.tasks import camel, revision_conflict, save_task
from crewboard.services.board.views import task_key
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import WorkspaceRef, access_project
from crewboard.storage.database import Database, LostRace
from crewboard.storage.uow import UnitOfWork

ASSIGNMENT_FIELDS = frozenset({"assignee_id", "assignee_type", "human_owner_id"})
ACK_BUDGET = 40 * 1024  # set_task_status' answer stays well inside the 48 KiB reply budget
LEFT_OUT = "Left out to keep the answer short; send this task alone to see why."


# --- finding tasks -------------------------------------------------------------------------


def _all_tasks(uow: UnitOfWork, project: Project, refs: list[str]) -> list[Task]:
    """Every task `refs` names, in order, each once.

    Raises:
        NotFound: naming every ref that is not a task of the project.
    """
    found = find_project_tasks(uow, project, refs)
    missing = [ref for ref in refs if ref not in found]
    if missing:
        raise NotFound(
            f"No task {', '.join(missing[:10])} in {project.key} is open to you, so nothing was "
            "changed; list_tasks shows the project's tasks.",
            {"resource": "task", "field": "taskIds", "missing": missing},
        )
    return list({found[ref].id: found[ref] for ref in refs}.values())


def _link_targets(
    uow: UnitOfWork, project: Project, tasks: list[Task], change: PlanningChange
) -> dict[str, Task]:
    """The other ends of the relationships to add and remove, by ref.

    Raises:
        ValidationFailed: a ref that is no task of the project, one of the tasks being
            changed, or the same task named twice.
    """
    named = [("addRelationships", i, ref) for i, (_, ref) in enumerate(change.add_links)] + [
        ("removeRelationships", i, ref) for i, ref in enumerate(change.remove_links)
    ]
    found = find_project_tasks(uow, project, [ref for _, _, ref in named])
    changing = {task.id for task in tasks}
    seen: set[str] = set()
    for field, i, ref in named:
        where = f"{field}.{i}" if field == "removeRelationships" else f"{field}.{i}.taskId"
        other = found.get(ref)
        if other is None:
            raise ValidationFailed.field(where, f"{ref} is not a task of {project.key}.")
        if other.id in changing:
            raise ValidationFailed.field(
                where, f"{ref} is one of taskIds; a task cannot be related to itself."
            )
        if other.id in seen:
            raise ValidationFailed.field(
                where, f"{ref} is named twice; a pair of tasks has one relationship at most."
            )
        seen.add(other.id)
    return found


# --- writing -------------------------------------------------------------------------------


def _for_task(error: CrewboardError, project: Project, task: Task) -> CrewboardError:
    """The same refusal, saying which task it is about."""
    key = task_key(project, task)
    return type(error)(f"{key}: {error.message}", {**error.details, "taskId": task.id, "key": key})


def _merge_labels(project: Project, task: Task, change: PlanningChange) -> tuple[str, ...]:
    """The task's labels with addLabels added and removeLabels taken away (any case).

    Raises:
        LimitExceeded: the task would end with more than 20 labels (the refusal names it).
    """
    removing = {label.lower() for label in change.remove_labels}
    merged = {label.lower(): label for label in task.labels if label.lower() not in removing}
    for label in change.add_labels:
        merged.setdefault(label.lower(), label)
    if len(merged) > MAX_TAGS:
        error = LimitExceeded(
            f"addLabels: the task would have {len(merged)} labels; at most {MAX_TAGS}.",
            {"field": "addLabels", "limit": MAX_TAGS},
        )
        raise _for_task(error, project, task)
    return tuple(merged.values())


_COMPARED = (*PLANNING_FIELDS, "labels")


def _plan(
    uow: UnitOfWork, project: Project, task: Task, change: PlanningChange
) -> tuple[Task, list[str]]:
    """The task after `change`, and the (camelCase) names of the fields that really change."""
    values = dict(change.fields)
    if "assignee_id" in values and "assignee_type" not in values:
        values["assignee_type"] = None  # the new assignee decides it
    updated = replace(task, **values, labels=_merge_labels(project, task, change))
    if ASSIGNMENT_FIELDS & values.keys():
        try:
            updated = check_assignment(uow, project, updated)
        except CrewboardError as error:
            raise _for_task(error, project, task) from None
    changed = [camel(name) for name in _COMPARED if getattr(updated, name) != getattr(task, name)]
    return updated, changed


def _apply_link_changes(
    uow: UnitOfWork,
    project: Project,
    tasks: list[Task],
    targets: dict[str, Task],
    change: PlanningChange,
    *,
    links: dict[str, list[Link]],
) -> set[str]:
    """Set and remove the relationships; return the ids of the tasks whose links changed."""
    current = {(me, link.other_id): link.relation for me, own in links.items() for link in own}
    touched: set[str] = set()
    for task in tasks:
        for relation, ref in change.add_links:
            other = targets[ref]
            if current.get((task.id, other.id)) is not relation:
                uow.tasks.set_link(project.id, task.id, other.id, relation, uow.now)
                touched |= {task.id, other.id}
        for ref in change.remove_links:
            other = targets[ref]
            if (task.id, other.id) in current:
                uow.tasks.remove_link(task.id, other.id)
                touched |= {task.id, other.id}
    return touched


def _blockers(links: list[Link]) -> int:
    return sum(1 for link in links if link.relation is Relation.BLOCKED_BY)


def do_update_tasks(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    task_refs: list[str],
    change: PlanningChange,
) -> Ack:
    """Apply `change` to every named task in this transaction, or to none."""
    proj = access_project(
        uow, actor, project, scope=Scope.TASKS_MANAGE, role=Role.WRITE, workspace_id=workspace_id
    ).project
    tasks = _all_tasks(uow, proj, task_refs)
    targets = _link_targets(uow, proj, tasks, change)
    ids = [task.id for task in tasks] + [other.id for other in targets.values()]
    plans = [(task, *_plan(uow, proj, task, change)) for task in tasks]
    links_before = uow.tasks.links_of(ids)
    touched = _apply_link_changes(uow, proj, tasks, targets, change, links=links_before)
    links_after = uow.tasks.links_of(ids) if touched else links_before

    def save(current: Task, updated: Task, changed: list[str]) -> dict[str, Any]:
        if current.id in touched:
            changed = [*changed, "relationships"]
        row = {"taskId": current.id, "key": task_key(proj, current), "changed": changed}
        if not changed:
            return {**row, "revision": current.revision}
        blockers = (_blockers(links_before[current.id]), _blockers(links_after[current.id]))
        try:
            saved = save_task(
                uow, actor, proj, current, updated, changed=changed, blockers=blockers
            )
        except LostRace as race:
            # Run again on what is committed now; should the races go on, say which task.
            details = getattr(race.outcome, "details", {})
            raise LostRace(
                RevisionConflict(
                    f"{row['key']} kept changing while this call ran, so no task was changed; "
                    "send the same call again.",
                    {**details, "taskId": current.id, "key": row["key"]},
                )
            ) from None
        return {**row, "revision": saved.revision}

    rows = [save(task, updated, changed) for task, updated, changed in plans]
    others = {other.id: other for other in targets.values() if other.id in touched}
    also = [save(other, other, []) for other in others.values()]
    updated_count = sum(1 for row in rows if row["changed"])
    body = {
        "projectId": proj.id,
        "tasks": rows,
        "updated": updated_count,
        "unchanged": len(rows) - updated_count,
        "alsoUpdated": [{k: row[k] for k in ("taskId", "key", "revision")} for row in also],
    }
    return Ack(body, resource_type="task", project_id=proj.id)


def update_tasks(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    idempotency_key: str,
    task_ids: list[str],
    fields: Mapping[str, Any] | None = None,
    add_labels: list[str] | None = None,
    remove_labels: list[str] | None = None,
    add_relationships: list[Mapping[str, Any]] | None = None,
    remove_relationships: list[str] | None = None,
) -> KeyedResult:
    """Apply one planning change to up to 200 tasks of a project, all or nothing (keyed).

    `fields` holds the planning fields the caller sent (snake_case); None clears one.

    Raises:
        NotFound: a task id or key that is not a task of the project (nothing changes).
        PermissionDenied, ValidationFailed, LimitExceeded, RevisionConflict (a task changed
            while the call ran), IdempotencyConflict.
    """
    refs = list(dict.fromkeys(check_task_refs("taskIds", task_ids)))
    change = check_planning_change(
        fields or {},
        add_labels=add_labels,
        remove_labels=remove_labels,
        add_relationships=add_relationships,
        remove_relationships=remove_relationships,
    )
    arguments = {
        "project": project,
        "workspaceId": workspace_id,
        "taskIds": task_ids,
        "fields": dict(fields or {}),
        "addLabels": add_labels or [],
        "removeLabels": remove_labels or [],
        "addRelationships": [dict(item) for item in add_relationships or []],
        "removeRelationships": remove_relationships or [],
    }
    return db.write(
        lambda uow: do_keyed_write(
            uow,
            actor,
            key=_required_key(idempotency_key),
            operation="update_tasks",
            arguments=arguments,
            perform=lambda: do_update_tasks(
                uow,
                actor,
                project=project,
                workspace_id=workspace_id,
                task_refs=refs,
                change=change,
            ),
        )
    )


def _required_key(key: str | None) -> str:
    if key is None:
        raise ValidationFailed.field("idempotencyKey", "is required for this write.")
    return key


# --- status --------------------------------------------------------------------------------


def _set_status(
    uow: UnitOfWork,
    actor: Actor,
    project: Project,
    task: Task,
    *,
    status: TaskStatus,
    expected: int | None,
) -> dict[str, Any]:
    """Move one task to `status`; its successful outcome. A task from a tasks.md has its box
    rewritten when the call is done (save_task), one revision per file.

    Raises:
        RevisionConflict, PermissionDenied, ValidationFailed: this task cannot move.
    """
    if expected is not None and task.revision != expected:
        raise revision_conflict(task, expected)
    check_status_allowed(actor, status)
    outcome = {"taskId": task.id, "key": task_key(project, task), "ok": True, "status": str(status)}
    if status is task.status:
        return {**outcome, "revision": task.revision, "changed": False}
    updated = replace(
        task, status=status, board_order=uow.tasks.next_board_order(project.id, status.value)
    )
    if status is TaskStatus.IN_PROGRESS:
        updated = check_assignment(uow, project, updated)
    saved = save_task(uow, actor, project, task, updated, changed=["status"])
    return {**outcome, "revision": saved.revision, "changed": True}


def _file_refusals(
    uow: UnitOfWork, project: Project, tasks: list[Task], file_versions: dict[str, str]
) -> dict[str, CrewboardError]:
    """Why the tasks.md files of these tasks cannot be written now, by file id.

    Raises:
        ValidationFailed: an expectedVersions file entry names no file of the tasks changed.
    """
    involved = {task.source_file_id for task in tasks if has_source(task)}
    for file_id in file_versions:
        if file_id not in involved:
            raise ValidationFailed.field(
                f"expectedVersions.{file_id}",
                "names no tasks.md file of the tasks in changes; list_tasks shows each task's "
                "sourceFileId.",
            )
    files = source_files(uow)
    if not involved or files is None:
        return {}
    return files.refusals(uow, project, sorted(f for f in involved if f), file_versions)


def do_set_task_status(
    uow: UnitOfWork,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    changes: list[tuple[str, TaskStatus]],
    expected_versions: dict[str, int],
    file_versions: dict[str, str] | None = None,
) -> Ack:
    """Move each task that can move; the others get a failed outcome saying why. The tasks of
    a `tasks.md` file that changed since the contentVersion `file_versions` names fail; the
    boxes of the moved ones are rewritten when the call is done, one new revision per file."""
    proj = access_project(
        uow, actor, project, scope=Scope.TASKS_MANAGE, role=Role.WRITE, workspace_id=workspace_id
    ).project
    found = load_sources(uow, find_project_tasks(uow, proj, [ref for ref, _ in changes]))
    refusals = _file_refusals(uow, proj, list(found.values()), file_versions or {})
    done: set[str] = set()
    outcomes: list[dict[str, Any]] = []
    for ref, status in changes:
        task = found.get(ref)
        try:
            if task is None:
                raise task_not_found(ref)
            if task.id in done:
                raise ValidationFailed.field(
                    "changes", f"{ref} names a task changed earlier in this call."
                )
            done.add(task.id)
            if has_source(task) and task.source_file_id in refusals:
                raise refusals[str(task.source_file_id)]
            expected = expected_versions.get(ref)
            outcomes.append(_set_status(uow, actor, proj, task, status=status, expected=expected))
        except CrewboardError as error:
            failed = {"taskId": task.id if task else ref, "ok": False, "error": error.to_dict()}
            outcomes.append({**failed, "key": task_key(proj, task)} if task else failed)
    succeeded = sum(1 for outcome in outcomes if outcome["ok"])
    body = {
        "projectId": proj.id,
        "outcomes": _fit_failures(outcomes),
        "succeeded": succeeded,
        "failed": len(outcomes) - succeeded,
    }
    return Ack(body, resource_type="task", project_id=proj.id)


def _fit_failures(outcomes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the answer inside its budget: failures past it keep their code, not the why."""
    used = sum(_size(outcome) for outcome in outcomes if outcome["ok"])
    fitted = []
    for outcome in outcomes:
        kept = outcome
        if not outcome["ok"]:
            if used + _size(outcome) > ACK_BUDGET:
                error = {"code": outcome["error"]["code"], "message": LEFT_OUT, "details": {}}
                kept = {**outcome, "error": error}
            used += _size(kept)
        fitted.append(kept)
    return fitted


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()) + 1


def set_task_status(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    idempotency_key: str,
    changes: list[Mapping[str, Any]],
    expected_versions: Mapping[str, Any] | None = None,
) -> KeyedResult:
    """Change the status of up to 200 tasks; each succeeds or fails on its own (keyed).

    Raises (the whole call; a single task's refusal is its outcome instead):
        NotFound, PermissionDenied: the project. ValidationFailed, LimitExceeded: the
            arguments. IdempotencyConflict.
    """
    checked = check_status_changes(changes, expected_versions)
    arguments = {
        "project": project,
        "workspaceId": workspace_id,
        "changes": [dict(item) for item in changes],
        "expectedVersions": dict(expected_versions or {}),
    }
    return db.write(
        lambda uow: do_keyed_write(
            uow,
            actor,
            key=_required_key(idempotency_key),
            operation="set_task_status",
            arguments=arguments,
            perform=lambda: do_set_task_status(
                uow,
                actor,
                project=project,
                workspace_id=workspace_id,
                changes=checked.changes,
                expected_versions=checked.task_versions,
                file_versions=checked.file_versions,
            ),
        )
    )
