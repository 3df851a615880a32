"""get_project's answer: the project as its own area describes it, with what the areas above
it hold (spec files, attachments, artifacts counted; the active spec sessions listed)."""

from __future__ import annotations

from dataclasses import dataclass

from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import ProjectDescription
from crewboard.domain.sessions import Session
from crewboard.services.artifacts.artifacts import artifacts_of
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.projects.projects import project_description
from crewboard.services.sessions.sessions import sessions_of
from crewboard.services.specs.attachments import attachments_of
from crewboard.services.specs.file_lookup import files_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

ACTIVE_SESSIONS = 10  # the most recently active; list_spec_sessions has the rest


@dataclass(frozen=True)
class ProjectOverview:
    """What get_project answers: the project's own description, with what the areas above it
    hold counted and its most recently active spec sessions."""

    description: ProjectDescription
    spec_files: int
    attachments: int
    artifacts: int
    active_sessions: list[Session]


def describe_project(
    db: Database, actor: Actor, ref: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> ProjectOverview:
    """One project, its counts, and its most recently active spec sessions.

    Raises:
        NotFound: when the actor cannot open the project.
    """

    def work(uow: UnitOfWork) -> ProjectOverview:
        found = project_description(uow, actor, ref, workspace_id)
        project_id = found.project.project.id
        _files, spec_files = files_of(uow).page(
            project_id, prefix=None, trashed=False, limit=1, offset=0
        )
        _items, attachments = attachments_of(uow).page(project_id, limit=1, offset=0)
        _art, artifacts = artifacts_of(uow).page(project_id, limit=1, offset=0)
        active = sessions_of(uow).active_of(project_id, ACTIVE_SESSIONS)
        return ProjectOverview(found, spec_files, attachments, artifacts, active)

    return db.read(work)
