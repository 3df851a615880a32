"""DNS-rebinding protection: check Host and Origin on every HTTP request before anything runs."""

from __future__ import annotations

import ipaddress
import json
import re

from starlette.types import ASGIApp, Receive, Scope, Send

from crewboard.config import LOOPBACK_HOSTS, Settings

# host[:port] as a Host header or an origin's authority carries it: a DNS name or IPv4
# address, or an IPv6 address in brackets; nothing may follow but the port.
_AUTHORITY = re.compile(
    r"^(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?))(?::(?P<port>[0-9]{1,5}))?$"
)
_ORIGIN = re.compile(r"^(?P<scheme>https?)://(?P<authority>[^/?#@]+)$")


# Paths a sandboxed artifact preview loads its own files from. Its document has no origin,
# so the browser sends `Origin: null`; a read of these paths is served on the capability in the
# path alone (no session, nothing else of the app), so such a read is let through.
SANDBOXED_READS = ("/preview/",)


# The OAuth endpoints an app calls itself (not a person's browser session): they take no cookie
# and answer any origin, so a browser-based MCP client can connect (CORS allows it there).
CROSS_ORIGIN_PATHS = ("/oauth/token", "/oauth/register", "/oauth/revoke", "/.well-known/")


def _cross_origin_allowed(scope: Scope) -> bool:
    return str(scope.get("path", "")).startswith(CROSS_ORIGIN_PATHS)


def _sandboxed_read(scope: Scope) -> bool:
    return scope.get("method") in ("GET", "HEAD") and str(scope.get("path", "")).startswith(
        SANDBOXED_READS
    )


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
        # On loopback, a page on another local port (a proxy, the MCP Inspector) is local too.
        self.local_origins = settings.host.lower() in LOOPBACK_HOSTS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if not self.any_host and hostname(host) not in self.hosts:
            await _refuse(send, 421, f"The Host {host[:100]!r} is not one this server answers to.")
            return
        origin = headers.get("origin")
        if (origin == "null" and _sandboxed_read(scope)) or _cross_origin_allowed(scope):
            origin = None
        if origin is not None and not self.any_origin and not self._origin_ok(origin):
            await _refuse(send, 403, f"Requests from the origin {origin[:100]!r} are not accepted.")
            return
        await self.app(scope, receive, send)

    def _origin_ok(self, origin: str) -> bool:
        if origin.rstrip("/").lower() in self.origins:
            return True
        if not self.local_origins:
            return False
        match = _ORIGIN.match(origin.strip().lower())
        return match is not None and hostname(match["authority"]) in LOOPBACK_HOSTS


def hostname(authority: str) -> str | None:
    """The host of a `host[:port]` authority, lower case, IPv6 in brackets in its short form;
    None when it is not one (junk after a bracket, a bad port, a user part, a path)."""
    match = _AUTHORITY.match(authority.strip().lower())
    if match is None:
        return None
    port = match["port"]
    if port is not None and not 0 < int(port) <= 65535:
        return None
    if match["v6"] is None:
        return match["name"]
    try:
        return f"[{ipaddress.IPv6Address(match['v6']).compressed}]"
    except ValueError:
        return None


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
