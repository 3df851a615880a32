"""update_tasks and set_task_status through the official SDK client, in both protocol eras."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

WRITE = ["read", "tasks.manage"]
PROJECT = {"projectId": "CRW", "workspaceId": None}


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


def secret_for(db: Database, user: User, scopes: list[str]) -> str:
    return tokens.issue_token(db, person_actor(user), kind="personal", scopes=scopes).secret


async def _tasks(client: Client, *titles: str) -> list[dict[str, Any]]:
    made = []
    for title in titles:
        result = await client.call_tool(
            "create_task", {**PROJECT, "idempotencyKey": f"create-{title}", "title": title}
        )
        made.append(body_of(result)["task"])
    return made


async def _read(client: Client, ref: str) -> dict[str, Any]:
    result = await client.call_tool("get_task", {"taskId": ref, "includeContextPack": False})
    return dict(body_of(result)["task"])


async def test_both_tools_are_listed_as_keyed_non_destructive_writes(
    url: str, db: Database, owner: User, mode: str
) -> None:
    headers = {"X-MCP-Toolsets": "planning,board"}
    async with mcp_client(url, secret_for(db, owner, WRITE), mode, headers) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in ("update_tasks", "set_task_status"):
        annotations = tools[name].annotations
        assert annotations is not None
        assert not annotations.read_only_hint  # the protocol default, not sent
        assert annotations.idempotent_hint is True
        assert annotations.destructive_hint is False
    update = tools["update_tasks"].input_schema
    # workspaceId: taken, not listed (the project's own workspace when left out)
    assert set(update["required"]) == {"projectId", "idempotencyKey", "taskIds"}
    assert "workspaceId" not in update["properties"]
    assert update["properties"]["taskIds"]["maxItems"] == 200
    assert update["properties"]["priority"]["enum"] == ["low", "medium", "high"]
    # A shape used in one place is written inline (lean schemas).
    relationship = update["properties"]["addRelationships"]["items"]["properties"]["type"]
    assert relationship["enum"] == ["blocks", "blocked_by", "related"]
    status = tools["set_task_status"].input_schema
    assert set(status["required"]) == {"projectId", "idempotencyKey", "changes"}
    assert "workspaceId" not in status["properties"]
    change = status["properties"]["changes"]["items"]["properties"]["status"]
    assert "approved" in change["enum"]
    async with mcp_client(url, secret_for(db, owner, ["read"]), mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert not names & {"update_tasks", "set_task_status"}


async def test_update_tasks_plans_several_tasks_and_links_them(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITE), mode) as client:
        first, second, gate = await _tasks(client, "First", "Second", "Gate")
        arguments = {
            **PROJECT,
            "idempotencyKey": "plan-1",
            "taskIds": [first["id"], "CRW-2"],
            "priority": "high",
            "dueDate": "2026-03-20",
            "addLabels": ["api", "urgent"],
            "addRelationships": [{"type": "blocked_by", "taskId": "CRW-3"}],
        }
        result = await client.call_tool("update_tasks", arguments)
        assert result.is_error is False
        body = body_of(result)
        assert len(result.content) == 1
        assert [row["key"] for row in body["tasks"]] == ["CRW-1", "CRW-2"]
        assert body["tasks"][0]["changed"] == ["priority", "dueDate", "labels", "relationships"]
        assert [row["revision"] for row in body["tasks"]] == [2, 2]
        assert body["alsoUpdated"] == [{"taskId": gate["id"], "key": "CRW-3", "revision": 2}]
        task = await _read(client, second["id"])
        assert (task["priority"], task["dueDate"], task["labels"]) == (
            "high",
            "2026-03-20",
            ["api", "urgent"],
        )
        assert task["blockedByTaskIds"] == [gate["id"]]
        assert [r["type"] for r in (await _read(client, "CRW-3"))["relationships"]] == [
            "blocks",
            "blocks",
        ]

        cleared = await client.call_tool(
            "update_tasks",
            {
                **PROJECT,
                "idempotencyKey": "plan-2",
                "taskIds": ["CRW-1"],
                "dueDate": None,
                "removeLabels": ["API"],
            },
        )
        assert body_of(cleared)["tasks"][0]["changed"] == ["dueDate", "labels"]
        task = await _read(client, "CRW-1")
        assert (task["dueDate"], task["labels"], task["priority"]) == (None, ["urgent"], "high")

        replay = await client.call_tool("update_tasks", arguments)
        assert body_of(replay) == body
        assert len(replay.content) == 2  # the second part says it is the original answer


async def test_update_tasks_with_an_unknown_task_changes_nothing(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITE), mode) as client:
        await _tasks(client, "Only")
        result = await client.call_tool(
            "update_tasks",
            {**PROJECT, "idempotencyKey": "p", "taskIds": ["CRW-1", "CRW-7"], "priority": "low"},
        )
        assert result.is_error is True
        assert result.structured_content is not None
        assert result.structured_content["code"] == "NOT_FOUND"
        assert result.structured_content["details"]["missing"] == ["CRW-7"]
        assert (await _read(client, "CRW-1"))["revision"] == 1


async def test_set_task_status_partly_succeeds_with_an_outcome_per_task(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITE), mode) as client:
        await _tasks(client, "A", "B")
        await client.call_tool(
            "update_tasks",
            {**PROJECT, "idempotencyKey": "bump", "taskIds": ["CRW-2"], "priority": "high"},
        )
        arguments = {
            **PROJECT,
            "idempotencyKey": "move-1",
            "changes": [
                {"taskId": "CRW-1", "status": "review"},
                {"taskId": "CRW-2", "status": "review"},
                {"taskId": "CRW-9", "status": "done"},
            ],
            "expectedVersions": {"CRW-1": 1, "CRW-2": 1},
        }
        result = await client.call_tool("set_task_status", arguments)
        assert result.is_error is False
        body = body_of(result)
        assert (body["succeeded"], body["failed"]) == (1, 2)
        moved, stale, missing = body["outcomes"]
        assert (moved["key"], moved["ok"], moved["status"], moved["revision"]) == (
            "CRW-1",
            True,
            "review",
            2,
        )
        assert stale["ok"] is False
        assert stale["error"]["code"] == "REVISION_CONFLICT"
        assert stale["error"]["details"]["currentRevision"] == 2
        assert missing["error"]["code"] == "NOT_FOUND"
        assert missing["taskId"] == "CRW-9"
        assert len(result.content) == 2
        assert "2 of 3" in result.content[1].text  # type: ignore[union-attr]
        assert (await _read(client, "CRW-1"))["status"] == "review"
        assert (await _read(client, "CRW-2"))["status"] == "backlog"
        replay = await client.call_tool("set_task_status", arguments)
        assert body_of(replay) == body


async def test_bad_arguments_are_error_results_naming_the_field(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITE), mode) as client:
        await _tasks(client, "A")
        base = {**PROJECT, "idempotencyKey": "k", "taskIds": ["CRW-1"]}
        cases: list[tuple[str, dict[str, Any], str, str]] = [
            (
                "update_tasks",
                {**base, "addRelationships": [{"type": "parent", "taskId": "CRW-1"}]},
                "VALIDATION",
                "addRelationships.0.type",
            ),
            ("update_tasks", {**base, "priority": "urgent"}, "VALIDATION", "priority"),
            ("update_tasks", {**base, "priority": None}, "VALIDATION", "priority"),
            ("update_tasks", {**base, "status": "done"}, "VALIDATION", "status"),
            ("update_tasks", {**base, "addLabels": ["x" * 49]}, "LIMIT_EXCEEDED", "addLabels.0"),
            ("update_tasks", {**base, "taskIds": []}, "VALIDATION", "taskIds"),
            ("update_tasks", base, "VALIDATION", "arguments"),
            (
                "update_tasks",
                {**PROJECT, "taskIds": ["CRW-1"], "priority": "low"},
                "VALIDATION",
                "idempotencyKey",
            ),
            (
                "set_task_status",
                {**PROJECT, "idempotencyKey": "k", "changes": [{"taskId": "CRW-1", "status": "x"}]},
                "VALIDATION",
                "changes.0.status",
            ),
            (
                "set_task_status",
                {**PROJECT, "idempotencyKey": "k", "changes": []},
                "VALIDATION",
                "changes",
            ),
            (
                "set_task_status",
                {
                    **PROJECT,
                    "idempotencyKey": "k",
                    "changes": [{"taskId": "CRW-1", "status": "done"}],
                    "expectedVersions": {"CRW-2": 1},
                },
                "VALIDATION",
                "expectedVersions.CRW-2",
            ),
        ]
        for tool, arguments, code, field in cases:
            result = await client.call_tool(tool, arguments)
            assert result.is_error is True, (tool, field)
            assert result.structured_content is not None
            assert result.structured_content["code"] == code, (tool, field)
            assert result.structured_content["details"]["field"] == field, (tool, field)
            assert field in result.content[0].text  # type: ignore[union-attr]
        enum = await client.call_tool("update_tasks", cases[0][1])
        assert enum.structured_content is not None
        assert enum.structured_content["details"]["accepted"] == ["blocks", "blocked_by", "related"]
        assert (await _read(client, "CRW-1"))["revision"] == 1
