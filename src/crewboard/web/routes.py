"""Every route of the web app, and its static files."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from crewboard.web import events
from crewboard.web.context import local
from crewboard.web.pages import memory
from crewboard.web.pages.artifacts import pages as artifact_pages
from crewboard.web.pages.board import board, board_tools, tasks, week
from crewboard.web.pages.github import settings as github_settings
from crewboard.web.pages.handoffs import pages as handoff_pages
from crewboard.web.pages.identity import signin as auth
from crewboard.web.pages.identity import tokens
from crewboard.web.pages.notifications import pages as notification_pages
from crewboard.web.pages.oauth import connections, consent
from crewboard.web.pages.projects import settings, state, team
from crewboard.web.pages.review import activity, inbox, rules, search, start
from crewboard.web.pages.sessions.routes import ROUTES as SESSION_ROUTES
from crewboard.web.pages.specs import attachments as spec_attachments
from crewboard.web.pages.specs import files as spec_files
from crewboard.web.pages.webhooks import pages as webhook_pages

STATIC = Path(__file__).parent / "static"


async def switch(request: Request) -> Response:
    """The project switcher (a GET form): open the same page in the chosen project."""
    key = request.query_params.get("key", "").upper()
    referer = request.headers.get("referer", "")
    page = "inbox"
    if "/p/" in referer:
        parts = referer.split("/p/", 1)[1].split("/", 1)
        # The same area (board, memory, …), not the same item: ids differ between projects.
        page = parts[1].split("?", 1)[0].split("/", 1)[0] if len(parts) > 1 else "inbox"
        if page == "settings":
            page = "settings/project"
    return RedirectResponse(local(f"/p/{key}/{page}"), status_code=303)


def web_routes() -> list[BaseRoute]:
    return [
        *auth.ROUTES,
        Route("/switch", switch, methods=["GET"]),
        Route("/events", events.events, methods=["GET"]),
        *inbox.ROUTES,
        *start.ROUTES,
        *board.ROUTES,
        *board_tools.ROUTES,
        *tasks.ROUTES,
        *memory.ROUTES,
        *state.ROUTES,
        *week.ROUTES,
        *team.ROUTES,
        *activity.ROUTES,
        *tokens.ROUTES,
        *consent.ROUTES,
        *connections.ROUTES,
        *settings.ROUTES,
        *github_settings.ROUTES,
        *webhook_pages.ROUTES,
        *rules.ROUTES,
        *search.ROUTES,
        *spec_files.ROUTES,
        *spec_attachments.ROUTES,
        *artifact_pages.ROUTES,
        *handoff_pages.ROUTES,
        *notification_pages.ROUTES,
        *SESSION_ROUTES,
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
