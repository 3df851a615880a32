"""Web pages: a project's settings and acceptance rules, and workspaces.

A project's settings live under /p/{KEY}/settings/project. Workspaces belong to the person, not
to a project: they live under /settings/workspaces.
"""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from crewboard.contract.projects import present
from crewboard.domain.identity.access import Role
from crewboard.domain.projects import ProjectStatus, ProjectType, WorkspaceRole
from crewboard.services.projects import workspaces as workspace_service
from crewboard.services.screens.settings import project_settings
from crewboard.web.context import Page, action, page, project_routes
from crewboard.web.zones import zone_choices

WORKSPACES = "/settings/workspaces"


# ---------------------------------------------------------------- project settings


def project_page(page_: Page) -> Response:
    """A project's settings (a form for admins, read-only for others) and its rules."""
    view = project_settings(page_.db, page_.actor, page_.project_key)
    project = present.viewed_project_view(view.project)
    return page_.render(
        "settings_project.html",
        title=f"{project['name']} settings",
        settings_view=view,
        details=project,
        is_admin=project.get("viewerRole") == str(Role.ADMIN),
        statuses=[str(s) for s in ProjectStatus],
        types=[str(t) for t in ProjectType],
        matches=view.rule_matches,
        here=page_.path("settings/project"),
        zone_choices=zone_choices(project.get("shiftTimeZones", {}).values()),
    )


def _given(page_: Page, name: str) -> str | None:
    """A field the form sent (None when it left it out: that setting stays as it is)."""
    return page_.field(name) if page_.form is not None and name in page_.form else None


def _collections(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def save_project(page_: Page) -> Response:
    """Save the settings form (the service refuses anyone below admin)."""
    assert page_.project is not None  # noqa: S101 - a project route
    collections = _given(page_, "collections")
    present.update_project(
        page_.db,
        page_.actor,
        project=page_.project_key,
        workspace_id=page_.project.get("workspaceId"),
        name=_given(page_, "name"),
        goal=_given(page_, "goal"),
        phase=_given(page_, "phase"),
        status=_given(page_, "status"),
        description=_given(page_, "description"),
        type=_given(page_, "type"),
        collections=_collections(collections) if collections is not None else None,
        shift_time_zone_a=_given(page_, "shift_time_zone_a"),
        shift_time_zone_b=_given(page_, "shift_time_zone_b"),
        notify_action_item_assignees=page_.has_field("notify_assignees")
        if page_.has_field("handoff_settings")
        else None,
    )
    return page_.redirect(page_.path("settings/project"), notice="Project settings saved.")


# ---------------------------------------------------------------- workspaces


def workspaces_page(page_: Page) -> Response:
    """The person's workspaces, a form for a new one, and adding members (workspace admins)."""
    rows = present.workspaces_with_members(page_.db, page_.actor)
    return page_.render(
        "settings_workspaces.html",
        title="Workspaces",
        workspaces=rows,
        admin=str(WorkspaceRole.ADMIN),
        workspace_roles=[str(r) for r in WorkspaceRole],
    )


def create_workspace(page_: Page) -> Response:
    """Create a workspace; its creator is its admin."""
    made = workspace_service.create_workspace(page_.db, page_.actor, name=page_.field("name"))
    return page_.redirect(WORKSPACES, notice=f"Workspace {made.name!r} created.")


def add_member(page_: Page) -> Response:
    """Add a person (by email) to a workspace, or change their role there."""
    email = page_.field("email").strip()
    role = workspace_service.add_workspace_member(
        page_.db,
        page_.actor,
        workspace_id=page_.request.path_params["workspace_id"],
        email=email,
        role=page_.field("role", str(WorkspaceRole.MEMBER)),
    )
    return page_.redirect(WORKSPACES, notice=f"{email} is a {role} of the workspace.")


ROUTES: list[BaseRoute] = [
    Route(WORKSPACES, page(workspaces_page), methods=["GET"]),
    Route(WORKSPACES, action(create_workspace), methods=["POST"]),
    Route(WORKSPACES + "/{workspace_id}/members", action(add_member), methods=["POST"]),
    *project_routes("settings/project", get=project_page, post=save_project),
]
