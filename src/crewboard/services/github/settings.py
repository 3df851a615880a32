"""Setting a project up for GitHub webhooks (project admins): the secret, what a merged pull
request does, whether issues become tasks, and the deliveries seen lately."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace

from crewboard.domain.github import DeliverySeen, GithubSettings, OnMerge
from crewboard.domain.identity.access import Role, Scope, parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.errors import NotFound
from crewboard.services.identity.access import access_project, require_person
from crewboard.storage.database import Database
from crewboard.storage.github.repository import GithubRepository
from crewboard.storage.uow import UnitOfWork

RECENT_SHOWN = 20


@dataclass(frozen=True)
class GithubSetup:
    """A project's GitHub settings as an admin sees them; `secret` only right after it was
    made (set up or rotated), else None."""

    project: Project
    settings: GithubSettings | None
    recent: list[DeliverySeen]
    secret: str | None = None


def webhook_path(project: Project) -> str:
    return f"/api/v1/projects/{project.key}/github"


def _admin(uow: UnitOfWork, actor: Actor, project: str) -> Project:
    return access_project(uow, actor, project, scope=Scope.PROJECTS_ADMIN, role=Role.ADMIN).project


def get_github_settings(db: Database, actor: Actor, project: str) -> GithubSetup:
    """Raises: NotFound, PermissionDenied (project admins only)."""

    def work(uow: UnitOfWork) -> GithubSetup:
        proj = _admin(uow, actor, project)
        repo = GithubRepository(uow.conn)
        return GithubSetup(
            proj, repo.settings(proj.id), repo.recent_deliveries(proj.id, RECENT_SHOWN)
        )

    return db.read(work)


def configure_github(
    db: Database,
    actor: Actor,
    project: str,
    *,
    on_merge: str | None = None,
    sync_issues: bool | None = None,
    rotate_secret: bool = False,
) -> GithubSetup:
    """Set GitHub up for a project with a fresh secret, or change its settings; the caller
    becomes the one GitHub acts for.

    Raises:
        ValidationFailed: onMerge is not review, done or none. NotFound, PermissionDenied.
        HumanIdentityRequired: an agent token.
    """
    merge = parse_enum(on_merge, OnMerge, "onMerge") if on_merge is not None else None
    require_person(actor, "configure_github")  # GitHub then acts in this person's name

    def work(uow: UnitOfWork) -> GithubSetup:
        proj = _admin(uow, actor, project)
        repo = GithubRepository(uow.conn)
        current = repo.settings(proj.id)
        fresh = secrets.token_hex(32) if current is None or rotate_secret else None
        base = current or GithubSettings(
            proj.id, "", OnMerge.REVIEW, False, actor.user_id, uow.now, uow.now
        )
        saved = replace(
            base,
            secret=fresh or base.secret,
            on_merge=merge or base.on_merge,
            sync_issues=base.sync_issues if sync_issues is None else sync_issues,
            configured_by=actor.user_id,
            updated_at=uow.now,
        )
        repo.save_settings(saved)
        uow.record_event(
            "github.configured",
            actor=actor.as_payload(),
            payload={
                "onMerge": saved.on_merge.value,
                "syncIssues": saved.sync_issues,
                "secretChanged": fresh is not None,
            },
            project_id=proj.id,
            workspace_id=proj.workspace_id,
        )
        return GithubSetup(proj, saved, repo.recent_deliveries(proj.id, RECENT_SHOWN), fresh)

    return db.write(work)


def disconnect_github(db: Database, actor: Actor, project: str) -> Project:
    """Stop taking GitHub deliveries for a project (its secret is forgotten).

    Raises:
        NotFound: the project, or GitHub is not set up for it. PermissionDenied.
        HumanIdentityRequired: an agent token.
    """
    require_person(actor, "disconnect_github")

    def work(uow: UnitOfWork) -> Project:
        proj = _admin(uow, actor, project)
        if not GithubRepository(uow.conn).remove_settings(proj.id):
            raise NotFound(
                f"GitHub is not set up for {proj.key}; configure_github sets it up.",
                {"resource": "github_settings", "ref": proj.key},
            )
        uow.record_event(
            "github.disconnected", actor=actor.as_payload(), payload={},
            project_id=proj.id, workspace_id=proj.workspace_id,
        )  # fmt: skip
        return proj

    return db.write(work)
