"""Every HTTP request's id, its access log line (JSON logs) and the web door's count.

The id is the caller's `X-Request-Id` when that is a sane one (at most 64 characters of
letters, digits, `.`, `_` and `-`: a proxy's or a client's own), else a new random one. It is
sent back in `X-Request-Id` on every answer (errors and event streams too), and set in
`REQUEST_ID` for the request's time, so each log line written meanwhile (in a worker thread
too: anyio copies the context there) carries it.
"""

from __future__ import annotations

import logging
import os
import re
import time
from contextvars import ContextVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from crewboard.http.metrics import INTERNAL, OK, Metrics, Record

REQUEST_ID: ContextVar[str | None] = ContextVar("crewboard_request_id", default=None)
HEADER = b"x-request-id"
_SANE = re.compile(rb"[A-Za-z0-9._-]{1,64}")
OPS_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
PAGE = "page"  # the web door's operation for a request no route took

access_log = logging.getLogger("crewboard.access")

# The web door's outcome for an answer's status (a page says why in HTML, not with a code).
_STATUS_OUTCOMES = {
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "REVISION_CONFLICT",
    413: "LIMIT_EXCEEDED",
    421: "PERMISSION_DENIED",
    422: "VALIDATION",
    429: "LIMIT_EXCEEDED",
    503: "UNAVAILABLE",
}


def request_id_from(headers: list[tuple[bytes, bytes]]) -> str:
    """The caller's sane X-Request-Id, else a new one (16 hex digits)."""
    for name, value in headers:
        if name == HEADER:
            if _SANE.fullmatch(value):
                return value.decode("ascii")
            break
    return os.urandom(8).hex()


def door_of(path: str) -> str:
    """Which door a path belongs to: mcp, rest, ops (probes, metrics) or web (the rest)."""
    if path == "/mcp":
        return "mcp"
    if path.startswith("/api/"):
        return "rest"
    if path in OPS_PATHS:
        return "ops"
    return "web"


def web_outcome(status: int) -> str:
    if status < 400:
        return OK
    if status >= 500 and status != 503:
        return INTERNAL
    return _STATUS_OUTCOMES.get(status, "VALIDATION" if status < 500 else INTERNAL)


class RequestTracking:
    """Outside everything: the id, the access log line (when `access_log` is on) and, with
    metrics on, the web door's requests by route."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics | None, log_access: bool) -> None:
        self.app = app
        self.log_access = log_access
        self.web: Record | None = metrics.door("web") if metrics is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(scope["headers"])
        header = (HEADER, request_id.encode("ascii"))
        status = 500  # what the client gets if the app ends without answering

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                # No route of the app sets the header itself: add it (in place when it can).
                headers = message.get("headers")
                if isinstance(headers, list):
                    headers.append(header)
                else:
                    message["headers"] = [*(headers or ()), header]
            await send(message)

        token = REQUEST_ID.set(request_id)
        start = time.perf_counter()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - start
            self._done(scope, status, seconds, request_id)
            REQUEST_ID.reset(token)

    def _done(self, scope: Scope, status: int, seconds: float, request_id: str) -> None:
        path: str = scope["path"]
        if self.web is None and not self.log_access:
            return
        door = door_of(path)
        if self.web is not None and door == "web":
            route = scope.get("route")
            template = getattr(route, "path", None) if route is not None else None
            self.web(template if isinstance(template, str) else PAGE, web_outcome(status), seconds)
        if self.log_access:
            access_log.info(
                "%s %s %s",
                scope["method"],
                path,
                status,
                extra={
                    "method": scope["method"],
                    "path": path,
                    "status": status,
                    "duration_ms": round(seconds * 1000, 2),
                    "door": door,
                    "request_id": request_id,
                },
            )
