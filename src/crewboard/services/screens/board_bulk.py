"""The board's bulk bar: one change (column, assignee, tags) to many chosen cards.

Each card is changed on its own through update_task, from the revision the board showed, so
one refusal (a stale card, a column that needs an assignee, a hand-in waiting) names that card
with its reason and the others are saved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crewboard.domain.board.tasks import MAX_TAGS, Task, TaskStatus, check_tags
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.errors import CrewboardError, LimitExceeded, ValidationFailed
from crewboard.services.board.task_lookup import find_project_tasks, task_not_found
from crewboard.services.board.task_updates import update_task
from crewboard.services.identity.access import access_project
from crewboard.services.screens.board import SETTLED, tile_now, waiting_hand_in
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_CARDS = 200
UNASSIGN = "none"


@dataclass(frozen=True)
class BulkChange:
    """What the bulk bar asks: None (or empty) leaves that part as it is."""

    status: str | None = None
    assignee: str | None = None  # a role or person id, or UNASSIGN
    add_tags: tuple[str, ...] = ()
    remove_tags: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return not (self.status or self.assignee or self.add_tags or self.remove_tags)


@dataclass
class CardOutcome:
    """One card's result: `tile` (as the board shows it) when saved, `error` when refused."""

    ref: str
    key: str
    tile: dict[str, Any] | None = None
    error: CrewboardError | None = None
    changed: list[str] = field(default_factory=list)


def check_bulk_change(change: BulkChange, cards: list[tuple[str, int]]) -> BulkChange:
    """Raises: ValidationFailed naming the field (no cards, nothing to change, a bad column or
    tag); LimitExceeded past MAX_CARDS."""
    if not cards:
        raise ValidationFailed.field("tasks", "choose at least one card.")
    if len(cards) > MAX_CARDS:
        raise LimitExceeded(
            f"tasks: at most {MAX_CARDS} cards at once.", {"field": "tasks", "limit": MAX_CARDS}
        )
    if change.is_empty():
        raise ValidationFailed.field(
            "change", "choose a column, an assignee or tags to add or remove."
        )
    columns = [status.value for status in TaskStatus]
    if change.status and change.status not in columns:
        raise ValidationFailed.field("status", f"{change.status!r} is not a column.", columns)
    check_tags("addTags", list(change.add_tags))
    check_tags("removeTags", list(change.remove_tags))
    return change


def bulk_change(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: str | None,
    cards: list[tuple[str, int]],
    change: BulkChange,
) -> list[CardOutcome]:
    """Apply `change` to each card (ref, the revision the board showed); one outcome a card.

    Raises (the whole request; a card's own refusal is its outcome):
        ValidationFailed, LimitExceeded: as check_bulk_change. NotFound: the project.
        PermissionDenied: the actor may not change tasks of the project.
    """
    check_bulk_change(change, cards)

    def read(uow: UnitOfWork) -> dict[str, Task]:
        found = access_project(
            uow, actor, project, scope=Scope.TASKS_MANAGE, role=Role.WRITE
        ).project
        return find_project_tasks(uow, found, [ref for ref, _ in cards])

    tasks: dict[str, Task] = db.read(read)
    outcomes = []
    for ref, revision in cards:
        outcome = CardOutcome(ref=ref, key=ref)
        try:
            task = tasks.get(ref)
            if task is None:
                raise task_not_found(ref)
            outcome.changed = _apply(
                db,
                actor,
                project=project,
                workspace_id=workspace_id,
                task=task,
                revision=revision,
                change=change,
            )
            outcome.tile = tile_now(db, actor, project=project, ref=task.id)
            outcome.key = str(outcome.tile["key"])
        except CrewboardError as error:
            outcome.error = error
        outcomes.append(outcome)
    return outcomes


def _patch(task: Task, change: BulkChange) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    if change.status and change.status != task.status.value:
        patch["status"] = change.status
    if change.assignee:
        wanted = None if change.assignee == UNASSIGN else change.assignee
        if wanted != task.assignee_id:
            patch["assignee_id"] = wanted
    if change.add_tags or change.remove_tags:
        removing = {tag.lower() for tag in change.remove_tags}
        merged = {tag.lower(): tag for tag in task.tags if tag.lower() not in removing}
        for tag in change.add_tags:
            merged.setdefault(tag.lower(), tag)
        if len(merged) > MAX_TAGS:
            raise LimitExceeded(
                f"addTags: the task would have {len(merged)} tags; at most {MAX_TAGS}.",
                {"field": "addTags", "limit": MAX_TAGS},
            )
        if list(merged.values()) != list(task.tags):
            patch["tags"] = list(merged.values())
    return patch


def _apply(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: str | None,
    task: Task,
    revision: int,
    change: BulkChange,
) -> list[str]:
    """Change one card; the fields that changed (none: it was already so)."""
    patch = _patch(task, change)
    if not patch:
        return []
    settles = "status" in patch and TaskStatus(patch["status"]) in SETTLED
    if settles and waiting_hand_in(db, actor, project=project, task=task.id) is not None:
        raise ValidationFailed.field(
            "status",
            "a hand-in of it waits for review: approve it (that settles the task) or "
            "reject it in the inbox first.",
        )
    update_task(
        db,
        actor,
        project=project,
        workspace_id=workspace_id,
        idempotency_key=None,
        task_id=task.id,
        expected_revision=revision,
        patch=patch,
    )
    return sorted(patch)
