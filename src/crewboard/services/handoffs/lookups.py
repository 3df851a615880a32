"""Finding what a handoff use case works on: a handoff or action item the caller may open, the
tasks and people it names (each checked), and the revision checks of an edit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from crewboard.domain.handoffs import (
    MAX_LINKED_TASKS,
    MAX_RECIPIENTS,
    ActionItem,
    Handoff,
    LinkedTask,
    unique_ids,
)
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.projects import ProjectAccess
from crewboard.errors import NotFound, PermissionDenied, RevisionConflict, ValidationFailed
from crewboard.services.board.task_lookup import access_task
from crewboard.services.identity.access import access_project
from crewboard.services.views import iso, who_of
from crewboard.storage.handoffs.repository import HandoffRepository
from crewboard.storage.uow import UnitOfWork


def handoffs_of(uow: UnitOfWork) -> HandoffRepository:
    return HandoffRepository(uow.conn)


def users_of(uow: UnitOfWork, ids: Sequence[str | None]) -> dict[str, User]:
    return uow.users.get_many(i for i in ids if i)


def handoff_not_found(ref: str) -> NotFound:
    return NotFound(
        f"No handoff {ref!r} that you can open; list_handoffs shows a project's handoffs.",
        {"resource": "handoff", "ref": ref},
    )


def item_not_found(ref: str) -> NotFound:
    return NotFound(
        f"No action item {ref!r} that you can open; list_handoff_action_items lists a "
        "handoff's items.",
        {"resource": "handoff_action_item", "ref": ref},
    )


def open_handoff(
    uow: UnitOfWork, actor: Actor, ref: str, *, for_update: bool = False, **access: Any
) -> tuple[Handoff, ProjectAccess]:
    """A handoff by id and the access to its project (`access`: as access_project takes it).

    Raises:
        NotFound: no such handoff, or one in a project the actor cannot open (alike).
    """
    found = None if "\x00" in ref else handoffs_of(uow).get(ref, for_update=for_update)
    return found, _access(uow, actor, found, handoff_not_found(ref), access)  # type: ignore[return-value]


def open_item(
    uow: UnitOfWork, actor: Actor, ref: str, **access: Any
) -> tuple[ActionItem, ProjectAccess]:
    """An action item by id and the access to its project (as `open_handoff`)."""
    found = None if "\x00" in ref else handoffs_of(uow).item(ref)
    return found, _access(uow, actor, found, item_not_found(ref), access)  # type: ignore[return-value]


def _access(
    uow: UnitOfWork,
    actor: Actor,
    found: Handoff | ActionItem | None,
    missing: NotFound,
    access: dict[str, Any],
) -> ProjectAccess:
    if found is None:
        raise missing
    try:
        return access_project(uow, actor, found.project_id, **access)
    except NotFound:
        raise missing from None


def visible_tasks(uow: UnitOfWork, actor: Actor, task_ids: Sequence[str]) -> tuple[LinkedTask, ...]:
    """The linked tasks the reader may open (the others are left out, unnamed)."""
    shown = []
    for task_id in task_ids:
        try:
            task, project = access_task(uow, actor, task_id)
        except (NotFound, PermissionDenied):
            continue
        shown.append(LinkedTask(task.id, f"{project.key}-{task.number}", task.title))
    return tuple(shown)


def linked_tasks(uow: UnitOfWork, actor: Actor, refs: Sequence[str]) -> tuple[str, ...]:
    """The ids of tasks the caller links, each one the caller may open.

    Raises:
        ValidationFailed: naming the entry that is not a task the caller can open.
    """
    ids = []
    for index, ref in enumerate(unique_ids("linkedTaskIds", list(refs), MAX_LINKED_TASKS)):
        try:
            task, _ = access_task(uow, actor, ref)
        except (NotFound, PermissionDenied):
            raise ValidationFailed.field(
                f"linkedTaskIds[{index}]",
                f"{ref!r} is not a task you can open; send a task id (tsk_…) or key (CRW-12).",
            ) from None
        ids.append(task.id)
    return tuple(dict.fromkeys(ids))


def people(uow: UnitOfWork, project_id: str, field: str, refs: Sequence[str]) -> tuple[str, ...]:
    """User ids of people of the project, named by id or email.

    Raises:
        ValidationFailed: naming the entry that is not a person of the project.
    """
    members = {user.id: user for user, _ in uow.projects.members(project_id)}
    by_email = {user.email.lower(): user.id for user in members.values()}
    found = []
    for index, ref in enumerate(unique_ids(field, list(refs), MAX_RECIPIENTS)):
        user_id = ref if ref in members else by_email.get(ref.strip().lower())
        if user_id is None:
            raise ValidationFailed.field(
                f"{field}[{index}]",
                f"{ref!r} is not a person of this project; send a user id or email that "
                "list_team shows.",
            )
        found.append(user_id)
    return tuple(dict.fromkeys(found))


def person_of(uow: UnitOfWork, project_id: str, field: str, ref: str) -> str:
    return people(uow, project_id, field, [ref])[0]


def later(now: datetime, previous: datetime) -> datetime:
    """A new updatedAt: now, or just after the previous one when the clock has not moved
    (so every edit gets a version of its own)."""
    return max(now, previous + timedelta(microseconds=1))


def expected_at(field: str, value: str) -> datetime:
    """An updatedAt as the reads give it (ISO 8601 with its offset).

    Raises:
        ValidationFailed: naming the field.
    """
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ValidationFailed.field(
            field, "send the updatedAt of a fresh read as it came (ISO 8601 with its offset)."
        )
    return parsed


def stale(kind: str, ref: str, current: datetime, by: dict[str, Any], sent: str) -> Exception:
    return RevisionConflict(
        f"{kind} {ref} has changed since you read it: {who_of(by)} saved it at {iso(current)}, "
        f"and you sent expectedUpdatedAt {sent}. Nothing was written. Read it again and send "
        "its updatedAt.",
        {"currentUpdatedAt": iso(current), "updatedBy": by, "expectedUpdatedAt": sent},
    )
