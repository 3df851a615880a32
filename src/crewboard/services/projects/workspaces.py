"""Workspaces: shared spaces whose members can put projects in them."""

from __future__ import annotations

from crewboard.domain.identity.access import parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Workspace, WorkspaceMembers, WorkspaceRole
from crewboard.domain.validation import check_email, check_text
from crewboard.errors import NotFound, PermissionDenied
from crewboard.services.views import workspace_view
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


def create_workspace(db: Database, actor: Actor, *, name: str) -> Workspace:
    """Create a workspace; its creator becomes its admin.

    Raises:
        ValidationFailed, LimitExceeded: on a bad name.
    """
    clean = check_text("name", name, max_length=120, required=True)

    def work(uow: UnitOfWork) -> Workspace:
        workspace = Workspace(id=new_id("wsp"), name=clean, created_at=uow.now)
        uow.workspaces.add(workspace, created_by=actor.user_id)
        uow.workspaces.set_member(workspace.id, actor.user_id, WorkspaceRole.ADMIN, uow.now)
        uow.record_event(
            "workspace.created",
            actor=actor.as_payload(),
            payload={"workspace": workspace_view(workspace)},
            workspace_id=workspace.id,
        )
        return workspace

    return db.write(work)


def add_workspace_member(
    db: Database, actor: Actor, *, workspace_id: str, email: str, role: str = "member"
) -> WorkspaceRole:
    """Add a person to a workspace (or change their role there).

    Raises:
        NotFound: the workspace is not the actor's, or no user has that email.
        PermissionDenied: the actor is not an admin of the workspace.
        ValidationFailed: unknown role.
    """
    member_role = parse_enum(role, WorkspaceRole, "role")
    address = check_email(email)

    def work(uow: UnitOfWork) -> WorkspaceRole:
        own = uow.workspaces.member_role(workspace_id, actor.user_id)
        if own is None:
            raise NotFound(
                f"No workspace {workspace_id!r} is open to you.",
                {"resource": "workspace", "ref": workspace_id},
            )
        if own is not WorkspaceRole.ADMIN:
            raise PermissionDenied(
                "Adding members needs the admin role on the workspace; you have member.",
                {"requiredRole": "admin", "role": str(own)},
            )
        user = uow.users.get_by_email(address)
        if user is None:
            raise NotFound(f"No user with email {address}.", {"resource": "user", "email": address})
        uow.workspaces.set_member(workspace_id, user.id, member_role, uow.now)
        uow.record_event(
            "workspace.member_set",
            actor=actor.as_payload(),
            payload={"userId": user.id, "role": str(member_role)},
            workspace_id=workspace_id,
        )
        return member_role

    return db.write(work)


def list_workspaces(db: Database, actor: Actor) -> list[tuple[Workspace, WorkspaceRole]]:
    return db.read(lambda uow: uow.workspaces.list_for_user(actor.user_id))


def workspaces_with_members(db: Database, actor: Actor) -> list[WorkspaceMembers]:
    """The actor's workspaces, each with its role there and its members."""

    def work(uow: UnitOfWork) -> list[WorkspaceMembers]:
        mine = uow.workspaces.list_for_user(actor.user_id)
        members = uow.workspaces.members([w.id for w, _ in mine])
        return [WorkspaceMembers(w, role, members[w.id]) for w, role in mine]

    return db.read(work)
