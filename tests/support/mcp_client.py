"""Real MCP clients (the official SDK) for tests, over HTTP in both protocol eras."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

MODES = ("legacy", "2026-07-28")


@asynccontextmanager
async def mcp_client(
    url: str, secret: str, mode: str, headers: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """A connected client; in the stateless era it fetches the server's real discover result."""
    all_headers = {"Authorization": f"Bearer {secret}", **(headers or {})}
    async with (
        httpx2.AsyncClient(headers=all_headers, timeout=30) as http,
        Client(
            streamable_http_client(f"{url}/mcp", http_client=http), mode=mode, cache=None
        ) as client,
    ):
        if mode == "2026-07-28":
            raw = await client.session.send_discover(mode)
            client.session.adopt(types.DiscoverResult.model_validate(raw))
        yield client


def body_of(result: types.CallToolResult) -> Any:
    """The first text part, parsed. A success carries its JSON once: there is no structured copy."""
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    parsed = json.loads(first.text)
    if not result.is_error:
        assert result.structured_content is None, "a success carries its JSON twice"
    return parsed


RAW_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-03-26",
}


def rpc(method: str, params: dict[str, Any] | None = None, id_: int | None = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if id_ is not None:
        message["id"] = id_
    return message


def initialize(client: str, version: str = "2025-11-25", id_: int = 1) -> dict[str, Any]:
    """A raw `initialize` request of the handshake era, from a client named `client`."""
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": client, "version": "1"},
    }
    return rpc("initialize", params, id_)


def call(name: str, arguments: dict[str, Any], id_: int = 1) -> dict[str, Any]:
    return rpc("tools/call", {"name": name, "arguments": arguments}, id_)
