"""The ASGI application factory. Nothing is built at import time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio import to_thread
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from crewboard import __version__
from crewboard.api import live
from crewboard.api.errors import error_response
from crewboard.api.oauth import oauth_routes
from crewboard.api.openapi import openapi_document
from crewboard.api.routes import routes as api_routes
from crewboard.config import Settings
from crewboard.errors import InternalError, MethodNotAllowed, NotFound
from crewboard.mcp.catalogue import Catalogue
from crewboard.mcp.mount import McpDoor
from crewboard.security import HostOriginGuard
from crewboard.services.live import Broker
from crewboard.services.notifications.mailer import Mailer
from crewboard.services.sessions.runner import SessionRunner
from crewboard.services.specs.tasks_md import install as install_tasks_md
from crewboard.storage.database import Database
from crewboard.web.context import error_page, public_error_page
from crewboard.web.routes import STATIC, web_routes
from crewboard.web.security import SecurityHeaders

API_PREFIX = "/api/v1/"
FAVICON = STATIC / "favicon.svg"
_ONE_DAY = {"cache-control": "public, max-age=86400"}


async def healthz(request: Request) -> JSONResponse:
    db: Database = request.app.state.db
    try:
        await to_thread.run_sync(db.ping)
    except Exception as error:
        return JSONResponse(
            {"status": "unavailable", "database": db.dialect, "error": type(error).__name__},
            status_code=503,
        )
    return JSONResponse({"status": "ok", "version": __version__, "database": db.dialect})


async def not_found(request: Request, exc: Exception) -> Response:
    """An unknown path: under /api/v1 in the REST error shape; a page people asked for as a
    styled page with a way back; anything else (MCP, static files) as plain text."""
    if not request.url.path.startswith(API_PREFIX):
        if not _wants_page(request):
            return _plain(exc)
        return await error_page(
            request,
            404,
            "Page not found",
            "There is no page at this address. It may have moved, or the link may be mistyped.",
        )
    return error_response(
        NotFound(
            f"No route {request.url.path!r}; /api/v1/openapi.json lists every route.",
            {"resource": "route", "path": request.url.path},
        )
    )


async def not_allowed(request: Request, exc: Exception) -> Response:
    if not request.url.path.startswith(API_PREFIX):
        return _plain(exc)
    allowed = getattr(exc, "headers", None) or {}
    response = error_response(
        MethodNotAllowed(
            f"{request.method} is not a method of {request.url.path}; "
            f"it takes {allowed.get('Allow', 'other methods')}.",
            {"method": request.method, "allowed": allowed.get("Allow", "")},
        )
    )
    response.headers.update(allowed)
    return response


async def server_error(request: Request, _exc: Exception) -> Response:
    """An unhandled failure (the server logs it): the REST error shape under /api/v1, a styled
    page for a page, plain text otherwise. Touches no database: it may be what failed."""
    if request.url.path.startswith(API_PREFIX):
        return error_response(InternalError("Internal error; the server has logged it."))
    if not _wants_page(request):
        return PlainTextResponse("Internal error; the server has logged it.", status_code=500)
    return public_error_page(
        500,
        "Something went wrong",
        "The server could not finish this page and has logged why. Try again in a moment.",
        back="/inbox",
        back_label="Back to your inbox",
    )


def _wants_page(request: Request) -> bool:
    """A browser's page request: GET of a path outside the machine doors, asking for HTML."""
    path = request.url.path
    machine = path == "/mcp" or path.startswith(
        ("/static/", "/.well-known/", "/events", "/oauth/token", "/oauth/register", "/oauth/revoke")
    )
    return (
        request.method in ("GET", "HEAD")
        and not machine
        and "text/html" in request.headers.get("accept", "")
    )


async def favicon(_request: Request) -> Response:
    return FileResponse(FAVICON, media_type="image/svg+xml", headers=_ONE_DAY)


def _plain(exc: Exception) -> Response:
    """Starlette's own answer, for paths outside the REST API."""
    status = getattr(exc, "status_code", 500)
    detail = getattr(exc, "detail", "Error")
    return PlainTextResponse(str(detail), status_code=status, headers=getattr(exc, "headers", None))


def create_app(
    settings: Settings, *, database: Database | None = None, catalogue: Catalogue | None = None
) -> Starlette:
    """Build the app for `settings`.

    `database` lets a caller share one it already opened (and keeps owning it); otherwise the
    app opens one here (no connection is made until the first request) and its lifespan
    disposes of it. `catalogue` replaces the MCP tool catalogue (benchmarks add a no-op tool).
    """
    db = database or Database.from_settings(settings)
    install_tasks_md(db)  # board status changes rewrite the boxes of tasks.md files
    door = McpDoor(db, settings, catalogue)

    broker = Broker(db)  # the live streams' one reader of the event log
    mailer = Mailer.from_settings(db, settings)  # None: no SMTP server, email off
    # Spec session turns queued in the database; None: this node runs none (others do).
    runner = SessionRunner(db, settings) if settings.session_runners > 0 else None

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            async with door.running(), anyio.create_task_group() as tasks:
                tasks.start_soon(broker.run)
                if mailer is not None:
                    tasks.start_soon(mailer.run)
                if runner is not None:
                    tasks.start_soon(runner.run)
                yield
                tasks.cancel_scope.cancel()
        finally:
            if database is None:
                db.dispose()

    spec = openapi_document(settings.public_url)

    async def openapi(_request: Request) -> JSONResponse:
        return JSONResponse(spec)

    app = Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/favicon.ico", favicon, methods=["GET"]),
            Route("/api/v1/openapi.json", openapi, methods=["GET"]),
            *door.routes(),
            *oauth_routes(db, settings),
            *live.ROUTES,
            *api_routes(),
            *web_routes(),
        ],
        middleware=[
            Middleware(SecurityHeaders, node_name=settings.node_name),
            Middleware(HostOriginGuard, settings=settings),
        ],
        lifespan=lifespan,
        exception_handlers={404: not_found, 405: not_allowed, Exception: server_error},
    )
    app.state.settings = settings
    app.state.db = db
    app.state.broker = broker
    app.state.mailer = mailer
    app.state.runner = runner
    return app
