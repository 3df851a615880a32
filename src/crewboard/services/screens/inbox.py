"""The web inbox's reading: the inbox of one project, narrowed to a kind, with each message's
task key and the name of the participant it is addressed to (a person or a team seat)."""

from __future__ import annotations

from typing import Any

from crewboard.domain.models import Actor
from crewboard.errors import ValidationFailed
from crewboard.services.review.inbox import KINDS, MAX_ITEMS, inbox
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


def check_kind(kind: str | None) -> str | None:
    """An inbox kind ('' and None mean every kind).

    Raises:
        ValidationFailed: not one of hand_in, proposal, question, message.
    """
    if not kind:
        return None
    if kind not in KINDS:
        raise ValidationFailed.field("kind", f"unknown value {kind!r}.", list(KINDS))
    return kind


def inbox_page(
    db: Database, actor: Actor, *, project: str, kind: str | None = None
) -> dict[str, Any]:
    """What waits for the person in one project (newest first), optionally of one kind.

    Counts always cover every kind; `items` holds the chosen kind's only.

    Raises:
        PermissionDenied: through a token. NotFound: the project is not open to the actor.
        ValidationFailed: an unknown kind.
    """
    wanted = check_kind(kind)
    found = inbox(db, actor, project=project, limit=MAX_ITEMS)
    items = [item for item in found["items"] if wanted is None or item["kind"] == wanted]
    messages = [item for item in items if item["kind"] == "message"]
    if messages:
        keys, names = db.read(lambda uow: _labels(uow, messages))
        for message in messages:
            message["taskKey"] = keys.get(message["taskId"] or "")
            message["participantName"] = names.get(message["participantId"])
    return {**found, "kind": wanted, "items": items}


def _labels(
    uow: UnitOfWork, messages: list[dict[str, Any]]
) -> tuple[dict[str, str], dict[str, str]]:
    """Task keys of the messages' tasks and names of their participants."""
    project_keys: dict[str, str] = {}
    for project_id in {m["projectId"] for m in messages}:
        project = uow.projects.get(project_id)
        project_keys[project_id] = project.key if project else "?"
    task_projects = {m["taskId"]: m["projectId"] for m in messages if m["taskId"]}
    numbers = uow.tasks.numbers_of(task_projects)
    keys = {
        task_id: f"{project_keys[task_projects[task_id]]}-{number}"
        for task_id, number in numbers.items()
    }
    names: dict[str, str] = {}
    for message in messages:
        participant = str(message["participantId"])
        if participant in names:
            continue
        if participant.startswith("rol_"):
            seat = uow.team.get(message["projectId"], participant)
            names[participant] = seat.name if seat else participant
        else:
            user = uow.users.get(participant)
            names[participant] = user.display_name if user else participant
    return keys, names
