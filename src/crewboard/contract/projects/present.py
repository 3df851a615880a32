"""Projects in words: the one place that turns the typed results of `services/projects` (and
the get_project screen) into the camelCase answers every door gives (MCP, REST, the CLI's
JSON, the web pages), and fits a project or the teams to an answer budget.

The functions named after a use case run it and word its result, with the service's own
arguments; the doors and the tests call those, so a use case answers alike everywhere.
"""

from __future__ import annotations

from typing import Any

from crewboard.contract.reply import compact, fit_rows
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import (
    MemberSet,
    ProjectArchiving,
    ProjectDeleted,
    ProjectDescription,
    ProjectPage,
    ProjectTeam,
    StatePage,
    StateRead,
    StateRestored,
    StateSaved,
    StateVersion,
    StateVersionPage,
    TeamPage,
    TeamRole,
    ViewedProject,
    WorkspaceMembers,
)
from crewboard.services.idempotency import KeyedResult
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.paging import next_offset
from crewboard.services.projects import projects, state, team, workspaces
from crewboard.services.projects.state import MAX_STATE_LENGTH as MAX_STATE_LENGTH  # noqa: PLC0414 - the doors' limits
from crewboard.services.projects.state import MAX_VERSIONS_PAGE as MAX_VERSIONS_PAGE  # noqa: PLC0414 - as above
from crewboard.services.projects.team import team_role_view, team_view
from crewboard.services.screens.project import ProjectOverview
from crewboard.services.text_windows import cut_texts, json_size, leading_rows
from crewboard.services.views import iso, project_view
from crewboard.storage.database import Database

PROJECT_TEXTS = ("description", "goal")
# Bytes each of get_project's lists may take (20 rows are ~2 KB; 20 of the longest paths or
# titles, ~11 KB): three of them leave the project most of the answer budget.
OVERVIEW_LIST_BUDGET = 12 * 1024

# --- views ---------------------------------------------------------------------------------


def viewed_project_view(viewed: ViewedProject) -> dict[str, Any]:
    """The project with the reader's `viewerRole` and, when the record carries them, how its
    handoffs go (the zones of its two shifts, whether action items' assignees are told)."""
    view = project_view(viewed.project, viewed.role)
    if viewed.handoffs is not None:
        view["shiftTimeZones"] = {"a": viewed.handoffs.zone_a, "b": viewed.handoffs.zone_b}
        view["notifyActionItemAssignees"] = viewed.handoffs.notify_assignees
    return view


def project_rows(page: ProjectPage) -> list[dict[str, Any]]:
    """Each project with its role and, when known, `lastActiveAt`: its newest change or event."""
    return [
        project_view(p, role)
        | ({"lastActiveAt": iso(at)} if (at := page.active_at.get(p.id)) else {})
        for p, role in page.rows
    ]


def fit_project(view: dict[str, Any], budget: int) -> dict[str, Any]:
    """A project's view within `budget` bytes: its long texts (the description, the goal) cut
    with descriptionTruncated/goalLength flags. Only text that is mostly escaped control
    characters comes near it (10,000 characters at six bytes each); the web app and REST show
    it whole."""
    bare = {**view, **{name: "" for name in PROJECT_TEXTS if name in view}}
    return cut_texts(view, PROJECT_TEXTS, budget - json_size(bare))


def description_view(found: ProjectDescription) -> dict[str, Any]:
    return {
        "project": viewed_project_view(found.project),
        "counts": {
            "members": found.members,
            "teamRoles": found.team_roles,
            "stateRevision": found.state_revision,
        },
    }


def overview_view(found: ProjectOverview) -> dict[str, Any]:
    """get_project's answer: the description, with the higher areas' counts and their newest
    active spec sessions, spec files and attachments (the counts say how many there are in
    all). Each list keeps the leading rows that fit OVERVIEW_LIST_BUDGET, so the three and the
    project fit one answer whatever their titles, paths and names hold."""
    view = description_view(found.description)
    view["counts"] |= {"specFiles": found.spec_files, "attachments": found.attachments,
                       "artifacts": found.artifacts,
                       "activeSessions": found.active_session_count}  # fmt: skip
    sessions = [
        {"id": s.id, "title": s.title, "status": s.status.value,
         "pendingAction": s.pending_action.value, "updatedAt": iso(s.updated_at)}
        for s in found.active_sessions
    ]  # fmt: skip
    files = [
        {"id": f.id, "path": f.path, "size": f.size, "updatedAt": iso(f.updated_at)}
        for f in found.newest_files
    ]
    items = [
        {"id": a.id, "name": a.name, "mediaType": a.media_type, "size": a.size,
         "updatedAt": iso(a.updated_at)}
        for a in found.newest_attachments
    ]  # fmt: skip
    view["activeSessions"] = fit_rows(sessions, OVERVIEW_LIST_BUDGET)
    view["specFiles"] = fit_rows(files, OVERVIEW_LIST_BUDGET)
    view["attachments"] = fit_rows(items, OVERVIEW_LIST_BUDGET)
    return view


def archiving_view(done: ProjectArchiving) -> dict[str, Any]:
    return {"project": viewed_project_view(done.project), "changed": done.changed}


def deleted_view(done: ProjectDeleted) -> dict[str, Any]:
    return {"deleted": True, "projectId": done.project_id, "key": done.key}


def member_view(change: MemberSet) -> dict[str, Any]:
    if change.role is None:
        return {"projectId": change.project_id, "userId": change.user_id, "removed": True}
    return {"projectId": change.project_id, "userId": change.user_id, "role": str(change.role)}


def state_view(page: StatePage) -> dict[str, Any]:
    return {
        "projectId": page.project_id,
        "content": page.content,
        "revision": page.revision,
        "updatedBy": page.updated_by,
        "updatedAt": iso(page.updated_at),
    }


def version_view(version: StateVersion) -> dict[str, Any]:
    return {
        "revision": version.revision,
        "content": version.content,
        "author": version.author,
        "createdAt": iso(version.created_at),
        "restoredFrom": version.restored_from,
    }


def state_read_view(read: StateRead) -> dict[str, Any]:
    return {**state_view(read.page), "canEdit": read.can_edit, "taskCounts": read.task_counts}


def state_saved_view(saved: StateSaved) -> dict[str, Any]:
    if saved.replayed:
        return {**state_view(saved.page), "saved": True, "replayed": True}
    return {**state_view(saved.page), "saved": True}


def restored_view(done: StateRestored) -> dict[str, Any]:
    return {**state_view(done.page), "restoredFrom": done.restored_from}


def version_page_view(page: StateVersionPage) -> dict[str, Any]:
    return {
        "versions": [version_view(v) for v in page.versions],
        "total": page.total,
        "nextOffset": next_offset(page.offset, len(page.versions), page.total),
    }


def team_page_view(page: TeamPage, actor: Actor) -> dict[str, Any]:
    """The team as its web page shows it: roles carry their member's display name; people
    carry their email only when the reader manages the team (`canManage`)."""
    found = page.team
    names = {user.id: user.display_name for user, _ in found.people}
    return {
        "projectId": found.project.id,
        "projectKey": found.project.key,
        "roles": [
            {**team_role_view(r), "memberName": names.get(r.member_user_id or "")}
            for r in found.roles
        ],
        "people": [
            {
                "userId": user.id,
                "displayName": user.display_name,
                "projectRole": str(role),
                "you": user.id == actor.user_id,
                **({"email": user.email} if page.can_manage else {}),
            }
            for user, role in found.people
        ],
        "canManage": page.can_manage,
    }


def fit_teams(teams: list[dict[str, Any]], room: int) -> tuple[list[dict[str, Any]], bool]:
    """The teams that fit in `room` bytes; a team too big keeps its leading roles (three
    quarters of what is left) and people, counting the rest in rolesTotal and peopleTotal."""
    kept: list[dict[str, Any]] = []
    for item in teams:
        size = len(compact(item).encode()) + 1
        if size <= room:
            kept.append(item)
            room -= size
            continue
        head = {k: v for k, v in item.items() if k not in ("roles", "people")}
        left = room - len(compact({**head, "roles": [], "people": []}).encode()) - 64
        if left <= 0:
            return kept, True
        roles = leading_rows(item["roles"], left * 3 // 4)
        people = leading_rows(item["people"], left - len(compact(roles).encode()))
        kept.append(
            {
                **head,
                "roles": roles,
                "rolesTotal": len(item["roles"]),
                "people": people,
                "peopleTotal": len(item["people"]),
            }
        )
        return kept, True
    return kept, False


def workspaces_view(found: list[WorkspaceMembers]) -> list[dict[str, Any]]:
    """The reader's workspaces with their role there and their members (for the web page:
    `created` stays a datetime)."""
    return [
        {
            "id": w.workspace.id,
            "name": w.workspace.name,
            "created": w.workspace.created_at,
            "role": str(w.role),
            "members": [
                {"userId": u.id, "displayName": u.display_name, "email": u.email, "role": str(r)}
                for u, r in w.members
            ],
        }
        for w in found
    ]


# --- the use cases, worded -----------------------------------------------------------------


def create_project(db: Database, actor: Actor, **fields: Any) -> KeyedResult:
    """`projects.create_project`; the body holds `project`."""
    return projects.create_project(
        db, actor, answer=lambda made: {"project": viewed_project_view(made)}, **fields
    )


def list_projects(db: Database, actor: Actor, **filters: Any) -> tuple[list[dict[str, Any]], int]:
    """`projects.list_projects`: the rows (each with its `viewerRole`) and the total."""
    page = projects.list_projects(db, actor, **filters)
    return project_rows(page), page.total


def describe_project(
    db: Database, actor: Actor, ref: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> dict[str, Any]:
    return description_view(projects.describe_project(db, actor, ref, workspace_id))


def update_project(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, **changes: Any
) -> dict[str, Any]:
    found = projects.update_project(
        db, actor, project=project, workspace_id=workspace_id, **changes
    )
    return {"project": viewed_project_view(found)}


def set_project_archived(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef, archived: bool
) -> dict[str, Any]:
    return archiving_view(
        projects.set_project_archived(
            db, actor, project=project, workspace_id=workspace_id, archived=archived
        )
    )


def delete_project(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef
) -> dict[str, Any]:
    return deleted_view(
        projects.delete_project(db, actor, project=project, workspace_id=workspace_id)
    )


def set_project_member(
    db: Database, actor: Actor, *, project: str, email: str, role: str
) -> dict[str, Any]:
    return member_view(
        projects.set_project_member(db, actor, project=project, email=email, role=role)
    )


def remove_project_member(
    db: Database, actor: Actor, *, project: str, email: str
) -> dict[str, Any]:
    return member_view(projects.remove_project_member(db, actor, project=project, email=email))


def get_project_state(
    db: Database, actor: Actor, *, project: str, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> dict[str, Any]:
    return state_read_view(
        state.get_project_state(db, actor, project=project, workspace_id=workspace_id)
    )


def update_project_state(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    content: str,
    expected_revision: int,
) -> dict[str, Any]:
    return state_saved_view(
        state.update_project_state(
            db,
            actor,
            project=project,
            workspace_id=workspace_id,
            content=content,
            expected_revision=expected_revision,
        )
    )


def list_state_versions(
    db: Database, actor: Actor, *, project: str, limit: int = 20, offset: int = 0
) -> dict[str, Any]:
    return version_page_view(
        state.list_state_versions(db, actor, project=project, limit=limit, offset=offset)
    )


def restore_state_version(
    db: Database,
    actor: Actor,
    *,
    project: str,
    revision: int,
    expected_revision: int,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> dict[str, Any]:
    return restored_view(
        state.restore_state_version(
            db,
            actor,
            project=project,
            revision=revision,
            expected_revision=expected_revision,
            workspace_id=workspace_id,
        )
    )


def list_team(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> list[dict[str, Any]]:
    """Each open project's (or one project's) team, marking the reader `you`."""
    found: list[ProjectTeam] = team.list_team(db, actor, project=project, workspace_id=workspace_id)
    return [team_view(t, actor.user_id) for t in found]


def add_team_role(db: Database, actor: Actor, *, project: str, **fields: Any) -> dict[str, Any]:
    seat: TeamRole = team.add_team_role(db, actor, project=project, **fields)
    return team_role_view(seat)


def archive_team_role(db: Database, actor: Actor, *, project: str, role_id: str) -> dict[str, Any]:
    return team_role_view(team.archive_team_role(db, actor, project=project, role_id=role_id))


def get_team_page(db: Database, actor: Actor, *, project: str) -> dict[str, Any]:
    return team_page_view(team.get_team_page(db, actor, project=project), actor)


def workspaces_with_members(db: Database, actor: Actor) -> list[dict[str, Any]]:
    return workspaces_view(workspaces.workspaces_with_members(db, actor))
