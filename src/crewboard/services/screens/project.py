"""get_project's answer: the project as its own area describes it, with what the areas above
it hold (spec files, attachments, artifacts counted; the active spec sessions listed)."""

from __future__ import annotations

from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.services.artifacts.artifacts import artifacts_of
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.projects.projects import project_description
from crewboard.services.sessions.sessions import sessions_of
from crewboard.services.specs.attachments import attachments_of
from crewboard.services.specs.file_lookup import files_of
from crewboard.services.views import iso
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

ACTIVE_SESSIONS = 10  # the most recently active; list_spec_sessions has the rest


def describe_project(
    db: Database, actor: Actor, ref: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> dict[str, Any]:
    """One project, its counts, and its most recently active spec sessions.

    Raises:
        NotFound: when the actor cannot open the project.
    """

    def work(uow: UnitOfWork) -> dict[str, Any]:
        found = project_description(uow, actor, ref, workspace_id)
        project_id = found["project"]["id"]
        _files, spec_files = files_of(uow).page(
            project_id, prefix=None, trashed=False, limit=1, offset=0
        )
        _items, attachments = attachments_of(uow).page(project_id, limit=1, offset=0)
        _art, artifacts = artifacts_of(uow).page(project_id, limit=1, offset=0)
        active = sessions_of(uow).active_of(project_id, ACTIVE_SESSIONS)
        found["counts"] |= {"specFiles": spec_files, "attachments": attachments,
                            "artifacts": artifacts}  # fmt: skip
        found["activeSessions"] = [
            {"id": s.id, "title": s.title, "status": s.status.value,
             "pendingAction": s.pending_action.value, "updatedAt": iso(s.updated_at)}
            for s in active
        ]  # fmt: skip
        return found

    return db.read(work)
