"""Projects: create, list, describe, update, archive, delete, and who has a role on them.

Each use case returns a typed record (`domain/projects`); `contract/projects/present.py` puts
it into words for every door. A keyed write (create) keeps its answer in the idempotency
ledger so that a retry gets the same one, so it takes `answer`, the door's wording."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from crewboard.domain.identity.access import Role, Scope, lower_role, parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import (
    DEFAULT_COLLECTIONS,
    MAX_DESCRIPTION,
    MAX_GOAL,
    MAX_NAME,
    MAX_PHASE,
    MemberSet,
    Project,
    ProjectAccess,
    ProjectArchiving,
    ProjectDeleted,
    ProjectDescription,
    ProjectPage,
    ProjectStatus,
    ProjectType,
    ViewedProject,
    check_collections,
    check_project_key,
)
from crewboard.domain.validation import check_email, check_text, check_time_zone
from crewboard.errors import AlreadyExists, NotFound, ValidationFailed
from crewboard.services.events import record_project_event
from crewboard.services.idempotency import Ack, KeyedResult, do_keyed_write
from crewboard.services.identity.access import (
    ANY_WORKSPACE,
    WorkspaceRef,
    access_project,
    require_unlimited_person,
)
from crewboard.services.paging import check_page
from crewboard.services.views import project_view
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_PAGE = 200
MAX_PROJECT_Q = 200
PROJECT_SORTS = ("activity", "key")


def do_create_project(
    uow: UnitOfWork,
    actor: Actor,
    *,
    workspace_id: str | None,
    key: str,
    name: str,
    goal: str = "",
    phase: str = "",
    status: str = "active",
    description: str = "",
    type: str = "auto",
    collections: list[str] | None = None,
    idempotency_key: str | None = None,
    answer: Callable[[ViewedProject], dict[str, Any]],
) -> KeyedResult:
    """Create a project; its creator becomes its admin. `answer` words the new project.

    `workspace_id` is explicit: None puts the project in the actor's private space.

    Raises:
        PermissionDenied: the token lacks projects.admin, or is an agent, project-limited or
            role-capped token.
        NotFound: the workspace is not one the actor belongs to.
        AlreadyExists: the key is taken.
        ValidationFailed, LimitExceeded: on a bad field.
        IdempotencyConflict: the key was used for something else.
    """
    require_unlimited_person(actor, "Creating a project", Scope.PROJECTS_ADMIN)
    fields: dict[str, Any] = {
        "workspaceId": workspace_id,
        "key": check_project_key(key),
        "name": check_text("name", name, max_length=MAX_NAME, required=True),
        "goal": check_text("goal", goal, max_length=MAX_GOAL),
        "phase": check_text("phase", phase, max_length=MAX_PHASE),
        "status": parse_enum(status, ProjectStatus, "status"),
        "description": check_text("description", description, max_length=MAX_DESCRIPTION),
        "type": parse_enum(type, ProjectType, "type"),
        "collections": check_collections(
            list(DEFAULT_COLLECTIONS) if collections is None else collections
        ),
    }

    def perform() -> Ack:
        if (
            workspace_id is not None
            and uow.workspaces.member_role(workspace_id, actor.user_id) is None
        ):
            raise NotFound(
                f"No workspace {workspace_id!r} is open to you; pass null for your private space.",
                {"resource": "workspace", "ref": workspace_id},
            )
        if uow.projects.key_taken(fields["key"]):
            raise AlreadyExists(
                f"The project key {fields['key']} is taken; choose another.", {"key": fields["key"]}
            )
        project = Project(
            id=new_id("prj"),
            workspace_id=workspace_id,
            key=fields["key"],
            name=fields["name"],
            goal=fields["goal"],
            phase=fields["phase"],
            status=fields["status"],
            description=fields["description"],
            type=fields["type"],
            collections=fields["collections"],
            archived_at=None,
            created_at=uow.now,
            updated_at=uow.now,
        )
        uow.projects.add(project, owner_user_id=actor.user_id)
        uow.projects.set_member(project.id, actor.user_id, Role.ADMIN, uow.now)
        view = project_view(project, Role.ADMIN)
        record_project_event(uow, actor, "project.created", project, {"project": view})
        return Ack(
            body=answer(ViewedProject(project, Role.ADMIN)),
            resource_type="project",
            resource_id=project.id,
            project_id=project.id,
        )

    return do_keyed_write(
        uow,
        actor,
        key=idempotency_key,
        operation="create_project",
        arguments={**fields, "collections": list(fields["collections"])},
        perform=perform,
    )


def create_project(
    db: Database, actor: Actor, *, answer: Callable[[ViewedProject], dict[str, Any]], **fields: Any
) -> KeyedResult:
    """Create a project (see `do_create_project` for the fields and refusals)."""
    return db.write(lambda uow: do_create_project(uow, actor, answer=answer, **fields))


def list_projects(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    workspace_id: str | None = None,
    filter_workspace: bool = False,
    include_archived: bool = True,
    q: str | None = None,
    sort: str = "activity",
    limit: int = 50,
    offset: int = 0,
) -> ProjectPage:
    """Projects the actor may open, each with its role there (after the token's cap), and the
    total: most recently active first (`sort` "activity"), or by key ("key"). `q`: each of
    its words in the key, name or description, whatever the case.

    Raises:
        ValidationFailed: limit outside 1-200, a negative offset, a q over 200 characters or
            an unknown sort.
        NotFound: `project` names one the actor cannot open.
    """
    check_page(limit, offset, MAX_PAGE)
    if sort not in PROJECT_SORTS:
        raise ValidationFailed.field("sort", f"{sort!r} is not a sort.", list(PROJECT_SORTS))
    if q is not None and len(q) > MAX_PROJECT_Q:
        raise ValidationFailed.field("q", f"at most {MAX_PROJECT_Q} characters.")
    if q is not None and "\x00" in q:  # PostgreSQL text cannot hold it
        raise ValidationFailed.field("q", "must not hold a NUL character.")
    words = tuple(dict.fromkeys(word.lower() for word in (q or "").split()))

    def work(uow: UnitOfWork) -> ProjectPage:
        only = access_project(uow, actor, project).project.id if project else actor.project_cap
        page = uow.projects.list_for_user(
            actor.user_id,
            only_project_id=only,
            workspace_id=workspace_id,
            filter_workspace=filter_workspace,
            include_archived=include_archived,
            words=words,
            by_activity=sort == "activity",
            limit=limit,
            offset=offset,
        )
        rows = [(p, lower_role(role, actor.role_cap)) for p, role in page.rows]
        return replace(page, rows=rows)

    return db.read(work)


def set_project_member(
    db: Database, actor: Actor, *, project: str, email: str, role: str
) -> MemberSet:
    """Give a person a role on a project, or change it (project admins only).

    Raises:
        NotFound: the project is not open to the actor, or no user has that email.
        PermissionDenied: the actor is not an admin there (or lacks projects.admin).
        ValidationFailed: unknown role.
    """
    new_role = parse_enum(role, Role, "role")
    address = check_email(email)

    def work(uow: UnitOfWork) -> MemberSet:
        access = access_project(uow, actor, project, scope=Scope.PROJECTS_ADMIN, role=Role.ADMIN)
        user = uow.users.get_by_email(address)
        if user is None:
            raise NotFound(f"No user with email {address}.", {"resource": "user", "email": address})
        uow.projects.set_member(access.project.id, user.id, new_role, uow.now)
        change = {"projectId": access.project.id, "userId": user.id, "role": str(new_role)}
        record_project_event(uow, actor, "project.member_set", access.project, change)
        return MemberSet(access.project.id, user.id, new_role)

    return db.write(work)


def remove_project_member(db: Database, actor: Actor, *, project: str, email: str) -> MemberSet:
    """Take a person's role on a project away (project admins only); their tokens and live
    streams of the project stop with it. The last admin stays.

    Raises:
        NotFound: the project is not open to the actor, or the person has no role on it.
        PermissionDenied: the actor is not an admin there (or lacks projects.admin).
        ValidationFailed: the person is the project's last admin.
    """
    address = check_email(email)

    def work(uow: UnitOfWork) -> MemberSet:
        access = access_project(uow, actor, project, scope=Scope.PROJECTS_ADMIN, role=Role.ADMIN)
        user = uow.users.get_by_email(address)
        role = None if user is None else uow.projects.member_role(access.project.id, user.id)
        if user is None or role is None:
            raise NotFound(
                f"{address} has no role on {access.project.key}.",
                {"resource": "member", "email": address},
            )
        admins = [u for u, r in uow.projects.members(access.project.id) if r is Role.ADMIN]
        if role is Role.ADMIN and len(admins) <= 1:
            raise ValidationFailed(
                f"{address} is the last admin of {access.project.key}; make someone else admin "
                "first.",
                {"field": "email", "email": address},
            )
        uow.projects.remove_member(access.project.id, user.id)
        record_project_event(
            uow,
            actor,
            "project.member_removed",
            access.project,
            {"projectId": access.project.id, "userId": user.id},
        )
        return MemberSet(access.project.id, user.id, None)

    return db.write(work)


def _project_fields(
    *,
    name: str | None = None,
    goal: str | None = None,
    phase: str | None = None,
    status: str | None = None,
    description: str | None = None,
    type: str | None = None,  # the wire name of the field
    collections: list[str] | None = None,
    shift_time_zone_a: str | None = None,
    shift_time_zone_b: str | None = None,
    notify_action_item_assignees: bool | None = None,
) -> dict[str, Any]:
    """Check the fields an update names; those left None stay as they are."""
    checks: dict[str, Any] = {
        "name": lambda v: check_text("name", v, max_length=MAX_NAME, required=True),
        "goal": lambda v: check_text("goal", v, max_length=MAX_GOAL),
        "phase": lambda v: check_text("phase", v, max_length=MAX_PHASE),
        "status": lambda v: parse_enum(v, ProjectStatus, "status"),
        "description": lambda v: check_text("description", v, max_length=MAX_DESCRIPTION),
        "type": lambda v: parse_enum(v, ProjectType, "type"),
        "collections": check_collections,
        "shift_zone_a": lambda v: check_time_zone("shiftTimeZoneA", v),
        "shift_zone_b": lambda v: check_time_zone("shiftTimeZoneB", v),
        "notify_assignees": bool,
    }
    given = {
        "name": name,
        "goal": goal,
        "phase": phase,
        "status": status,
        "description": description,
        "type": type,
        "collections": collections,
        "shift_zone_a": shift_time_zone_a,
        "shift_zone_b": shift_time_zone_b,
        "notify_assignees": notify_action_item_assignees,
    }
    return {field: checks[field](value) for field, value in given.items() if value is not None}


HANDOFF_FIELDS = ("shift_zone_a", "shift_zone_b", "notify_assignees")


def with_handoffs(uow: UnitOfWork, view: dict[str, Any]) -> dict[str, Any]:
    """A project's wire form (`project_view`) with how its handoffs go: the zones of its two
    shifts, and whether action items' assignees are told; as events and the settings screen
    carry it."""
    settings = uow.projects.handoff_settings(view["id"])
    return {
        **view,
        "shiftTimeZones": {"a": settings.zone_a, "b": settings.zone_b},
        "notifyActionItemAssignees": settings.notify_assignees,
    }


def _access_as_admin(
    uow: UnitOfWork, actor: Actor, project: str, workspace_id: WorkspaceRef
) -> ProjectAccess:
    """Project settings need the projects.admin scope and the admin role."""
    return access_project(
        uow, actor, project, scope=Scope.PROJECTS_ADMIN, role=Role.ADMIN, workspace_id=workspace_id
    )


def update_project(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, **changes: Any
) -> ViewedProject:
    """Change a project's name, goal, phase, status, description, type, collections, the
    time zones of its two shifts (A hands over to B; handoffs take their day from A) or
    whether action items' assignees are told.

    Raises:
        NotFound, PermissionDenied: as `access_project` (needs projects.admin and admin role).
        ValidationFailed, LimitExceeded: on a bad field, or when nothing is to change.
    """
    fields = _project_fields(**changes)
    if not fields:
        raise ValidationFailed.field(
            "fields",
            "name at least one field to change.",
            [
                *("name", "goal", "phase", "status", "description", "type", "collections"),
                *("shiftTimeZoneA", "shiftTimeZoneB", "notifyActionItemAssignees"),
            ],
        )

    handoff = {name: fields.pop(name) for name in HANDOFF_FIELDS if name in fields}

    def work(uow: UnitOfWork) -> ViewedProject:
        access = _access_as_admin(uow, actor, project, workspace_id)
        if fields:
            uow.projects.update(access.project.id, uow.now, **fields)
        if handoff:
            now = uow.projects.handoff_settings(access.project.id)
            changed = replace(
                now, zone_a=handoff.get("shift_zone_a", now.zone_a),
                zone_b=handoff.get("shift_zone_b", now.zone_b),
                notify_assignees=handoff.get("notify_assignees", now.notify_assignees),
            )  # fmt: skip
            uow.projects.set_handoff_settings(access.project.id, changed, uow.now)
        updated = uow.projects.get(access.project.id)
        assert updated is not None  # noqa: S101 - updated in this transaction
        view = with_handoffs(uow, project_view(updated, access.role))
        record_project_event(
            uow,
            actor,
            "project.updated",
            updated,
            {"changed": sorted([*fields, *handoff]), "project": view},
        )
        return ViewedProject(updated, access.role, uow.projects.handoff_settings(updated.id))

    return db.write(work)


def set_project_archived(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, archived: bool
) -> ProjectArchiving:
    """Archive or unarchive; doing it to a project already in that state changes nothing.

    Raises:
        NotFound, PermissionDenied: as `access_project` (needs projects.admin and admin role).
    """

    def work(uow: UnitOfWork) -> ProjectArchiving:
        access = _access_as_admin(uow, actor, project, workspace_id)
        current = access.project
        if current.archived == archived:
            return ProjectArchiving(ViewedProject(current, access.role), changed=False)
        uow.projects.update(current.id, uow.now, archived_at=uow.now if archived else None)
        updated = uow.projects.get(current.id)
        assert updated is not None  # noqa: S101 - updated in this transaction
        view = project_view(updated, access.role)
        record_project_event(
            uow,
            actor,
            "project.archived" if archived else "project.unarchived",
            updated,
            {"project": view},
        )
        return ProjectArchiving(ViewedProject(updated, access.role), changed=True)

    return db.write(work)


def delete_project(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef
) -> ProjectDeleted:
    """Delete an archived project and everything in it. An active project is refused, never archived.

    Raises:
        NotFound, PermissionDenied: as `access_project` (needs projects.admin and admin role).
        ValidationFailed: the project is not archived.
    """

    def work(uow: UnitOfWork) -> ProjectDeleted:
        access = _access_as_admin(uow, actor, project, workspace_id)
        doomed = access.project
        if not doomed.archived:
            raise ValidationFailed(
                f"Project {doomed.key} is active; archive it first (archive_project), then delete it.",
                {"field": "projectId", "archived": False},
            )
        uow.projects.delete(doomed.id)
        uow.blobs.sweep()  # the bytes of its spec files, attachments and artifacts
        record_project_event(
            uow, actor, "project.deleted", doomed, {"projectId": doomed.id, "key": doomed.key}
        )
        return ProjectDeleted(doomed.id, doomed.key)

    return db.write(work)


def describe_project(
    db: Database, actor: Actor, ref: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> ProjectDescription:
    """One project with the viewer's role, its people and roles counted, and its state page revision.

    Raises:
        NotFound: when the actor cannot open the project.
    """

    return db.read(lambda uow: project_description(uow, actor, ref, workspace_id))


def project_description(
    uow: UnitOfWork, actor: Actor, ref: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> ProjectDescription:
    """`describe_project` inside a caller's transaction (a screen adds what higher areas hold).

    Raises:
        NotFound: when the actor cannot open the project.
    """
    access = access_project(uow, actor, ref, workspace_id=workspace_id)
    project_id = access.project.id
    return ProjectDescription(
        project=ViewedProject(
            access.project, access.role, uow.projects.handoff_settings(project_id)
        ),
        members=len(uow.projects.members(project_id)),
        team_roles=len(uow.team.list(project_id)),
        state_revision=uow.state.get(project_id).revision,
    )
