"""OAuth 2.1 for MCP clients: the rules that need no I/O.

Crewboard is its own authorization server for its `/mcp` resource. A person approves a client
on the consent page; the approval is a *grant* that acts like one of that person's personal
tokens, capped to what was approved. The client holds short-lived access tokens and a refresh
token that rotates on every use. Every secret (code, access token, refresh token, client
secret) is shown once and stored as its SHA-256, like API tokens.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from crewboard.domain.identity.access import Role, Scope

ACCESS_PREFIX = "cba_"  # an OAuth access token: a public prefix, not a secret
REFRESH_PREFIX = "cbr_"
CODE_PREFIX = "cbc_"
CLIENT_SECRET_PREFIX = "cbk_"  # noqa: S105 - a public prefix
REQUEST_ID_BYTES = 24

ACCESS_TTL = timedelta(minutes=30)
REFRESH_TTL = timedelta(days=30)
CODE_TTL = timedelta(minutes=5)
REQUEST_TTL = timedelta(minutes=15)  # a consent page left open this long asks again

MAX_CLIENT_NAME = 200
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
MAX_STATE_LENGTH = 1000
MAX_CHALLENGE_LENGTH = 128  # RFC 7636: a S256 challenge is 43 characters

# Client ID metadata documents (a client identified by the https URL of its metadata).
DOCUMENT_MAX_BYTES = 5 * 1024
DOCUMENT_TIMEOUT_SECONDS = 5.0
DOCUMENT_MIN_CACHE = timedelta(minutes=5)
DOCUMENT_MAX_CACHE = timedelta(hours=24)
DOCUMENT_DEFAULT_CACHE = timedelta(hours=1)

# What a client gets when it asks for no scope: everything but administering projects and
# teams, which a person grants only when a client asks for them by name.
DEFAULT_SCOPES = (
    Scope.READ,
    Scope.TASKS_MANAGE,
    Scope.DRAFTS_CREATE,
    Scope.MESSAGES_WRITE,
    Scope.SPECS_WRITE,
)
LOOPBACK_REDIRECT_HOSTS = ("127.0.0.1", "[::1]", "localhost")


class GrantState:
    ACTIVE = "active"
    REVOKED = "revoked"


@dataclass(frozen=True)
class OAuthClient:
    """A client: registered here (RFC 7591) or known by the URL of its metadata document."""

    id: str
    kind: str  # "registered" | "document"
    name: str
    redirect_uris: tuple[str, ...]
    auth_method: str  # "none" | "client_secret_post" | "client_secret_basic"
    scope: str | None
    metadata: dict[str, object]
    created_at: datetime
    expires_at: datetime | None = None  # a document's cache lifetime

    @property
    def redirect_host(self) -> str:
        hosts = sorted({urlsplit(uri).hostname or "" for uri in self.redirect_uris})
        return ", ".join(hosts)


@dataclass(frozen=True)
class Grant:
    """A person's approval of a client: what it may do, until revoked."""

    id: str
    user_id: str
    client_id: str
    client_name: str
    scopes: frozenset[Scope]
    resource: str
    project_id: str | None
    role: Role | None
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None
    revoked_reason: str | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class PendingAuthorization:
    """An authorization request waiting for the person's answer on the consent page."""

    id: str
    client_id: str
    redirect_uri: str
    redirect_explicit: bool
    scopes: tuple[str, ...]
    resource: str
    code_challenge: str
    state: str | None
    created_at: datetime
    expires_at: datetime


def parse_scopes(raw: str | list[str] | None) -> list[str]:
    """Space-separated scopes as OAuth sends them, without repeats, in the order given."""
    items = raw.split() if isinstance(raw, str) else list(raw or [])
    seen: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.append(item)
    return seen


def is_loopback_redirect(uri: str) -> bool:
    """A native app's redirect to itself (RFC 8252 §7.3): plain http on a loopback address."""
    parts = urlsplit(uri)
    # The host without the port; `[::1]` alone ends in its bracket (its colons are no port).
    host = parts.netloc if parts.netloc.endswith("]") else parts.netloc.rsplit(":", 1)[0]
    return parts.scheme == "http" and host in LOOPBACK_REDIRECT_HOSTS


def redirect_uri_matches(registered: str, asked: str) -> bool:
    """Exact string match, except that a loopback redirect may use any port (RFC 8252 §7.3)."""
    if registered == asked:
        return True
    if not (is_loopback_redirect(registered) and is_loopback_redirect(asked)):
        return False
    a, b = urlsplit(registered), urlsplit(asked)
    return (a.hostname, a.path, a.query) == (b.hostname, b.path, b.query) and not b.fragment


def redirect_uri_problem(uri: str) -> str | None:
    """Why a redirect URI cannot be registered, or None. https, loopback http, or a private
    scheme of a native app (`com.example.app:/cb`); never a fragment."""
    if len(uri) > MAX_URI_LENGTH:
        return f"is longer than {MAX_URI_LENGTH} characters"
    parts = urlsplit(uri)
    if parts.fragment:
        return "has a fragment (#…), which a redirect URI may not have"
    if parts.scheme == "https":
        return None if parts.hostname else "has no host"
    if parts.scheme == "http":
        return None if is_loopback_redirect(uri) else "uses http off loopback; use https"
    if not parts.scheme or parts.scheme in ("javascript", "data", "file", "vbscript"):
        return "has no usable scheme"
    return None if "." in parts.scheme else "uses a private scheme without a dot (com.example.app)"


def document_url_problem(url: str) -> str | None:
    """Why a URL cannot be a client ID metadata document's address, or None."""
    parts = urlsplit(url)
    checks = (
        (len(url) > MAX_URI_LENGTH, f"is longer than {MAX_URI_LENGTH} characters"),
        (parts.scheme != "https", "must use https"),
        (not parts.hostname, "has no host"),
        (parts.path in ("", "/"), "must have a path"),
        (
            bool(parts.fragment or parts.username or parts.password),
            "may not carry a fragment or credentials",
        ),
        ("/./" in parts.path or "/../" in parts.path, "may not hold dot segments"),
    )
    return next((problem for failed, problem in checks if failed), None)


def is_public_address(address: str) -> bool:
    """True for an address on the public internet: not loopback, private, link-local,
    multicast, reserved or unspecified (an IPv4-mapped IPv6 address counts as its IPv4)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def cache_lifetime(cache_control: str | None) -> timedelta:
    """How long a fetched metadata document is kept: its max-age within our bounds."""
    lifetime = DOCUMENT_DEFAULT_CACHE
    for directive in (cache_control or "").lower().split(","):
        name, _, value = directive.strip().partition("=")
        if name in ("no-store", "no-cache"):
            return DOCUMENT_MIN_CACHE  # whatever max-age says beside it
        if name == "max-age" and value.strip().isdigit():
            lifetime = timedelta(seconds=int(value.strip()))
    return max(DOCUMENT_MIN_CACHE, min(DOCUMENT_MAX_CACHE, lifetime))
