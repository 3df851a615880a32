"""The project's state page: one working text per project, every version kept and restorable.

Each use case returns a typed record (`domain/projects`); `contract/projects/present.py` words it."""

from __future__ import annotations

from typing import Any

from crewboard.domain.identity.access import Role, Scope, missing_permission
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import (
    ProjectAccess,
    StatePage,
    StateRead,
    StateRestored,
    StateSaved,
    StateVersionPage,
)
from crewboard.domain.validation import INT32_MAX, check_no_nul
from crewboard.errors import LimitExceeded, NotFound, RevisionConflict, ValidationFailed
from crewboard.services.events import record_project_event
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.services.paging import check_page
from crewboard.services.views import actor_stamp, iso
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_STATE_LENGTH = 5000
MAX_VERSIONS_PAGE = 100


def get_project_state(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> StateRead:
    """The page with its revision, who wrote it and when, whether the actor may edit it, task counts.

    Raises:
        NotFound: the project is not open to the actor.
    """

    def work(uow: UnitOfWork) -> StateRead:
        access = access_project(uow, actor, project, workspace_id=workspace_id)
        page = uow.state.get(access.project.id)
        can_edit = missing_permission(actor.scopes, access.role, Scope.TASKS_MANAGE, Role.WRITE)
        return StateRead(page, can_edit is None, uow.tasks.count_by_status(access.project.id))

    return db.read(work)


def check_state_content(content: str) -> str:
    """Raises: LimitExceeded over 5000 characters; ValidationFailed for a NUL character."""
    check_no_nul("content", content)
    if len(content) > MAX_STATE_LENGTH:
        raise LimitExceeded(
            f"content: {len(content)} characters is over the state page limit of {MAX_STATE_LENGTH}; "
            "shorten it (move settled knowledge to project memory).",
            {"field": "content", "limit": MAX_STATE_LENGTH, "actual": len(content)},
        )
    return content


def check_revision(value: int, field: str = "expectedRevision") -> int:
    """Raises: ValidationFailed for a revision below 0 or past what a revision column holds."""
    if not 0 <= value <= INT32_MAX:
        raise ValidationFailed(
            f"{field}: must be a revision number from 0 to {INT32_MAX}; got {value}.",
            {"field": field, "minimum": 0, "maximum": INT32_MAX},
        )
    return value


def update_project_state(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    content: str,
    expected_revision: int,
) -> StateSaved:
    """Replace the page's text if it is still at `expected_revision`.

    Retrying a save whose answer was lost (same text, same expected revision, same writer)
    returns that save instead of a conflict.

    Raises:
        RevisionConflict: the page moved on; details name the current revision, who and when.
        LimitExceeded, ValidationFailed, NotFound, PermissionDenied.
    """
    text = check_state_content(content)
    expected = check_revision(expected_revision)

    def work(uow: UnitOfWork) -> StateSaved:
        access = _access_to_edit(uow, actor, project, workspace_id)
        project_id = access.project.id
        author = _author(actor)
        revision = uow.state.save(
            project_id, content=text, expected_revision=expected, author=author, at=uow.now
        )
        if revision is None:
            replayed = _replayed_save(uow, project_id, text, expected, author)
            if replayed is None:
                raise _conflict(uow, project_id, expected)
            return replayed
        page = uow.state.get(project_id)
        record_project_event(
            uow, actor, "state.updated", access.project, {"revision": revision, "length": len(text)}
        )
        return StateSaved(page)

    return db.write(work)


def _access_to_edit(
    uow: UnitOfWork, actor: Actor, project: str, workspace_id: WorkspaceRef
) -> ProjectAccess:
    """Raises: NotFound, PermissionDenied (the page is written with the tasks.manage scope)."""
    return access_project(
        uow, actor, project, scope=Scope.TASKS_MANAGE, role=Role.WRITE, workspace_id=workspace_id
    )


def _author(actor: Actor) -> dict[str, Any]:
    return actor_stamp(actor)  # with the token's name: "Owner via laptop" on the page


def _replayed_save(
    uow: UnitOfWork, project_id: str, text: str, expected: int, author: dict[str, Any]
) -> StateSaved | None:
    """The answer to a save that already happened: same writer, same text, from the same revision."""
    if expected >= INT32_MAX:
        return None
    saved = uow.state.version(project_id, expected + 1)
    if saved is None or saved.content != text or not _same_writer(saved.author, author):
        return None
    page = StatePage(project_id, saved.content, saved.revision, saved.author, saved.created_at)
    return StateSaved(page, replayed=True)


def _conflict(uow: UnitOfWork, project_id: str, expected: int) -> RevisionConflict:
    current = uow.state.get(project_id)
    return RevisionConflict(
        f"The state page is at revision {current.revision}, not {expected}: someone saved it "
        "meanwhile. Read it again with get_project_state, merge, and save from that revision.",
        {
            "currentRevision": current.revision,
            "expectedRevision": expected,
            "updatedBy": current.updated_by,
            "updatedAt": iso(current.updated_at),
        },
    )


def _same_writer(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("userId") == b.get("userId") and a.get("tokenId") == b.get("tokenId")


def list_state_versions(
    db: Database, actor: Actor, *, project: str, limit: int = 20, offset: int = 0
) -> StateVersionPage:
    """Saved versions, newest first.

    Raises:
        ValidationFailed: limit outside 1-100 or negative offset. NotFound.
    """
    check_page(limit, offset, MAX_VERSIONS_PAGE)

    def work(uow: UnitOfWork) -> StateVersionPage:
        access = access_project(uow, actor, project)
        versions, total = uow.state.versions(access.project.id, limit=limit, offset=offset)
        return StateVersionPage(versions, total, offset)

    return db.read(work)


def restore_state_version(
    db: Database,
    actor: Actor,
    *,
    project: str,
    revision: int,
    expected_revision: int,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> StateRestored:
    """Save an earlier version's text as a new revision (history is never rewritten).

    Raises:
        NotFound: no such version. RevisionConflict: the page moved past `expected_revision`.
    """
    check_revision(revision, "revision")
    expected = check_revision(expected_revision)

    def work(uow: UnitOfWork) -> StateRestored:
        access = _access_to_edit(uow, actor, project, workspace_id)
        project_id = access.project.id
        old = uow.state.version(project_id, revision)
        if old is None:
            raise NotFound(
                f"The state page has no revision {revision}; its saved versions are listed with "
                "the page's history.",
                {"resource": "state_version", "revision": revision},
            )
        author = _author(actor)
        saved = uow.state.save(
            project_id,
            content=old.content,
            expected_revision=expected,
            author=author,
            at=uow.now,
            restored_from=revision,
        )
        if saved is None:
            raise _conflict(uow, project_id, expected)
        record_project_event(
            uow,
            actor,
            "state.restored",
            access.project,
            {"revision": saved, "restoredFrom": revision},
        )
        return StateRestored(uow.state.get(project_id), revision)

    return db.write(work)
