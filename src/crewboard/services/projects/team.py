"""The team of a project: its roles (seats, AI or human) and the people who can open it.

Each use case returns a typed record (`domain/projects`); `contract/projects/present.py` words
it. The wire forms here (`team_role_view`, `team_view`) are what events, the board screen and
the present module share."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from crewboard.domain.identity.access import Role, Scope, missing_permission, parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import (
    Effort,
    ProjectTeam,
    SeatKind,
    TeamPage,
    TeamRole,
)
from crewboard.domain.validation import check_email, check_text
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.events import record_project_event
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.services.views import iso
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_ROLE_NAME = 120
MAX_ROLE_TEXT = 500


def team_role_view(role: TeamRole) -> dict[str, Any]:
    return {
        "id": role.id,
        "name": role.name,
        "role": role.role,
        "kind": str(role.kind),
        "memberUserId": role.member_user_id,
        "model": role.model,
        "effort": str(role.effort) if role.effort else None,
        "rank": role.rank,
        "level": role.level,
        "xp": role.xp,
        "archived": role.archived_at is not None,
        "createdAt": iso(role.created_at),
    }


def team_view(team: ProjectTeam, you: str) -> dict[str, Any]:
    """A project's team on the wire; `you` is the reader's user id."""
    return {
        "projectId": team.project.id,
        "projectKey": team.project.key,
        "workspaceId": team.project.workspace_id,
        "roles": [team_role_view(r) for r in team.roles],
        "people": [
            {
                "userId": user.id,
                "displayName": user.display_name,
                "projectRole": str(role),
                "you": user.id == you,
            }
            for user, role in team.people
        ],
    }


def list_team(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> list[ProjectTeam]:
    """Each open project's (or one project's) active roles and people.

    Raises:
        NotFound: `project` is not open to the actor.
    """

    def work(uow: UnitOfWork) -> list[ProjectTeam]:
        if project is not None:
            refs = [access_project(uow, actor, project, workspace_id=workspace_id).project.id]
        else:
            page = uow.projects.list_for_user(
                actor.user_id, only_project_id=actor.project_cap, limit=200, offset=0
            )
            refs = [p.id for p, _ in page.rows]
        return [_team_of(uow, actor, ref) for ref in refs]

    return db.read(work)


def _team_of(uow: UnitOfWork, actor: Actor, project_id: str) -> ProjectTeam:
    access = access_project(uow, actor, project_id)
    return ProjectTeam(access.project, uow.team.list(project_id), uow.projects.members(project_id))


def add_team_role(
    db: Database,
    actor: Actor,
    *,
    project: str,
    name: str,
    role: str = "",
    kind: str = "ai",
    member_email: str | None = None,
    model: str | None = None,
    effort: str | None = None,
    rank: int = 0,
) -> TeamRole:
    """Add a seat to a project's team (project admins; agents propose roles instead).

    Raises:
        NotFound, PermissionDenied, ValidationFailed, LimitExceeded.
    """
    seat_kind = parse_enum(kind, SeatKind, "kind")
    seat_effort = parse_enum(effort, Effort, "effort") if effort is not None else None
    clean_name = check_text("name", name, max_length=MAX_ROLE_NAME, required=True)
    clean_role = check_text("role", role, max_length=MAX_ROLE_TEXT)
    clean_model = check_text("model", model, max_length=120) or None if model is not None else None
    if not 0 <= rank <= 1000:
        raise ValidationFailed.field("rank", f"must be between 0 and 1000; got {rank}.")
    member = check_email(member_email) if member_email is not None else None

    def work(uow: UnitOfWork) -> TeamRole:
        access = access_project(uow, actor, project, scope=Scope.TEAM_MANAGE, role=Role.ADMIN)
        member_id = None
        if member is not None:
            user = uow.users.get_by_email(member)
            if user is None or uow.projects.member_role(access.project.id, user.id) is None:
                raise NotFound(
                    f"{member} is not a member of {access.project.key}; add them to the project first.",
                    {"resource": "user", "email": member},
                )
            member_id = user.id
        seat = TeamRole(
            id=new_id("rol"),
            project_id=access.project.id,
            name=clean_name,
            role=clean_role,
            kind=seat_kind,
            member_user_id=member_id,
            model=clean_model,
            effort=seat_effort,
            rank=rank,
            level=1,
            xp=0,
            archived_at=None,
            created_at=uow.now,
        )
        uow.team.add(seat)
        record_project_event(
            uow, actor, "team.role_added", access.project, {"role": team_role_view(seat)}
        )
        return seat

    return db.write(work)


def get_team_page(db: Database, actor: Actor, *, project: str) -> TeamPage:
    """One project's team as its web page shows it, and whether the reader manages it (may
    add and archive roles and set members' roles, and so sees people's emails).

    Raises:
        NotFound: the project is not open to the actor.
    """

    def work(uow: UnitOfWork) -> TeamPage:
        access = access_project(uow, actor, project)
        project_id = access.project.id
        manages = all(
            missing_permission(actor.scopes, access.role, scope, Role.ADMIN) is None
            for scope in (Scope.TEAM_MANAGE, Scope.PROJECTS_ADMIN)
        )
        team = ProjectTeam(
            access.project, uow.team.list(project_id), uow.projects.members(project_id)
        )
        return TeamPage(team, manages)

    return db.read(work)


def archive_team_role(db: Database, actor: Actor, *, project: str, role_id: str) -> TeamRole:
    """Archive a seat of a project's team (project admins): it leaves the team, its history stays.

    Raises:
        NotFound: the project is not open to the actor, or it has no active role `role_id`.
        PermissionDenied: the actor is not an admin there (or lacks team.manage).
    """

    def work(uow: UnitOfWork) -> TeamRole:
        access = access_project(uow, actor, project, scope=Scope.TEAM_MANAGE, role=Role.ADMIN)
        seat = None if "\x00" in role_id else uow.team.get(access.project.id, role_id)
        if seat is None or seat.archived_at is not None:
            raise NotFound(
                f"{access.project.key} has no active team role {role_id!r}; "
                "the team page lists its roles.",
                {"resource": "team_role", "ref": role_id},
            )
        uow.team.set_archived(seat.id, uow.now)
        archived = replace(seat, archived_at=uow.now)
        record_project_event(
            uow, actor, "team.role_archived", access.project, {"role": team_role_view(archived)}
        )
        return archived

    return db.write(work)
