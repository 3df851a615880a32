"""What keeps the web app safe in a browser: strict headers and CSRF checks (the sign-in
throttle is `crewboard.http.throttle`, which the OAuth registration shares)."""

from __future__ import annotations

import re
import secrets
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# No inline script or style anywhere, nothing from other origins, never framed.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
}

# A CSP source for an origin (scheme://host[:port]) or a native app's private scheme (com.x.app:).
_ORIGIN_SOURCE = re.compile(r"[a-z][a-z0-9+.-]*://(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?")
_PRIVATE_SCHEME_SOURCE = re.compile(r"[a-z][a-z0-9+-]*\.[a-z0-9+.-]+:")


def policy_sending_forms_to(target: str) -> str:
    """The strict policy, but letting the page's forms lead on to `target`'s origin.

    Chromium checks `form-action` on the redirect that answers a form too, so a page whose
    form's answer is a redirect to another site (the OAuth consent page, back to the app)
    names that site. Anything that is not plainly an origin or a private scheme keeps the
    policy as it is (the browser then stops the redirect: the safe way to fail).
    """
    parts = urlsplit(target)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        source = f"{scheme}://{parts.netloc.lower()}"
        allowed = _ORIGIN_SOURCE.fullmatch(source) is not None
    else:
        source = f"{scheme}:"
        allowed = _PRIVATE_SCHEME_SOURCE.fullmatch(source) is not None
    return CSP.replace("form-action 'self'", f"form-action 'self' {source}") if allowed else CSP


class SecurityHeaders:
    """Add the strict headers to every response that does not set its own (and, behind a load
    balancer, which node answered)."""

    def __init__(self, app: ASGIApp, node_name: str = "") -> None:
        self.app = app
        self.node = node_name

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    if name not in headers:
                        headers[name] = value
                if self.node:
                    headers["x-crewboard-node"] = self.node
            await send(message)

        await self.app(scope, receive, send_with_headers)


def cross_site(request: Request) -> bool:
    """True when the browser says the request comes from another site.

    Fetch Metadata first (every current browser sends Sec-Fetch-Site); without it, an Origin
    that is not this server's own. HostOriginGuard has already refused foreign Origins it knows.
    """
    headers: Headers = request.headers
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = headers.get("origin")
    if origin is None:
        return False
    own = f"{request.url.scheme}://{request.url.netloc}".lower()
    return origin.rstrip("/").lower() != own and origin.rstrip("/").lower() not in (
        request.app.state.settings.accepted_origins()
    )


def same_token(expected: str, given: str | None) -> bool:
    return given is not None and secrets.compare_digest(expected.encode(), given.encode())
