"""One delivery attempt over HTTP, fenced: the host is resolved and every address checked at
send time (so a name cannot be pointed at a private address after the check at create), the
connection goes to the checked address (the Host header and TLS name stay the URL's), no
redirect is followed, the whole attempt is bounded in time and at most EXCERPT_BYTES of the
answer is read.
"""

from __future__ import annotations

import functools
import json
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx2

from crewboard.config import Settings
from crewboard.domain.webhooks import (
    EXCERPT_BYTES,
    SIGNATURE_HEADER,
    Network,
    address_problem,
    check_url,
    literal_address,
    parse_networks,
    sign,
)
from crewboard.errors import ValidationFailed
from crewboard.storage.database import Database

POLICY_HOOK = "webhooks.policy"  # in Database.hooks: the operator's settings for webhooks
USER_AGENT = "Crewboard-Webhooks"


@dataclass(frozen=True)
class Policy:
    """The operator's settings the webhooks area reads (`configure`)."""

    allow_networks: tuple[Network, ...] = ()
    timeout: float = 10.0
    max_body: int = 262_144
    retry_hours: float = 24.0


def configure(db: Database, policy: Policy) -> None:
    """Give the webhooks area of this database handle its settings (the app does, from
    CREWBOARD_WEBHOOK_*)."""
    db.hooks[POLICY_HOOK] = policy


def configure_from(db: Database, settings: Settings) -> None:
    """`configure` from the settings (CREWBOARD_WEBHOOK_*): the server and the CLI both do,
    so a webhook made through either is checked against the same policy."""
    configure(
        db,
        policy_from(
            settings.webhook_allow_networks, settings.webhook_timeout, settings.webhook_max_body,
            settings.webhook_retry_hours,
        ),
    )  # fmt: skip


def policy_from(allow_networks: str, timeout: float, max_body: int, retry_hours: float) -> Policy:
    """The policy from the settings' values.

    Raises:
        ValueError: `allow_networks` holds something that is no network.
    """
    return Policy(parse_networks(allow_networks), timeout, max_body, retry_hours)


def policy_of(db: Database) -> Policy:
    found = db.hooks.get(POLICY_HOOK)
    return found if isinstance(found, Policy) else Policy()


class AddressRefused(Exception):
    """The URL's host is, or resolves to, an address deliveries may not go to."""


def resolve_checked(host: str, port: int, allowed: tuple[Network, ...]) -> str:
    """The address to connect to for `host`: every address it resolves to must pass the
    policy (one refused address refuses the name: DNS could hand out either).

    Raises:
        AddressRefused: the name does not resolve, or an address of it is refused.
    """
    literal = literal_address(host)
    if literal is not None:
        found = [literal]
    else:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            raise AddressRefused(f"the host {host!r} does not resolve ({error})") from error
        found = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in found:
        problem = address_problem(address, allowed)
        if problem is not None:
            where = host if literal is not None else f"{host} (resolves to {address})"
            raise AddressRefused(f"{where}: {problem}")
    if not found:
        raise AddressRefused(f"the host {host!r} resolves to no address")
    return found[0]


def check_destination(url: str, policy: Policy) -> None:
    """A URL a webhook may have, resolved now (create and update).

    Raises:
        ValidationFailed: naming `url` (its form, or an address it is or resolves to).
    """
    host, port = check_url(url)
    try:
        resolve_checked(host, port, policy.allow_networks)
    except AddressRefused as error:
        raise ValidationFailed.field("url", f"is refused: {error}.") from error


@dataclass(frozen=True)
class Attempt:
    """What one attempt gave: a status (None when no answer came), the start of the answer,
    the error in words when it failed, and how long it took."""

    status: int | None
    excerpt: str | None
    error: str | None
    duration_ms: int

    @property
    def acknowledged(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300


@dataclass(frozen=True)
class Outgoing:
    """A delivery ready to send: where, the signed headers' parts, and the body."""

    url: str
    secret: str
    body: bytes
    event_type: str
    event_id: int | None
    delivery_id: str
    webhook_id: str


def body_of(webhook_id: str, delivery_id: str, event: dict[str, Any], max_body: int) -> bytes:
    """The JSON body of a delivery; over `max_body` bytes the event's payload is left out
    (the receiver fetches it by the ids) and `truncated` says so."""
    wrapped = {"webhookId": webhook_id, "deliveryId": delivery_id, "event": event}
    body = json.dumps(wrapped, separators=(",", ":")).encode()
    if len(body) <= max_body:
        return body
    short = {**event, "payload": {"truncated": True}}
    return json.dumps({**wrapped, "event": short}, separators=(",", ":")).encode()


def _headers(out: Outgoing, host_header: str) -> dict[str, str]:
    headers = {
        "Host": host_header,
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        SIGNATURE_HEADER: sign(out.secret, int(time.time()), out.body),
        "Crewboard-Event": out.event_type,
        "Crewboard-Delivery": out.delivery_id,
        "Crewboard-Webhook": out.webhook_id,
    }
    if out.event_id is not None:
        headers["Crewboard-Event-Id"] = str(out.event_id)
    return headers


def _pinned(url: str, address: str) -> tuple[str, str, str]:
    """The URL with its host replaced by the checked address, the Host header, and the name
    TLS checks the certificate against."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    shown = f"[{address}]" if ":" in address else address
    netloc = shown if parts.port is None else f"{shown}:{parts.port}"
    host_header = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=netloc)), host_header, host


async def send(out: Outgoing, policy: Policy) -> Attempt:
    """One attempt, never raising: a refused address, a timeout, a redirect or a non-2xx
    status is a failed attempt with its reason."""
    started = time.monotonic()
    try:
        with anyio.fail_after(policy.timeout):
            status, excerpt, error = await _attempt(out, policy)
    except TimeoutError:
        status, excerpt, error = None, None, f"no answer within {policy.timeout:g} s"
    except AddressRefused as refused:
        status, excerpt, error = None, None, f"address refused: {refused}"
    except httpx2.HTTPError as failed:
        status, excerpt, error = None, None, f"{type(failed).__name__}: {failed}"[:1000]
    elapsed = int((time.monotonic() - started) * 1000)
    return Attempt(status, excerpt, error, elapsed)


async def _attempt(out: Outgoing, policy: Policy) -> tuple[int, str, str | None]:
    host, port = check_url(out.url)
    address = await anyio.to_thread.run_sync(
        resolve_checked, host, port, policy.allow_networks, abandon_on_cancel=True
    )
    target, host_header, sni = _pinned(out.url, address)
    async with httpx2.AsyncClient(
        follow_redirects=False, trust_env=False, timeout=policy.timeout, verify=_tls()
    ) as client:
        request = client.build_request(
            "POST", target, content=out.body, headers=_headers(out, host_header),
            extensions={"sni_hostname": sni},
        )  # fmt: skip
        response = await client.send(request, stream=True)
        try:
            excerpt = await _excerpt(response)
        finally:
            await response.aclose()
    return response.status_code, excerpt, _status_problem(response)


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS context every attempt shares (httpx's own defaults): a client builds a new one
    otherwise, which loads the CA bundle again, about 25 ms of CPU an attempt."""
    return httpx2.create_ssl_context()


async def _excerpt(response: httpx2.Response) -> str:
    got = b""
    async for chunk in response.aiter_raw():
        got += chunk
        if len(got) >= EXCERPT_BYTES:
            break
    return got[:EXCERPT_BYTES].decode("utf-8", "replace")


def _status_problem(response: httpx2.Response) -> str | None:
    status = response.status_code
    if 200 <= status < 300:
        return None
    if 300 <= status < 400:
        where = response.headers.get("location", "")[:200]
        return f"the receiver answered {status} (a redirect to {where!r}), which is not followed"
    return f"the receiver answered {status}"
