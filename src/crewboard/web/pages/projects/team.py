"""Web pages: the team. Roles (seats) and people, and the admin forms that change them."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.contract.projects import present
from crewboard.web.context import Page, project_routes
from crewboard.web.forms import number_field

SEAT_KINDS = ("ai", "human")
EFFORTS = ("low", "medium", "high")
PROJECT_ROLES = ("read", "write", "admin")


# --- team helpers (also used by the week and activity pages) ---------------------------------


def team_names(team_page: dict[str, Any]) -> dict[str, str]:
    """Display names of the team's roles and people by id."""
    names = {p["userId"]: p["displayName"] for p in team_page["people"]}
    return names | {r["id"]: r["name"] for r in team_page["roles"]}


# --- team page -------------------------------------------------------------------------------


def team_page(page: Page) -> Response:
    """Roles (seats) and people; admins also get the forms that change them."""
    found = present.get_team_page(page.db, page.actor, project=page.project_key)
    return page.render(
        "team.html",
        title="Team",
        team=found,
        kinds=SEAT_KINDS,
        efforts=EFFORTS,
        project_roles=PROJECT_ROLES,
    )


def _optional(page: Page, name: str) -> str | None:
    value = page.field(name).strip()
    return value or None


def team_add_role(page: Page) -> Response:
    """Add a seat to the team (project admins)."""
    rank = page.field("rank").strip()
    added = present.add_team_role(
        page.db,
        page.actor,
        project=page.project_key,
        name=page.field("name").strip(),
        role=page.field("role").strip(),
        kind=page.field("kind") or "ai",
        member_email=_optional(page, "member_email"),
        model=_optional(page, "model"),
        effort=_optional(page, "effort"),
        rank=number_field(page, "rank") if rank else 0,
    )
    return page.redirect(page.path("team"), notice=f"Added the role {added['name']}.")


def team_archive_role(page: Page) -> Response:
    """Archive a seat (project admins)."""
    archived = present.archive_team_role(
        page.db, page.actor, project=page.project_key, role_id=page.request.path_params["role_id"]
    )
    return page.redirect(page.path("team"), notice=f"Archived the role {archived['name']}.")


def team_set_member(page: Page) -> Response:
    """Add a person to the project by email, or change their project role (project admins)."""
    email = page.field("email").strip()
    change = present.set_project_member(
        page.db, page.actor, project=page.project_key, email=email, role=page.field("role")
    )
    return page.redirect(page.path("team"), notice=f"{email} now has the {change['role']} role.")


def team_remove_member(page: Page) -> Response:
    """Take a person's role on the project away (project admins)."""
    email = page.field("email").strip()
    present.remove_project_member(page.db, page.actor, project=page.project_key, email=email)
    return page.redirect(page.path("team"), notice=f"{email} no longer has a role here.")


ROUTES: list[BaseRoute] = [
    *project_routes("team", get=team_page),
    *project_routes("team/roles", post=team_add_role),
    *project_routes("team/roles/{role_id}/archive", post=team_archive_role),
    *project_routes("team/members", post=team_set_member),
    *project_routes("team/members/remove", post=team_remove_member),
]
