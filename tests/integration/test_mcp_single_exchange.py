"""The single-exchange path for handshake-era requests over HTTP (crewboard.mcp.exchange)
answers exactly what the SDK's stateless transport answers, and takes the requests it should.

Each request goes to two fronts over one server and one database: one with the path, one
without it (the SDK's transport for everything). A request that writes is sent to each with
its own data, so both see the same board.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from crewboard.config import Settings
from crewboard.mcp.http import McpFront
from crewboard.mcp.mount import McpDoor
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.conftest import ONLY_SQLITE
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import RAW_HEADERS, call, rpc

pytestmark = pytest.mark.anyio


class Counting:
    """The SDK's transport, counting the requests that reach it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app, self.requests = app, 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.requests += 1
        await self.app(scope, receive, send)


class Fronts:
    def __init__(self, door: McpDoor, secret: str) -> None:
        self.secret = secret
        self.sdk_app = Counting(door.front.sdk_app)
        assert door.front.single is not None
        self.lean = McpFront(
            self.sdk_app,
            door.front.db,
            door.front.settings,
            door.front.tool_names,
            door.front.single,
        )
        self.sdk_only = McpFront(
            self.sdk_app, door.front.db, door.front.settings, door.front.tool_names
        )

    async def post(
        self, front: McpFront, body: Any, headers: dict[str, str | None] | None = None
    ) -> tuple[int, str, Any]:
        """POST `body`; a header given as None is left out."""
        transport = httpx2.ASGITransport(app=front)
        given = {**RAW_HEADERS, "Authorization": f"Bearer {self.secret}", **(headers or {})}
        all_headers = {name: value for name, value in given.items() if value is not None}
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            response = await http.post("/mcp", content=json.dumps(body), headers=all_headers)
        content_type = response.headers.get("content-type", "")
        is_json = content_type.startswith("application/json") and response.content
        return response.status_code, content_type, response.json() if is_json else response.text

    async def both(
        self, body: Any, headers: dict[str, str | None] | None = None
    ) -> tuple[tuple[int, str, Any], tuple[int, str, Any], int]:
        """The lean front's answer, the SDK's, and how many of the two reached the SDK."""
        before = self.sdk_app.requests
        lean = await self.post(self.lean, body, headers)
        sdk = await self.post(self.sdk_only, body, headers)
        return lean, sdk, self.sdk_app.requests - before


@pytest.fixture
async def fronts(db: Database, tmp_path: Path) -> AsyncIterator[Fronts]:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    secret = tokens.issue_token(
        db, person_actor(user), kind="personal", scopes=["read", "tasks.manage"]
    ).secret
    door = McpDoor(db, Settings(data_dir=tmp_path, base_url=None))
    async with door.running():
        yield Fronts(door, secret)


READS = [
    pytest.param(rpc("tools/list", {}), id="tools/list"),
    pytest.param(rpc("ping", None), id="ping"),
    pytest.param(rpc("resources/list", {}), id="resources/list"),
    pytest.param(rpc("resources/templates/list", {}), id="resources/templates/list"),
    pytest.param(rpc("prompts/list", {}), id="prompts/list"),
    pytest.param(call("list_projects", {}), id="a tool"),
    pytest.param(call("get_task", {"taskId": "CRW-404"}), id="a tool's refusal (isError)"),
    pytest.param(call("get_task", {"taskId": 7}), id="arguments of the wrong type"),
    pytest.param(call("no_such_tool", {}), id="an unknown tool (JSON-RPC error)"),
    pytest.param(rpc("tools/call", {"arguments": {}}), id="tools/call without a name"),
    pytest.param(rpc("no/such/method", {}), id="an unknown method"),
    pytest.param(rpc("resources/read", {"uri": "crewboard://nothing"}), id="an unknown resource"),
    pytest.param(rpc("prompts/get", {"name": "nope"}), id="an unknown prompt"),
    pytest.param({**call("list_projects", {}), "id": "a-string-id"}, id="a string id"),
    pytest.param(
        rpc(
            "tools/call", {"name": "list_projects", "arguments": {}, "_meta": {"progressToken": 5}}
        ),
        id="a progress token",
    ),
]


# The path does not touch the database itself: one backend is enough for these.
@ONLY_SQLITE
@pytest.mark.parametrize("message", READS)
@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25", None])
async def test_a_request_is_answered_as_the_sdk_answers_it_without_reaching_the_sdk(
    fronts: Fronts, message: dict[str, Any], version: str | None
) -> None:
    lean, sdk, reached = await fronts.both(message, {"MCP-Protocol-Version": version})
    assert lean == sdk
    assert reached == 1  # the SDK-only front's request, not the lean one's


async def test_a_write_is_answered_alike_and_done_once_per_request(fronts: Fronts) -> None:
    def create(key: str) -> dict[str, Any]:
        arguments = {
            "projectId": "CRW",
            "workspaceId": None,
            "title": "Write the guide",
            "idempotencyKey": key,
        }
        return call("create_task", arguments)

    _, _, lean = await fronts.post(fronts.lean, create("one"))
    _, _, sdk = await fronts.post(fronts.sdk_only, create("two"))
    made = [json.loads(a["result"]["content"][0]["text"])["task"] for a in (lean, sdk)]
    assert [task["key"] for task in made] == ["CRW-1", "CRW-2"]
    assert lean["result"]["isError"] is sdk["result"]["isError"] is False
    assert lean.keys() == sdk.keys()


@ONLY_SQLITE
@pytest.mark.parametrize(
    ("body", "headers"),
    [
        pytest.param(rpc("initialize", {}), None, id="initialize"),
        pytest.param(rpc("notifications/initialized", None, None), None, id="a notification"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "result": {}}, None, id="a response"),
        pytest.param([rpc("ping", None)], None, id="a batch"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 5}, None, id="params"),
        pytest.param({"id": 1, "method": "tools/list", "params": {}}, None, id="no jsonrpc"),
        pytest.param(
            {"jsonrpc": "2.0", "id": 1, "method": "ping", "error": {"code": 1, "message": "m"}},
            None,
            id="a method beside an error",
        ),
        pytest.param(rpc("ping", None), {"Accept": "text/event-stream"}, id="no JSON accepted"),
        pytest.param(rpc("ping", None), {"Content-Type": "text/plain"}, id="not JSON content"),
        pytest.param(rpc("ping", None), {"MCP-Protocol-Version": "1999-01-01"}, id="a bad version"),
    ],
)
async def test_what_the_path_does_not_take_reaches_the_sdk(
    fronts: Fronts, body: Any, headers: dict[str, str | None] | None
) -> None:
    lean, sdk, reached = await fronts.both(body, headers)
    assert lean == sdk
    assert reached == 2
