"""The one access module: every service asks here whether an actor may touch a project.

A project the actor has no role on does not exist for it (NOT_FOUND, the same answer as for a
project that really does not exist). A refusal for a known project names what is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from crewboard.domain.identity.access import Role, Scope, TokenKind, lower_role, missing_permission
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project, ProjectAccess
from crewboard.errors import HumanIdentityRequired, NotFound, PermissionDenied, ValidationFailed
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


class _AnyWorkspace:
    """Marker for reads that do not name a workspace (writes must name one, null included)."""

    def __repr__(self) -> str:
        return "ANY_WORKSPACE"


ANY_WORKSPACE = _AnyWorkspace()
WorkspaceRef = str | None | _AnyWorkspace


def not_open(resource: str, hint: str, noun: str = "") -> Callable[[str], NotFound]:
    """How to refuse a `resource` by ref that does not exist or is not open to the actor (the
    same answer for both), with a `hint` of where to look instead."""

    def missing(ref: str) -> NotFound:
        return NotFound(
            f"No {noun or resource} {ref!r} is open to you; {hint}",
            {"resource": resource, "ref": ref},
        )

    return missing


project_not_found = not_open("project", "list_projects shows the projects you can use.")


def access_project(
    uow: UnitOfWork,
    actor: Actor,
    ref: str,
    *,
    scope: Scope = Scope.READ,
    role: Role = Role.READ,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> ProjectAccess:
    """Look a project up by id (`prj_…`) or key (`CRW`) and check the actor may act on it.

    Writes pass the `workspace_id` the caller named (None: private) and it must match.

    Raises:
        NotFound: no such project, or the actor has no role on it (the two look the same).
        PermissionDenied: the token lacks `scope`, or the effective role is below `role`.
        ValidationFailed: `workspace_id` is not the project's.
    """
    found = None if "\x00" in ref else uow.projects.get_with_role(ref, actor.user_id)
    return check_project_access(
        actor, ref, found, scope=scope, role=role, workspace_id=workspace_id
    )


def check_project_access(
    actor: Actor,
    ref: str,
    found: tuple[Project, Role | None] | None,
    *,
    scope: Scope = Scope.READ,
    role: Role = Role.READ,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> ProjectAccess:
    """`access_project`'s checks on a project (and the actor's role on it) already looked up,
    for a caller that read it together with other things in one statement.

    Raises:
        NotFound, PermissionDenied, ValidationFailed: as `access_project`.
    """
    if found is None:
        raise project_not_found(ref)
    project, member_role = found
    if member_role is None or (actor.project_cap is not None and actor.project_cap != project.id):
        raise project_not_found(ref)
    effective = lower_role(member_role, actor.role_cap)
    missing = missing_permission(actor.scopes, effective, scope, role)
    if missing is not None:
        raise PermissionDenied(
            f"This action {missing}. Ask a project admin for access, or use a token with that "
            "scope.",
            {
                "projectId": project.id,
                "requiredScope": str(scope),
                "requiredRole": str(role),
                "role": str(effective),
                "scopes": sorted(actor.scopes),
            },
        )
    check_workspace(project, workspace_id)
    return ProjectAccess(project=project, role=effective, member_role=member_role)


class InProject(Protocol):
    """Anything that belongs to one project."""

    @property
    def project_id(self) -> str: ...


Owned = TypeVar("Owned", bound=InProject)


def access_owned(
    uow: UnitOfWork,
    actor: Actor,
    ref: str,
    lookup: Callable[[str], Owned | None],
    missing: Callable[[str], NotFound],
    *,
    role: Role = Role.READ,
    scope: Scope = Scope.READ,
) -> tuple[Owned, Project]:
    """A thing looked up by id, with its project, when the actor may act on that project.

    Raises:
        NotFound: `missing(ref)` for no such thing and for one whose project is not open to
            the actor (the two look the same).
        PermissionDenied: the token lacks `scope`, or the role is below `role`.
    """
    found = None if "\x00" in ref else lookup(ref)
    if found is None:
        raise missing(ref)
    try:
        access = access_project(uow, actor, found.project_id, scope=scope, role=role)
    except NotFound:
        raise missing(ref) from None
    return found, access.project


def check_workspace(project: Project, workspace_id: WorkspaceRef) -> None:
    """Refuse a request that names another workspace than the project's.

    Raises:
        ValidationFailed: naming the project's real workspace (null: the private space).
    """
    if isinstance(workspace_id, _AnyWorkspace) or workspace_id == project.workspace_id:
        return
    where = (
        "a private project"
        if project.workspace_id is None
        else f"in workspace {project.workspace_id}"
    )
    expected = "null" if project.workspace_id is None else project.workspace_id
    raise ValidationFailed(
        f"workspaceId: project {project.key} is {where}; pass workspaceId {expected}.",
        {"field": "workspaceId", "expected": project.workspace_id, "given": workspace_id},
    )


def require_scope(actor: Actor, scope: Scope) -> None:
    """Check a scope for actions that are not on one project (e.g. creating a project).

    Raises:
        PermissionDenied: naming the missing scope.
    """
    missing = missing_permission(actor.scopes, Role.ADMIN, scope, Role.READ)
    if missing is not None:
        raise PermissionDenied(
            f"This action {missing}.",
            {"requiredScope": str(scope), "scopes": sorted(actor.scopes)},
        )


def limit_of(actor: Actor) -> str | None:
    """Why the actor cannot act past any one project (None: it can): an agent token, a token
    limited to one project, or one whose role is capped below admin."""
    token = actor.token
    if token is None:
        return None
    if token.kind is TokenKind.AGENT:
        return "it is an agent token (agent tokens act inside their one project)"
    if token.project_id is not None:
        return f"it is limited to project {token.project_id}"
    if token.role is not None and token.role is not Role.ADMIN:
        return f"its role is capped at {token.role}"
    return None


def require_unlimited_person(actor: Actor, action: str, scope: Scope) -> None:
    """Check an action that reaches past any one project (creating a project).

    Only a person, or a personal token with `scope`, no project limit and no role cap below
    admin may take it: a limited token must never act outside the project it was given.

    Raises:
        PermissionDenied: saying which limit of the token stands in the way.
    """
    require_scope(actor, scope)
    token = actor.token
    reason = limit_of(actor)
    if token is not None and reason is not None:
        raise PermissionDenied(
            f"{action} needs a personal token with no project limit and no role cap; this "
            f"token cannot, because {reason}. Use such a token, the web app or the operator CLI.",
            {
                "tokenKind": str(token.kind),
                "tokenProjectId": token.project_id,
                "tokenRole": None if token.role is None else str(token.role),
            },
        )


def require_person(actor: Actor, action: str) -> None:
    """Refuse agent tokens for actions a person must take under their own name.

    Raises:
        HumanIdentityRequired: when the actor is an agent token.
    """
    if actor.is_agent:
        raise HumanIdentityRequired(
            f"{action} needs a person's identity; an agent token cannot do it. "
            "Use a personal token or the web app.",
            {"tokenKind": "agent"},
        )


def require_signed_in_person(actor: Actor, action: str) -> None:
    """Refuse every token for decisions only a person makes (accepting a hand-in or a card).

    A token may be held by an AI whatever its kind and scopes, so decisions are taken by a
    person signed in to the web app or at the operator CLI.

    Raises:
        PermissionDenied: when the actor calls through a token.
    """
    if actor.token is not None:
        raise PermissionDenied(
            f"{action} is a person's decision and is never taken through a token (an AI may "
            "hold it). Decide in the web app's inbox or with the operator CLI.",
            {"tokenKind": str(actor.token.kind), "decision": action},
        )


MAX_OPEN_PROJECTS = 200  # projects one cross-project read looks at


def open_projects(
    uow: UnitOfWork, actor: Actor, project: str | None, workspace_id: WorkspaceRef
) -> dict[str, Any]:
    if project is not None:
        access = access_project(uow, actor, project, workspace_id=workspace_id)
        return {access.project.id: access.project}
    page = uow.projects.list_for_user(
        actor.user_id,
        only_project_id=actor.project_cap,
        workspace_id=None if workspace_id is ANY_WORKSPACE else workspace_id,  # type: ignore[arg-type]
        filter_workspace=workspace_id is not ANY_WORKSPACE,
        include_archived=False,
        limit=MAX_OPEN_PROJECTS,
        offset=0,
    )
    return {p.id: p for p, _ in page.rows}


def highest_role(db: Database, actor: Actor) -> Role | None:
    """The highest project role the actor can act with anywhere (its token's cap applied), or
    None when it has no project: what decides which tools it is shown."""

    def work(uow: UnitOfWork) -> Role | None:
        roles = uow.projects.roles_of(actor.user_id, only_project_id=actor.project_cap)
        if not roles:
            return None
        return lower_role(max(roles, key=lambda role: role.rank), actor.role_cap)

    return db.read(work)
