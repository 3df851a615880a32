"""get_project's answer: the project as its own area describes it, with what the areas above
it hold (spec files, attachments, artifacts and active spec sessions counted; the newest
files, attachments and active sessions listed, so an agent sees what there is to read).

Every part needs what get_project needs (the read scope and a role on the project), as
list_spec_files, list_attachments and list_spec_sessions do: nothing here is more private."""

from __future__ import annotations

from dataclasses import dataclass, field

from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import ProjectDescription
from crewboard.domain.sessions import ArchiveFilter, Session
from crewboard.domain.specs import Attachment, SpecFile
from crewboard.services.artifacts.artifacts import artifacts_of
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.projects.projects import project_description
from crewboard.services.sessions.sessions import sessions_of
from crewboard.services.specs.attachments import attachments_of
from crewboard.services.specs.file_lookup import files_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

NEWEST = 20  # of each list, most recently changed first; the list tools have the rest


@dataclass(frozen=True)
class ProjectOverview:
    """What get_project answers: the project's own description, with what the areas above it
    hold counted, and the newest (at most NEWEST) of its spec files (out of the trash bin),
    attachments and active spec sessions."""

    description: ProjectDescription
    spec_files: int
    attachments: int
    artifacts: int
    active_sessions: list[Session]
    active_session_count: int = 0
    newest_files: list[SpecFile] = field(default_factory=list)
    newest_attachments: list[Attachment] = field(default_factory=list)


def describe_project(
    db: Database, actor: Actor, ref: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> ProjectOverview:
    """One project, its counts, and its newest spec files, attachments and active sessions.

    Raises:
        NotFound: when the actor cannot open the project.
    """

    def work(uow: UnitOfWork) -> ProjectOverview:
        found = project_description(uow, actor, ref, workspace_id)
        project_id = found.project.project.id
        files, spec_files = files_of(uow).page(
            project_id, prefix=None, trashed=False, limit=NEWEST, offset=0, newest=True
        )
        items, attachments = attachments_of(uow).page(
            project_id, limit=NEWEST, offset=0, newest=True
        )
        _art, artifacts = artifacts_of(uow).page(project_id, limit=1, offset=0)
        active, active_count = sessions_of(uow).page(
            project_id, archive=ArchiveFilter.ACTIVE, status=None, query=None, limit=NEWEST,
            offset=0,
        )  # fmt: skip
        return ProjectOverview(
            found, spec_files, attachments, artifacts, active, active_count, files, items
        )

    return db.read(work)
