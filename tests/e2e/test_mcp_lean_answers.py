"""Answers that cost an agent little: compact list rows, and each answer's JSON sent once.

Through the official SDK client in both protocol eras, and as raw JSON-RPC to see the bytes
on the wire.
"""

from __future__ import annotations

import json

import httpx2
import pytest

from crewboard.domain.identity.records import Actor
from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user, personal_secret
from tests.support.mcp_client import MODES, RAW_HEADERS, body_of, mcp_client, rpc

pytestmark = pytest.mark.anyio

BOARD = 1000


@pytest.fixture
def owner(db: Database) -> Actor:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return person_actor(user)


@pytest.fixture
def secret(db: Database, owner: Actor) -> str:
    return personal_secret(db, owner, ["read", "tasks.manage"])


def seed(db: Database, owner: Actor, count: int) -> None:
    for n in range(1, count + 1):
        tasks.create_task(
            db,
            owner,
            project="CRW",
            workspace_id=None,
            idempotency_key=f"seed-{n}",
            title=f"Task {n}: wire the export button to the queue",
            description="A description an agent reads with get_task, not in the list. " * 8,
        )


async def test_a_board_of_1000_tasks_comes_whole_in_five_calls(
    url: str, db: Database, owner: Actor, secret: str
) -> None:
    seed(db, owner, BOARD)
    for mode in MODES:
        async with mcp_client(url, secret, mode) as client:
            keys: list[str] = []
            calls, chars = 0, 0
            arguments: dict[str, object] = {"projectId": "CRW", "limit": 200}
            while True:
                result = await client.call_tool("list_tasks", arguments)
                calls += 1
                body = body_of(result)
                chars += sum(len(part.text) for part in result.content if part.type == "text")
                keys += [row["key"] for row in body["tasks"]]
                if not body["hasMore"]:
                    break
                arguments = {**arguments, "cursor": body["nextCursor"]}
        assert keys == [f"CRW-{n}" for n in range(1, BOARD + 1)], mode
        assert calls == 5, mode
        assert chars / BOARD <= 150, (mode, chars / BOARD)


async def test_a_success_carries_its_json_once_on_the_wire(
    url: str, db: Database, owner: Actor, secret: str
) -> None:
    seed(db, owner, 30)
    headers = {**RAW_HEADERS, "MCP-Protocol-Version": "2025-11-25"}
    headers["Authorization"] = f"Bearer {secret}"
    request = rpc("tools/call", {"name": "list_tasks", "arguments": {"projectId": "CRW"}})
    response = httpx2.post(f"{url}/mcp", json=request, headers=headers, timeout=30)
    assert response.status_code == 200
    result = response.json()["result"]
    assert "structuredContent" not in result
    (part,) = result["content"]
    assert len(json.loads(part["text"])["tasks"]) == 30
    # The envelope adds a few dozen bytes; the JSON is not there twice (escaped in the text and
    # again as an object), which would make the body over twice the text.
    assert len(response.content) < len(json.dumps(part["text"])) + 200


async def test_no_tool_promises_structured_output(url: str, secret: str) -> None:
    """A declared outputSchema obliges structured content; the tools send text alone."""
    for mode in MODES:
        async with mcp_client(url, secret, mode, {"X-MCP-Toolsets": "all"}) as client:
            listed = await client.list_tools()
            assert listed.tools, mode
            assert [t.name for t in listed.tools if t.output_schema is not None] == [], mode
