"""Fetch a client ID metadata document: a client known by the https URL of its metadata.

The server fetches a URL a stranger chose, so the fetch is fenced: https only, no redirects,
no proxy from the environment, a size and a time bound, and no private, loopback or link-local
address (unless the operator allows them) - checked on the resolved addresses before
connecting and on the address actually connected to before the body is read.
"""

from __future__ import annotations

import json
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2

from crewboard.domain.oauth import (
    DOCUMENT_MAX_BYTES,
    DOCUMENT_TIMEOUT_SECONDS,
    document_url_problem,
    is_public_address,
)


class DocumentRefused(Exception):
    """The document could not be used; the message says why (shown to the client)."""


@dataclass(frozen=True)
class FetchPolicy:
    allow_private: bool = False
    ca_file: Path | None = None
    max_bytes: int = DOCUMENT_MAX_BYTES
    timeout: float = DOCUMENT_TIMEOUT_SECONDS


@dataclass(frozen=True)
class FetchedDocument:
    body: dict[str, Any]
    cache_control: str | None


async def _addresses(host: str, port: int) -> set[str]:
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise DocumentRefused(
            f"the host {host!r} of the metadata document does not resolve"
        ) from error
    return {str(info[4][0]) for info in infos}


async def checked_addresses(url: str, policy: FetchPolicy) -> set[str]:
    """The addresses the document's host resolves to, refused when one is private, loopback
    or otherwise not public (unless the policy allows those).

    Raises:
        DocumentRefused: the host does not resolve, or resolves to a refused address.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    allowed = await _addresses(host, parts.port or 443)
    refused = sorted(a for a in allowed if not is_public_address(a))
    if refused and not policy.allow_private:
        raise DocumentRefused(
            f"the metadata document's host {host!r} resolves to a private or loopback "
            f"address ({refused[0]}), which this server does not fetch from"
        )
    return allowed


def _tls(policy: FetchPolicy) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if policy.ca_file is not None:
        context.load_verify_locations(cafile=str(policy.ca_file))
    return context


async def fetch_document(url: str, policy: FetchPolicy) -> FetchedDocument:
    """GET the document at `url` within the policy's fences.

    Raises:
        DocumentRefused: a bad URL, a refused address, a failed or slow fetch, a non-200
            answer, a body over the size bound or not a JSON object.
    """
    problem = document_url_problem(url)
    if problem is not None:
        raise DocumentRefused(f"a client ID metadata document URL {problem}")
    try:
        with anyio.fail_after(policy.timeout):
            allowed = await checked_addresses(url, policy)
            return await _get(url, allowed, policy)
    except TimeoutError as error:
        raise DocumentRefused(
            f"the metadata document took longer than {policy.timeout:g} s to fetch"
        ) from error


async def _get(url: str, allowed: set[str], policy: FetchPolicy) -> FetchedDocument:
    async with httpx2.AsyncClient(
        verify=_tls(policy), follow_redirects=False, trust_env=False, timeout=policy.timeout
    ) as client:
        try:
            async with client.stream(
                "GET", url, headers={"accept": "application/json"}
            ) as response:
                stream = response.extensions.get("network_stream")
                peer = stream.get_extra_info("server_addr") if stream is not None else None
                if peer is not None and str(peer[0]) not in allowed:
                    raise DocumentRefused("the metadata document's host changed address mid-fetch")
                if response.status_code != 200:
                    raise DocumentRefused(
                        f"fetching the metadata document answered HTTP {response.status_code}, not 200"
                    )
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > policy.max_bytes:
                    raise DocumentRefused(_too_big(policy))
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body.extend(chunk)
                    if len(body) > policy.max_bytes:
                        raise DocumentRefused(_too_big(policy))
                cache_control = response.headers.get("cache-control")
        except httpx2.HTTPError as error:
            raise DocumentRefused(
                f"fetching the metadata document failed: {type(error).__name__}"
            ) from error
    try:
        document = json.loads(bytes(body))
    except ValueError as error:
        raise DocumentRefused("the metadata document is not JSON") from error
    if not isinstance(document, dict):
        raise DocumentRefused("the metadata document is not a JSON object")
    return FetchedDocument(body=document, cache_control=cache_control)


def _too_big(policy: FetchPolicy) -> str:
    return f"the metadata document is larger than {policy.max_bytes} bytes"
