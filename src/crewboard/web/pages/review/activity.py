"""Web pages: the activity stream. The newest work-log entries and hand-in decisions, live."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.services.projects import team
from crewboard.services.review import activity
from crewboard.web.context import Page, project_routes
from crewboard.web.pages.projects.team import team_names

ACTIVITY_SHOWN = 100


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
    names = team_names(team.get_team_page(page.db, page.actor, project=page.project_key))
    shown = [{**entry, "who": _who(entry, names)} for entry in entries]
    return page.render("activity.html", title="Activity", entries=shown)


ROUTES: list[BaseRoute] = [
    *project_routes("activity", get=activity_page),
]
