"""DNS-rebinding protection: check Host and Origin on every HTTP request before anything runs."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from crewboard.config import Settings


class HostOriginGuard:
    """Refuse a request whose Host is not ours (421) or whose Origin is foreign (403).

    A browser page on another site can reach a server on localhost through a rebound DNS
    name; it cannot forge the Host it used nor hide its Origin on a cross-origin request.
    """

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.any_host = "*" in settings.allowed_hosts
        self.any_origin = "*" in settings.allowed_origins
        self.hosts = settings.accepted_hosts()
        self.origins = settings.accepted_origins()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if not self.any_host and _hostname(host) not in self.hosts:
            await _refuse(send, 421, f"The Host {host!r} is not one this server answers to.")
            return
        origin = headers.get("origin")
        if (
            origin is not None
            and not self.any_origin
            and origin.rstrip("/").lower() not in self.origins
        ):
            await _refuse(send, 403, f"Requests from the origin {origin!r} are not accepted.")
            return
        await self.app(scope, receive, send)


def _hostname(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps(
        {"error": {"code": "PERMISSION_DENIED", "message": message, "details": {}}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
