"""Web pages: search from anywhere. /p/{KEY}/search?q=… lists what matches in the project's
tasks, hand-ins, memory, comments, spec files, artifacts and handoffs; `kind` pages through one kind; `region=1` answers only
the results region, which the Ctrl/⌘-K dialog (static/search.js) shows as a person types."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.domain.validation import parse_whole
from crewboard.errors import ValidationFailed
from crewboard.services.screens import search
from crewboard.web.context import Page, project_routes
from crewboard.web.wording import human_message

# What each kind is called: one result, several, and the heading of its group.
KIND_NAMES = {
    "tasks": ("task", "tasks", "Tasks"),
    "handins": ("hand-in", "hand-ins", "Hand-ins"),
    "memory": ("memory record", "memory records", "Memory"),
    "comments": ("comment", "comments", "Comments"),
    "specs": ("spec file", "spec files", "Spec files"),
    "artifacts": ("artifact", "artifacts", "Artifacts"),
    "handoffs": ("handoff", "handoffs", "Handoffs"),
}


def search_page(page: Page) -> Response:
    """The results of one search (a hint when there is nothing to search for yet); a bad
    query is shown beside the search box, the typed text kept in it."""
    q = page.param("q")
    kind = page.param("kind") or None
    results: search.SearchResults | None = None
    error = None
    try:
        offset = parse_whole("offset", page.param("offset") or "0", maximum=search.MAX_OFFSET)
        results = search.search_project(
            page.db, page.actor, project=page.project_key, q=q.strip(), kind=kind, offset=offset
        )
    except ValidationFailed as refused:
        error = human_message(refused)
    region_only = page.param("region") == "1"
    return page.render(
        "search_results.html" if region_only else "search.html",
        status_code=400 if error else 200,
        title=f"Search: {q.strip()}" if q.strip() else "Search",
        q=q,
        kind=kind if kind in KIND_NAMES else None,
        results=results,
        error=error,
        names=KIND_NAMES,
        page_size=search.PAGE,
    )


ROUTES: list[BaseRoute] = [
    *project_routes("search", get=search_page),
]
