"""Web pages: the project state page, the week, the team and the activity stream."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.errors import LimitExceeded, RevisionConflict, ValidationFailed
from crewboard.services.board import week
from crewboard.services.projects import projects, state, team
from crewboard.services.review import activity
from crewboard.web.context import Page, project_routes
from crewboard.web.pages.memory import number_field, show_conflict, text_field

STATE_VERSIONS = 20
ACTIVITY_SHOWN = 100
ZONES = (
    "UTC",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Helsinki",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "America/Sao_Paulo",
    "Asia/Kolkata",
    "Asia/Shanghai",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Pacific/Auckland",
)
SEAT_KINDS = ("ai", "human")
EFFORTS = ("low", "medium", "high")
PROJECT_ROLES = ("read", "write", "admin")


# --- state page ------------------------------------------------------------------------------


def _state_page(page: Page, *, draft: str | None = None, status_code: int = 200) -> Response:
    current = state.get_project_state(page.db, page.actor, project=page.project_key)
    versions = state.list_state_versions(
        page.db, page.actor, project=page.project_key, limit=STATE_VERSIONS
    )
    return page.render(
        "state.html",
        status_code=status_code,
        title="State",
        state=current,
        versions=versions,
        draft=current["content"] if draft is None else draft,
        limit=state.MAX_STATE_LENGTH,
    )


def state_page(page: Page) -> Response:
    """The state page rendered, an edit form at its revision, and its version history."""
    return _state_page(page)


def state_save(page: Page) -> Response:
    """Save the state page's text from the revision the person read."""
    assert page.project is not None  # noqa: S101 - a project route
    content = text_field(page, "content")
    try:
        saved = state.update_project_state(
            page.db,
            page.actor,
            project=page.project_key,
            workspace_id=page.project["workspaceId"],
            content=content,
            expected_revision=number_field(page, "revision"),
        )
    except RevisionConflict as conflict:
        show_conflict(page, conflict, "the state page")
        return _state_page(page, draft=content, status_code=409)
    return page.redirect(page.path("state"), notice=f"Saved as revision {saved['revision']}.")


def state_restore(page: Page) -> Response:
    """Save an earlier version's text as the newest revision."""
    assert page.project is not None  # noqa: S101 - a project route
    restored = state.restore_state_version(
        page.db,
        page.actor,
        project=page.project_key,
        revision=number_field(page, "restore"),
        expected_revision=number_field(page, "revision"),
        workspace_id=page.project["workspaceId"],
    )
    return page.redirect(
        page.path("state"),
        notice=f"Restored revision {restored['restoredFrom']} as revision {restored['revision']}.",
    )


# --- week ------------------------------------------------------------------------------------


def _week_param(page: Page) -> date | None:
    """Raises: ValidationFailed when `week` is not a YYYY-MM-DD date."""
    raw = page.param("week").strip()
    if not raw:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ValidationFailed.field(
            "week", f"must be a date like 2026-03-02; got {raw!r}."
        ) from None


def duration(minutes: int) -> str:
    """Minutes as people read them: 45 min, 3 h, 2 h 15 min."""
    hours, rest = divmod(int(minutes), 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def _clock(moment: str) -> str:
    return datetime.fromisoformat(moment).strftime("%H:%M")


def _names(team_page: dict[str, Any]) -> dict[str, str]:
    """Display names of the team's roles and people by id."""
    names = {p["userId"]: p["displayName"] for p in team_page["people"]}
    return names | {r["id"]: r["name"] for r in team_page["roles"]}


def _days(answer: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    days = []
    for day in answer["days"]:
        pieces = [
            {
                **piece,
                "time": f"{_clock(piece['from'])}–{_clock(piece['to'])}",
                "length": duration(piece["minutes"]),
                "who": names.get(piece["assigneeId"] or "", "unassigned"),
            }
            for piece in day["inProgress"]
        ]
        days.append(
            {
                **day,
                "label": date.fromisoformat(day["date"]).strftime("%A %d %B"),
                "pieces": pieces,
                "people": duration(day["minutes"]["people"]),
                "ai": duration(day["minutes"]["ai"]),
            }
        )
    return days


def week_page(page: Page) -> Response:
    """Monday to Sunday in a chosen time zone: due tasks and in-progress stretches per day."""
    zone = page.param("tz").strip() or "UTC"
    try:
        answer = week.get_week(
            page.db, page.actor, week=_week_param(page), time_zone=zone, project=page.project_key
        )
    except (ValidationFailed, LimitExceeded) as refused:
        # A mistyped zone or date: back to this week in UTC, saying what was wrong.
        return page.redirect(page.path("week"), error=refused.message)
    names = _names(team.get_team_page(page.db, page.actor, project=page.project_key))
    monday = date.fromisoformat(answer["week"]["from"])
    return page.render(
        "week.html",
        title="Week",
        answer=answer,
        days=_days(answer, names),
        zone=zone,
        zones=ZONES,
        previous=(monday - timedelta(days=7)).isoformat(),
        following=(monday + timedelta(days=7)).isoformat(),
        totals={k: duration(v) for k, v in answer["minutes"].items()},
        workers=[
            {
                **a,
                "who": names.get(a["assigneeId"], a["assigneeId"]),
                "length": duration(a["minutes"]),
            }
            for a in answer["assignees"]
        ],
    )


# --- team ------------------------------------------------------------------------------------


def team_page(page: Page) -> Response:
    """Roles (seats) and people; admins also get the forms that change them."""
    found = team.get_team_page(page.db, page.actor, project=page.project_key)
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
    added = team.add_team_role(
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
    archived = team.archive_team_role(
        page.db, page.actor, project=page.project_key, role_id=page.request.path_params["role_id"]
    )
    return page.redirect(page.path("team"), notice=f"Archived the role {archived['name']}.")


def team_set_member(page: Page) -> Response:
    """Add a person to the project by email, or change their project role (project admins)."""
    email = page.field("email").strip()
    change = projects.set_project_member(
        page.db, page.actor, project=page.project_key, email=email, role=page.field("role")
    )
    return page.redirect(page.path("team"), notice=f"{email} now has the {change['role']} role.")


# --- activity --------------------------------------------------------------------------------


def _who(entry: dict[str, Any], names: dict[str, str]) -> str:
    actor = entry.get("actor") or {}
    name = names.get(str(actor.get("userId")), "someone")
    kind = actor.get("kind")
    if kind == "agent_token":
        return f"{name}'s agent"
    if kind == "personal_token":
        return f"{name} via MCP"
    return name


def activity_page(page: Page) -> Response:
    """The newest work-log entries and hand-in decisions; the list refreshes live."""
    entries, _ = activity.list_activity(
        page.db, page.actor, project=page.project_key, limit=ACTIVITY_SHOWN
    )
    names = _names(team.get_team_page(page.db, page.actor, project=page.project_key))
    shown = [{**entry, "who": _who(entry, names)} for entry in entries]
    return page.render("activity.html", title="Activity", entries=shown)


ROUTES: list[BaseRoute] = [
    *project_routes("state", get=state_page, post=state_save),
    *project_routes("state/restore", post=state_restore),
    *project_routes("week", get=week_page),
    *project_routes("team", get=team_page),
    *project_routes("team/roles", post=team_add_role),
    *project_routes("team/roles/{role_id}/archive", post=team_archive_role),
    *project_routes("team/members", post=team_set_member),
    *project_routes("activity", get=activity_page),
]
