"""The board's core tools through the official SDK client, both protocol eras."""

from __future__ import annotations

import pytest

from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def secret(db: Database) -> str:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    scopes = ["read", "tasks.manage"]
    return tokens.issue_token(db, person_actor(user), kind="personal", scopes=scopes).secret


async def test_find_read_update_a_task(url: str, secret: str, mode: str) -> None:
    async with mcp_client(url, secret, mode) as client:
        made = body_of(
            await client.call_tool(
                "create_task",
                {
                    "projectId": "CRW",
                    "workspaceId": None,
                    "idempotencyKey": "t1",
                    "title": "Fix the login redirect",
                    "tags": ["auth"],
                    "dueDate": "2026-03-06",
                    "contextRefs": [
                        {
                            "id": "r1",
                            "kind": "file",
                            "refId": "src/app.py",
                            "audience": ["ai"],
                            "createdAt": "2026-03-01T10:00:00+00:00",
                        }
                    ],
                },
            )
        )["task"]
        assert made["key"] == "CRW-1"
        assert made["contextRefs"][0]["refId"] == "src/app.py"
        found = body_of(
            await client.call_tool(
                "list_tasks", {"q": "redirect login", "fields": ["title", "revision"]}
            )
        )
        # The named columns and the key, nothing more.
        assert found["tasks"] == [{"key": "CRW-1", "title": made["title"], "revision": 1}]
        read = body_of(await client.call_tool("get_task", {"taskId": "CRW-1"}))
        assert read["task"]["revision"] == 1
        assert read["lifecycle"]["coverage"] == "complete"
        assert "contextPack" in read
        alone = body_of(
            await client.call_tool("get_task", {"taskId": "CRW-1", "includeContextPack": False})
        )
        assert "contextPack" not in alone
        assert "contextReceiptUnavailable" not in alone
        changed = body_of(
            await client.call_tool(
                "update_task",
                {
                    "projectId": "CRW",
                    "workspaceId": None,
                    "idempotencyKey": "u1",
                    "taskId": made["id"],
                    "expectedRevision": 1,
                    "patch": {"dueDate": None, "priority": "high"},
                },
            )
        )["task"]
        assert (changed["dueDate"], changed["priority"], changed["revision"]) == (None, "high", 2)
        stale = await client.call_tool(
            "update_task",
            {
                "projectId": "CRW",
                "workspaceId": None,
                "idempotencyKey": "u2",
                "taskId": made["id"],
                "expectedRevision": 1,
                "patch": {"title": "Mine"},
            },
        )
        assert stale.is_error
        assert stale.structured_content["code"] == "REVISION_CONFLICT"
        assert stale.structured_content["details"]["currentRevision"] == 2
        brief = await client.call_tool("get_task", {"taskId": "CRW-1", "format": "agent_brief"})
        assert body_of(brief)["text"].startswith("Task CRW-1")
        assert len(brief.content) == 2


async def test_bad_task_arguments_name_the_field(url: str, secret: str, mode: str) -> None:
    async with mcp_client(url, secret, mode) as client:
        base = {"projectId": "CRW", "workspaceId": None, "idempotencyKey": "x", "title": "T"}
        cases = {
            "status": {**base, "status": "finished"},
            "tags": {**base, "tags": [f"t{i}" for i in range(21)]},
            "idempotencyKey": {k: v for k, v in base.items() if k != "idempotencyKey"},
            "contextRefs.0.kind": {
                **base,
                "contextRefs": [
                    {
                        "id": "a",
                        "kind": "x",
                        "refId": "b",
                        "audience": [],
                        "createdAt": "2026-01-01T00:00:00Z",
                    }
                ],
            },
        }
        for field, arguments in cases.items():
            result = await client.call_tool("create_task", arguments)
            assert result.is_error, field
            assert result.structured_content["details"]["field"] == field
        listing = await client.call_tool("list_tasks", {"status": ["done", "finished"]})
        assert listing.structured_content["details"]["field"].startswith("status")


async def test_a_nul_character_is_refused_naming_the_field(
    url: str, secret: str, mode: str
) -> None:
    async with mcp_client(url, secret, mode) as client:
        made = await client.call_tool(
            "create_task",
            {"projectId": "CRW", "workspaceId": None, "idempotencyKey": "n1", "title": "a\x00b"},
        )
        assert made.structured_content["code"] == "VALIDATION"
        assert made.structured_content["details"]["field"] == "title"
        lookup = await client.call_tool("get_task", {"taskId": "tsk_\x00"})
        assert lookup.structured_content["code"] == "VALIDATION"


async def test_a_time_without_offset_and_a_bad_list_item_name_their_field(
    url: str, secret: str, mode: str
) -> None:
    async with mcp_client(url, secret, mode) as client:
        naive = await client.call_tool("list_tasks", {"updatedSince": "2026-03-01T00:00:00"})
        assert naive.structured_content["code"] == "VALIDATION"
        assert naive.structured_content["details"]["field"] == "updatedSince"
        item = await client.call_tool("list_tasks", {"status": ["done", "finished"]})
        assert item.structured_content["details"]["field"] in ("status", "status.1")


async def test_an_agent_names_parent_and_blockers_by_key(url: str, secret: str, mode: str) -> None:
    async with mcp_client(url, secret, mode) as client:

        async def create(key: str, **fields: object) -> dict:  # type: ignore[type-arg]
            args = {"projectId": "CRW", "workspaceId": None, "idempotencyKey": key, **fields}
            return body_of(await client.call_tool("create_task", args))["task"]  # type: ignore[no-any-return]

        epic = await create("k1", title="Epic")
        step = await create("k2", title="Step", parentTaskId="CRW-1", blockedByTaskIds=["CRW-1"])
        assert (step["parentTaskId"], step["blockedByTaskIds"]) == (epic["id"], [epic["id"]])
        children = body_of(await client.call_tool("list_tasks", {"parentTaskId": "CRW-1"}))
        assert [t["key"] for t in children["tasks"]] == [step["key"]]
        refused = await client.call_tool(
            "create_task",
            {
                "projectId": "CRW",
                "workspaceId": None,
                "idempotencyKey": "k3",
                "title": "X",
                "parentTaskId": "CRW-99",
            },
        )
        assert refused.is_error
        assert refused.structured_content["code"] == "VALIDATION"
        assert refused.structured_content["details"]["field"] == "parentTaskId"
