"""Recording an event of one project, the shape most writes share."""

from __future__ import annotations

from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.storage.uow import UnitOfWork


def record_project_event(
    uow: UnitOfWork, actor: Actor, kind: str, project: Project, payload: dict[str, Any]
) -> None:
    """An event of `project` by `actor`, sent after the commit (see `UnitOfWork.record_event`)."""
    uow.record_event(
        kind,
        actor=actor.as_payload(),
        payload=payload,
        project_id=project.id,
        workspace_id=project.workspace_id,
    )
