"""Every route of the spec session pages, for the web app's route list."""

from __future__ import annotations

from starlette.routing import BaseRoute

from crewboard.web.pages.sessions import decisions, models, pages, stream

ROUTES: list[BaseRoute] = [
    *stream.ROUTES,
    *decisions.ROUTES,
    *pages.ROUTES,
    *models.ROUTES,
]
