"""Outgoing webhooks: the records, which events a subscription may ask for, the address policy
that keeps deliveries off private networks, the signature, and the retry schedule. Pure: no
I/O (the resolving and sending are `services/webhooks`).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import random
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from crewboard.errors import ValidationFailed

WEBHOOK_PREFIX = "whk"
DELIVERY_PREFIX = "whd"


def event_delivery_id(webhook_id: str, event_id: int) -> str:
    """The id of the delivery of one event to one webhook, the same on every attempt and
    every node: a receiver dedupes by it, and the dispatcher need not write before it sends."""
    digest = hashlib.sha256(f"{webhook_id}:{event_id}".encode()).hexdigest()
    return f"{DELIVERY_PREFIX}_{digest[:22]}"


SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret
MAX_URL = 2000
MAX_DESCRIPTION = 500
MAX_PATTERNS = 50
MAX_WEBHOOKS = 20  # per project: each one is a reader of the log on every pass
KEEP_DELIVERIES = 500  # newest log rows kept per webhook
EXCERPT_BYTES = 1024  # of a response body kept in the log
SIGNATURE_HEADER = "Crewboard-Signature"
TOLERANCE = 300  # seconds a receiver accepts a signature's time off its own clock
PING = "webhook.ping"

# Families whose events a subscription may receive: the project's shared work.
DELIVERABLE = frozenset({
    "acceptance_rule", "artifact", "attachment", "draft", "handoff", "handoff_action_item",
    "memory", "message", "project", "proposal", "repo", "spec_comment", "spec_file",
    "spec_session", "state", "task", "team",
})  # fmt: skip
# Never delivered: a person's own (notifications, sign-ins), credentials (tokens, grants,
# stream tokens), workspaces (no project), and the integrations' own settings (webhooks'
# URLs and secrets' rotation, GitHub's set-up: only admins see them).
EXCLUDED = frozenset({
    "github", "notification", "oauth", "stream_token", "token", "user", "workspace", "webhook",
})  # fmt: skip

# Addresses no delivery goes to even when public-looking: cloud metadata services.
METADATA = frozenset({
    ipaddress.ip_address("169.254.169.254"),
    ipaddress.ip_address("fd00:ec2::254"),
    ipaddress.ip_address("100.100.100.200"),
})  # fmt: skip
# Back-off after the 1st, 2nd, ... consecutive failure of a head event (seconds), then hourly.
BACKOFF = (10, 30, 60, 300, 900, 1800)
HOURLY = 3600
_JITTER = random.Random()  # noqa: S311 - spreading retries, not a secret


class WebhookState(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class DeliveryKind(StrEnum):
    EVENT = "event"
    REDELIVERY = "redelivery"
    PING = "ping"


class DeliveryState(StrEnum):
    PENDING = "pending"
    DELIVERED = "delivered"
    RETRYING = "retrying"
    FAILED = "failed"


@dataclass(frozen=True)
class Webhook:
    """A subscription: where a project's events go and which ones. The secret stays here,
    never on the wire but once (`WebhookMade`)."""

    id: str
    project_id: str
    workspace_id: str | None
    url: str
    description: str | None
    events: tuple[str, ...]
    secret: str
    state: WebhookState
    paused_reason: str | None
    paused_at: datetime | None
    cursor: int
    attempts: int
    failing_since: datetime | None
    next_attempt_at: datetime | None
    lease_owner: str | None
    lease_until: datetime | None
    created_by: dict[str, Any]
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class WebhookMade:
    """A webhook with its secret, shown this once (create, rotate)."""

    webhook: Webhook
    secret: str


@dataclass(frozen=True)
class Delivery:
    """One entry of a webhook's delivery log: an event (or a ping) sent, or being sent."""

    id: str
    webhook_id: str
    project_id: str
    event_id: int | None
    event_type: str
    kind: DeliveryKind
    state: DeliveryState
    attempts: int
    response_status: int | None
    response_excerpt: str | None
    error: str | None
    duration_ms: int | None
    created_at: datetime
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None
    delivered_at: datetime | None


@dataclass(frozen=True)
class DeliveryPage:
    deliveries: list[Delivery]
    total: int


# --- event patterns ------------------------------------------------------------------------


def family(event_type: str) -> str:
    return event_type.split(".", 1)[0]


def is_deliverable(event_type: str) -> bool:
    return family(event_type) in DELIVERABLE


def check_patterns(patterns: Sequence[str]) -> tuple[str, ...]:
    """The patterns, checked and without repeats: `*`, `family.*` or an exact type of a
    deliverable family.

    Raises:
        ValidationFailed: none given, too many, or one of a family that is not delivered.
    """
    accepted = ["*", *(f"{name}.*" for name in sorted(DELIVERABLE))]
    if not patterns:
        raise ValidationFailed.field("events", "name at least one event pattern.", accepted)
    if len(patterns) > MAX_PATTERNS:
        raise ValidationFailed.field("events", f"at most {MAX_PATTERNS} patterns.", accepted)
    for pattern in patterns:
        name, _, rest = pattern.partition(".")
        if pattern == "*":
            continue
        if (
            name not in DELIVERABLE
            or not rest
            or (rest != "*" and not rest.replace("_", "").isalnum())
        ):
            raise ValidationFailed.field(
                "events",
                f"{pattern!r} is no event pattern a webhook can receive: use '*', a family "
                "with '.*' (task.*) or an exact type (task.updated) of a delivered family.",
                accepted,
            )
    return tuple(dict.fromkeys(patterns))


def matches(patterns: Iterable[str], event_type: str) -> bool:
    """Whether a subscription with these patterns receives an event of this type."""
    if not is_deliverable(event_type):
        return False
    for pattern in patterns:
        if pattern in ("*", event_type) or pattern == f"{family(event_type)}.*":
            return True
    return False


# --- addresses -----------------------------------------------------------------------------

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_networks(text: str) -> tuple[Network, ...]:
    """The operator's allowed networks from a comma list of CIDRs ("" for none).

    Raises:
        ValueError: one is no network.
    """
    return tuple(
        ipaddress.ip_network(part.strip(), strict=False) for part in text.split(",") if part.strip()
    )


def _embedded(ip: Address) -> list[Address]:
    """The address and the IPv4 addresses an IPv6 form carries (mapped, 6to4, Teredo)."""
    found: list[Address] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        for inner in (ip.ipv4_mapped, ip.sixtofour, ip.teredo[1] if ip.teredo else None):
            if inner is not None:
                found.append(inner)
    return found


def address_problem(address: str, allowed: Sequence[Network] = ()) -> str | None:
    """Why a delivery may not go to this IP address, or None when it may."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address!r} is no IP address"
    if any(ip in net for net in allowed if net.version == ip.version):
        return None
    for inner in _embedded(ip):
        if inner in METADATA:
            return f"{address} is a cloud metadata address"
        if inner.is_multicast:
            return f"{address} is a multicast address"
        if not inner.is_global:
            return (
                f"{address} is a private, loopback or link-local address (an operator may allow "
                "a network with CREWBOARD_WEBHOOK_ALLOW_NETWORKS)"
            )
    return None


def check_url(url: str) -> tuple[str, int]:
    """The URL's host and port, when it is one a webhook may have: http(s), a host, no
    user name or password, at most MAX_URL characters.

    Raises:
        ValidationFailed: naming `url`.
    """
    if len(url) > MAX_URL:
        raise ValidationFailed.field("url", f"at most {MAX_URL} characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise ValidationFailed.field("url", f"is no URL ({error}).") from error
    if parts.scheme not in ("http", "https"):
        raise ValidationFailed.field(
            "url", "must start with https:// or http://.", ["https", "http"]
        )
    if not parts.hostname:
        raise ValidationFailed.field("url", "must name a host.")
    if parts.username is not None or parts.password is not None:
        raise ValidationFailed.field("url", "must not carry a user name or password.")
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def literal_address(host: str) -> str | None:
    """The host when it is an IP literal, else None (a name to resolve)."""
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


# --- secrets and signatures ----------------------------------------------------------------


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header's value for `body` sent at `timestamp` (unix seconds)."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def verify_signature(
    secret: str, header: str, body: bytes, now: float, tolerance: int = TOLERANCE
) -> bool:
    """What a receiver does: whether `header` signs `body` with `secret`, at a time within
    `tolerance` seconds of `now` (unix seconds). Compares in constant time."""
    fields: dict[str, list[str]] = {}
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        fields.setdefault(key, []).append(value)
    try:
        timestamp = int(fields.get("t", [""])[0])
    except ValueError:
        return False
    if abs(now - timestamp) > tolerance:
        return False
    expected = sign(secret, timestamp, body).rsplit("v1=", 1)[1]
    return any(hmac.compare_digest(expected, given) for given in fields.get("v1", []))


# --- retries -------------------------------------------------------------------------------


def backoff(attempts: int) -> timedelta:
    """How long to wait after the `attempts`-th consecutive failure, with up to a tenth of
    jitter so subscriptions failing together do not retry in step."""
    base = BACKOFF[attempts - 1] if 0 < attempts <= len(BACKOFF) else HOURLY
    return timedelta(seconds=base * _JITTER.uniform(1.0, 1.1))
