"""OAuth 2.1 for MCP clients: the rules that need no I/O.

Crewboard is its own authorization server for its `/mcp` resource. A person approves a client
on the consent page; the approval is a *grant* that acts like one of that person's personal
tokens, capped to what was approved. The client holds short-lived access tokens and a refresh
token that rotates on every use. Every secret (code, access token, refresh token, client
secret) is shown once and stored as its SHA-256, like API tokens.
"""

from __future__ import annotations

import ipaddress
import re
import string
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import SplitResult, urlsplit

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
MIN_CHALLENGE_LENGTH = 43
MAX_SCOPE_LENGTH = 500  # a client's registered scope, as its column holds it
MAX_CLIENT_ID_LENGTH = MAX_URI_LENGTH  # a metadata document's URL is its client ID
MAX_REQUEST_ID_LENGTH = 64

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
LOOPBACK_REDIRECT_HOSTS = ("127.0.0.1", "::1", "localhost")  # as a URL parser reads the host
# What an RFC 3986 URI is made of (percent-encoded bytes included); anything else is refused.
_URI_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%")
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:")
_VSCHAR = re.compile(r"[\x20-\x7e]*")  # RFC 6749 appendix A: what a state may hold
_CHALLENGE = re.compile(r"[A-Za-z0-9._~-]*")  # RFC 7636 §4.2


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


def state_problem(state: str) -> str | None:
    """Why an authorization request's `state` cannot be kept, or None."""
    if len(state) > MAX_STATE_LENGTH:
        return f"is longer than {MAX_STATE_LENGTH} characters"
    if _VSCHAR.fullmatch(state) is None:
        return "may hold only printable ASCII characters (RFC 6749)"
    return None


def challenge_problem(challenge: str) -> str | None:
    """Why a PKCE `code_challenge` cannot be kept, or None (RFC 7636: 43 to 128 characters of
    letters, digits and `-._~`)."""
    if len(challenge) > MAX_CHALLENGE_LENGTH:
        return f"is longer than {MAX_CHALLENGE_LENGTH} characters"
    if len(challenge) < MIN_CHALLENGE_LENGTH or _CHALLENGE.fullmatch(challenge) is None:
        return (
            f"must be {MIN_CHALLENGE_LENGTH} to {MAX_CHALLENGE_LENGTH} characters of letters, "
            "digits, '-', '.', '_' and '~' (RFC 7636)"
        )
    return None


def is_storable_key(value: str, max_length: int) -> bool:
    """Whether a client-given id (a client ID, a consent request's id) can be looked up at
    all: within its column and free of control characters (PostgreSQL refuses a NUL)."""
    return len(value) <= max_length and _VSCHAR.fullmatch(value) is not None


def registered_scope(scope: str | None, known: list[str]) -> str | None:
    """A client's scope as stored: the names this server knows, each once, in order."""
    names = [name for name in parse_scopes(scope) if name in known]
    return " ".join(names)[:MAX_SCOPE_LENGTH] or None


def _uri_problem(uri: str) -> str | None:
    """Why `uri` cannot be read the same way by every URL parser, or None: over the length
    limit, a character outside RFC 3986 (whitespace, a control character, a backslash,
    non-ASCII text), a scheme not in lowercase, user information before the host (the host
    would be read from it by some), a percent-encoded host or a bad IPv6 literal or port."""
    checks = (
        (len(uri) > MAX_URI_LENGTH, f"is longer than {MAX_URI_LENGTH} characters"),
        (
            any(char not in _URI_CHARACTERS for char in uri),
            "holds a character a URI may not (whitespace, a control character, a backslash "
            "or non-ASCII text)",
        ),
        (
            _SCHEME.match(uri) is None,
            "has no scheme in lowercase letters (https:, http: or a private one)",
        ),
    )
    problem = next((problem for failed, problem in checks if failed), None)
    if problem is not None:
        return problem
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - reading it checks the port
    except ValueError:
        return "is not a well-formed URI (its host or port cannot be read)"
    return _authority_problem(parts)


def _authority_problem(parts: SplitResult) -> str | None:
    if "@" in parts.netloc:
        return "carries credentials (user information before the host), which are not accepted"
    if "%" in parts.netloc:
        return "has a percent-encoded host"
    if parts.netloc.startswith("[") and not _is_ipv6_literal(parts.hostname or ""):
        return "has a bracketed host that is not a plain IPv6 address"
    return None


def _is_ipv6_literal(host: str) -> bool:
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        return False
    return True


def _parts(uri: str) -> SplitResult | None:
    """The URI's parts, or None when `_uri_problem` finds it unsafe to read."""
    return None if _uri_problem(uri) is not None else urlsplit(uri)


def is_loopback_redirect(uri: str) -> bool:
    """A native app's redirect to itself (RFC 8252 §7.3): plain http on a loopback address,
    the host read by a URL parser (never from user information before it)."""
    parts = _parts(uri)
    return (
        parts is not None and parts.scheme == "http" and parts.hostname in LOOPBACK_REDIRECT_HOSTS
    )


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
    scheme of a native app (`com.example.app:/cb`); never a fragment or user information."""
    problem = _uri_problem(uri)
    if problem is not None:
        return problem
    parts = urlsplit(uri)
    if "#" in uri:
        return "has a fragment (#…), which a redirect URI may not have"
    if parts.scheme == "https":
        return None if parts.hostname else "has no host"
    if parts.scheme == "http":
        return None if is_loopback_redirect(uri) else "uses http off loopback; use https"
    if parts.scheme in ("javascript", "data", "file", "vbscript"):
        return "has no usable scheme"
    return None if "." in parts.scheme else "uses a private scheme without a dot (com.example.app)"


def document_url_problem(url: str) -> str | None:
    """Why a URL cannot be a client ID metadata document's address, or None."""
    problem = _uri_problem(url)
    if problem is not None:
        return problem
    parts = urlsplit(url)
    checks = (
        (parts.scheme != "https", "must use https"),
        (not parts.hostname, "has no host"),
        (parts.path in ("", "/"), "must have a path"),
        ("#" in url, "may not carry a fragment"),
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
