"""The ASGI application factory. Nothing is built at import time."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio import to_thread
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from crewboard import __version__
from crewboard.api import live
from crewboard.api.errors import error_response
from crewboard.api.oauth import oauth_routes
from crewboard.api.openapi import openapi_document
from crewboard.api.routes import routes as api_routes
from crewboard.config import Settings
from crewboard.contract.catalogue import Catalogue
from crewboard.errors import InternalError, MethodNotAllowed, NotFound, Unavailable
from crewboard.http.metrics import Metrics, metrics_route
from crewboard.http.request_id import RequestTracking
from crewboard.mcp.mount import McpDoor
from crewboard.security import HostOriginGuard
from crewboard.services.board.claim_lapses import ClaimSweeper
from crewboard.services.live import Broker
from crewboard.services.notifications.mailer import Mailer
from crewboard.services.sessions.code import CodeBridges
from crewboard.services.sessions.runner import SessionRunner
from crewboard.services.specs.tasks_md import install as install_tasks_md
from crewboard.services.supervisor import DatabaseProbe, Loop, Supervisor
from crewboard.services.webhooks.dispatcher import Dispatcher
from crewboard.services.webhooks.sending import configure_from as configure_webhooks
from crewboard.storage import migrate
from crewboard.storage.database import Database
from crewboard.storage.outages import DATABASE_ERRORS, unavailable
from crewboard.web.context import error_page, public_error_page
from crewboard.web.routes import STATIC, web_routes
from crewboard.web.security import SecurityHeaders

log = logging.getLogger(__name__)

API_PREFIX = "/api/v1/"
FAVICON = STATIC / "favicon.svg"
_ONE_DAY = {"cache-control": "public, max-age=86400"}


async def healthz(request: Request) -> JSONResponse:
    """Liveness: the process answers and its background loops' supervisor runs. It touches no
    database (a node that cannot reach its database is alive, only not ready: /readyz)."""
    supervisor: Supervisor = request.app.state.supervisor
    db: Database = request.app.state.db
    if not supervisor.running:
        return JSONResponse(
            {"status": "unavailable", "database": db.dialect, "error": "LoopsStopped"},
            status_code=503,
        )
    return JSONResponse({"status": "ok", "version": __version__, "database": db.dialect})


async def readyz(request: Request) -> JSONResponse:
    """Readiness: 200 while this node can take traffic (its database answers within a couple
    of seconds with the schema revision this version needs, and no background loop is
    failing), else 503 naming what failed (`database`, `migrations`, `loops`, `loop:<name>`),
    so a load balancer takes the node out and puts it back by itself. The one question to
    the database reads its schema revision: that is the ping."""
    supervisor: Supervisor = request.app.state.supervisor
    probe: DatabaseProbe = request.app.state.probe
    failed: list[str] = []
    database: dict[str, object] = {"ok": True}
    migrations: dict[str, object] = {"ok": None, "head": await _head()}
    if (problem := await probe.check()) is not None:
        database = {"ok": False, "error": problem}
        failed.append("database")
    else:
        supervisor.nudge()  # a loop backing off from an outage tries again now
        migrations.update(ok=probe.answer == migrations["head"], current=probe.answer)
        if not migrations["ok"]:
            failed.append("migrations")
    if not supervisor.running:
        failed.append("loops")
    failed += [f"loop:{name}" for name in supervisor.failing()]
    body = {
        "status": "unavailable" if failed else "ready",
        "failed": failed,
        "database": database,
        "migrations": migrations,
        "loops": supervisor.view(),
    }
    headers = {"retry-after": str(Unavailable.retry_after), "cache-control": "no-store"}
    return JSONResponse(body, status_code=503 if failed else 200, headers=headers)


async def _head() -> str | None:
    """This version's newest schema revision (read from the scripts once per process)."""
    return await to_thread.run_sync(migrate.head_revision)


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


async def server_error(request: Request, exc: Exception) -> Response:
    """An unhandled failure (the server logs it): the REST error shape under /api/v1, a styled
    page for a page, plain text otherwise. The database out of reach is not a bug: 503 with
    Retry-After instead of 500. Touches no database: it may be what failed."""
    if (outage := unavailable(exc)) is not None:
        return _unavailable(request, outage)
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


async def database_error(request: Request, exc: Exception) -> Response:
    """A failure of the database layer that escaped a door: an outage answers 503 with one log
    line (no traceback per request while the database is away); anything else is a bug,
    logged with its traceback and answered as `server_error` does."""
    if (outage := unavailable(exc)) is not None:
        log.warning("%s %s: %s", request.method, request.url.path, outage.details["cause"])
        return _unavailable(request, outage)
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return await server_error(request, exc)


def _unavailable(request: Request, outage: Unavailable) -> Response:
    retry = {"retry-after": str(outage.retry_after)}
    browser = "text/html" in request.headers.get("accept", "") and not _machine(request)
    if request.url.path.startswith(API_PREFIX) or not browser:
        # The REST error shape for machines (MCP clients read the status and the body).
        return error_response(outage)
    page = public_error_page(
        503,
        "Back in a moment",
        "The server cannot reach its database just now. Wait a few seconds and reload; if you "
        "were sending a form, check whether it went through before sending it again.",
        back="/inbox",
        back_label="Back to your inbox",
    )
    page.headers.update(retry)
    return page


def _wants_page(request: Request) -> bool:
    """A browser's page request: GET of a path outside the machine doors, asking for HTML."""
    return (
        request.method in ("GET", "HEAD")
        and not _machine(request)
        and "text/html" in request.headers.get("accept", "")
    )


def _machine(request: Request) -> bool:
    """A path of the machine doors (MCP, static files, OAuth endpoints, event streams)."""
    path = request.url.path
    return path == "/mcp" or path.startswith(
        ("/static/", "/.well-known/", "/events", "/oauth/token", "/oauth/register", "/oauth/revoke")
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
    broker = Broker(  # the live streams' one reader of the event log
        db,
        max_streams=settings.live_streams,
        per_person=settings.live_streams_per_person,
        per_project=settings.live_streams_per_project,
    )
    metrics = Metrics(db, broker) if settings.metrics == "on" else None
    door = McpDoor(db, settings, catalogue, record=metrics.door("mcp") if metrics else None)
    mailer = Mailer.from_settings(db, settings)  # None: no SMTP server, email off
    # Spec session turns queued in the database; None: this node runs none (others do).
    # The turns' way to a person's code (their `crewboard reverse`), through the database.
    code = CodeBridges(db, settings)
    broker.listen_also(code.channel, code.heard)  # other nodes' calls and answers, at once
    runner = SessionRunner(db, settings, code=code) if settings.session_runners > 0 else None

    configure_webhooks(db, settings)  # the address policy, timeouts and retry window
    # Sends each webhook the project's events from the log; woken by the broker, which hears
    # local commits and other nodes' (LISTEN), so the dispatcher keeps no connection of its own.
    dispatcher = Dispatcher(db, workers=settings.webhook_workers)
    broker.on_events(dispatcher.wake)

    supervisor = Supervisor()  # keeps the loops running through database outages
    loops: dict[str, Loop] = {
        "live": broker.run,
        # Leases that ran out: every node looks; one records each lapse.
        "claims": ClaimSweeper(db, settings.claim_sweep_interval).run,
        "webhooks": dispatcher.run,
    }
    if mailer is not None:
        loops["mail"] = mailer.run
    if runner is not None:
        loops["sessions"] = runner.run

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            # The supervisor never ends but by cancellation: a loop's failure cannot reach
            # this task group and stop the MCP session manager with it.
            async with door.running(), anyio.create_task_group() as tasks:
                tasks.start_soon(supervisor.run, loops)
                yield
                tasks.cancel_scope.cancel()
        finally:
            if database is None:
                db.dispose()

    spec = openapi_document(settings.public_url)

    async def openapi(_request: Request) -> JSONResponse:
        return JSONResponse(spec)

    token = settings.metrics_token.get_secret_value() if settings.metrics_token else None
    app = _App(
        node_name=settings.node_name,
        metrics=metrics,
        log_access=settings.log_format == "json" and settings.access_log == "on",
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            *([metrics_route(metrics, token)] if metrics is not None else []),
            Route("/favicon.ico", favicon, methods=["GET"]),
            Route("/api/v1/openapi.json", openapi, methods=["GET"]),
            *door.routes(),
            *oauth_routes(db, settings),
            *live.ROUTES,
            *api_routes(),
            *web_routes(),
        ],
        middleware=[Middleware(HostOriginGuard, settings=settings)],
        lifespan=lifespan,
        exception_handlers={
            404: not_found,
            405: not_allowed,
            **dict.fromkeys(DATABASE_ERRORS, database_error),
            Exception: server_error,
        },
    )
    app.state.settings = settings
    app.state.db = db
    app.state.broker = broker
    app.state.webhooks = dispatcher
    app.state.mailer = mailer
    app.state.runner = runner
    app.state.code_bridges = code
    app.state.supervisor = supervisor
    app.state.probe = DatabaseProbe(db, ask=lambda: migrate.stored_revision(db))
    app.state.metrics = metrics
    app.state.count_rest = metrics.door("rest") if metrics is not None else None
    return app


class _App(Starlette):
    """Starlette with RequestTracking and SecurityHeaders outside everything, its error
    handler included: every answer (a 500 from the handler, a 503, a 404, a stream, MCP)
    carries the strict headers, `X-Crewboard-Node` and `X-Request-Id`, and is logged and
    counted. (As user middleware they would sit inside ServerErrorMiddleware and miss the
    handler's answers.)"""

    def __init__(
        self, *, node_name: str, metrics: Metrics | None, log_access: bool, **kwargs: Any
    ) -> None:
        self.node_name = node_name
        self.metrics = metrics
        self.log_access = log_access
        super().__init__(**kwargs)

    def build_middleware_stack(self) -> ASGIApp:
        inner = SecurityHeaders(super().build_middleware_stack(), node_name=self.node_name)
        return RequestTracking(inner, metrics=self.metrics, log_access=self.log_access)
