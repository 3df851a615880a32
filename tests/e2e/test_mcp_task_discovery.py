"""list_assignee_tasks, assign_task and list_tasks' cursors through the official SDK client,
both protocol eras."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from mcp import Client

from crewboard.contract.projects import present
from crewboard.domain.identity.records import Actor
from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user, personal_secret
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def owner(db: Database) -> Actor:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return person_actor(user)


@pytest.fixture
def coder(db: Database, owner: Actor) -> str:
    return str(present.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")["id"])


@pytest.fixture
def secret(db: Database, owner: Actor) -> str:
    return personal_secret(db, owner, ["read", "tasks.manage"])


@dataclass(frozen=True)
class Board:
    """CRW with its owner and an AI role, Coder."""

    db: Database
    owner: Actor
    coder: str

    def new(self, title: str, **fields: Any) -> None:
        tasks.create_task(
            self.db,
            self.owner,
            project="CRW",
            workspace_id=None,
            idempotency_key=f"new-{title}",
            title=title,
            **fields,
        )


@pytest.fixture
def board(db: Database, owner: Actor, coder: str) -> Board:
    return Board(db, owner, coder)


async def refusal(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[str, str]:
    """The code and field of a refused call."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    error = result.structured_content
    assert error is not None
    return error["code"], error["details"].get("field")


async def test_assign_task_assigns_clears_and_refuses_a_stale_revision(
    url: str, secret: str, board: Board, mode: str
) -> None:
    owner, coder = board.owner, board.coder
    board.new("Fix the login redirect")
    call = {"taskId": "CRW-1", "workspaceId": None}
    async with mcp_client(url, secret, mode) as client:
        given = body_of(
            await client.call_tool(
                "assign_task",
                {
                    **call,
                    "idempotencyKey": "a1",
                    "expectedRevision": 1,
                    "assigneeId": coder,
                    "humanOwnerId": owner.user_id,
                },
            )
        )["task"]
        assert (given["assigneeId"], given["assigneeType"]) == (coder, "ai")
        assert (given["humanOwnerId"], given["revision"]) == (owner.user_id, 2)
        cleared = body_of(
            await client.call_tool(
                "assign_task",
                {**call, "idempotencyKey": "a2", "expectedRevision": 2, "assigneeId": None},
            )
        )["task"]
        assert (cleared["assigneeId"], cleared["humanOwnerId"]) == (None, owner.user_id)
        stale = await client.call_tool(
            "assign_task",
            {**call, "idempotencyKey": "a3", "expectedRevision": 1, "assigneeId": coder},
        )
        assert stale.is_error
        assert stale.structured_content is not None
        assert stale.structured_content["code"] == "REVISION_CONFLICT"
        assert stale.structured_content["details"]["currentRevision"] == 3
        nothing = {**call, "idempotencyKey": "a4", "expectedRevision": 3}
        assert await refusal(client, "assign_task", nothing) == ("VALIDATION", "assigneeId")
        events = body_of(
            await client.call_tool(
                "list_task_events", {"taskId": "CRW-1", "eventTypes": ["assignment_changed"]}
            )
        )["events"]
    assert [(e["data"]["toAssigneeId"], e["data"]["toHumanOwnerId"]) for e in events] == [
        (coder, owner.user_id),
        (None, owner.user_id),
    ]


async def test_list_assignee_tasks_pages_one_assignees_tasks_by_cursor(
    url: str, secret: str, board: Board, mode: str
) -> None:
    for n in range(5):
        board.new(f"Code {n}", assignee_id=board.coder, description="Long " * 200)
    board.new("Mine", assignee_id=board.owner.user_id)
    asked = {"assigneeId": board.coder, "projection": "summary", "limit": 2}
    async with mcp_client(url, secret, mode) as client:
        keys: list[str] = []
        cursor = None
        while True:
            result = await client.call_tool(
                "list_assignee_tasks", {**asked, **({"cursor": cursor} if cursor else {})}
            )
            body = body_of(result)
            keys += [row["key"] for row in body["tasks"]]
            assert all("description" not in row for row in body["tasks"])
            assert {row["historyCoverage"] for row in body["tasks"]} == {"complete"}
            assert body["total"] == 5
            if not body["hasMore"]:
                break
            assert len(result.content) == 2  # the note says how to go on
            cursor = body["nextCursor"]
        assert keys == [f"CRW-{n}" for n in range(1, 6)]
        mine = body_of(await client.call_tool("list_assignee_tasks", {"assigneeId": "me"}))
        assert [row["key"] for row in mine["tasks"]] == ["CRW-6"]
        assert "description" not in mine["tasks"][0]  # compact rows, as list_tasks gives
        previews = await client.call_tool(
            "list_assignee_tasks", {"assigneeId": "me", "projection": "preview"}
        )
        assert body_of(previews)["tasks"][0]["descriptionTruncated"] is False
        first = body_of(await client.call_tool("list_assignee_tasks", asked))
        narrowed = {**asked, "status": "review", "cursor": first["nextCursor"]}
        assert await refusal(client, "list_assignee_tasks", narrowed) == ("VALIDATION", "cursor")
        both = {**asked, "offset": 2, "cursor": first["nextCursor"]}
        assert await refusal(client, "list_assignee_tasks", both) == ("VALIDATION", "offset")
        too_long = {**asked, "cursor": "x" * 301}
        assert await refusal(client, "list_assignee_tasks", too_long) == (
            "LIMIT_EXCEEDED",
            "cursor",
        )
        nobody = {"assigneeId": "none"}
        assert await refusal(client, "list_assignee_tasks", nobody) == ("VALIDATION", "assigneeId")


async def test_list_tasks_follows_its_cursor_to_the_end(
    url: str, secret: str, board: Board, mode: str
) -> None:
    for n in range(3):
        board.new(f"Task {n}")
    async with mcp_client(url, secret, mode) as client:
        first = body_of(await client.call_tool("list_tasks", {"limit": 2, "order": "desc"}))
        assert (first["hasMore"], first["nextOffset"], first["total"]) == (True, 2, 3)
        rest = body_of(
            await client.call_tool(
                "list_tasks", {"limit": 2, "order": "desc", "cursor": first["nextCursor"]}
            )
        )
    assert [row["key"] for row in first["tasks"] + rest["tasks"]] == ["CRW-3", "CRW-2", "CRW-1"]
    assert (rest["hasMore"], rest["nextCursor"], rest["nextOffset"]) == (False, None, None)


def test_the_rest_list_takes_the_projection_and_follows_its_cursor(
    url: str, secret: str, board: Board
) -> None:
    for n in range(3):
        board.new(f"Task {n}", description="Text")
    headers = {"Authorization": f"Bearer {secret}"}
    with httpx2.Client(base_url=f"{url}/api/v1/projects/CRW", headers=headers) as api:
        first = api.get("/tasks", params={"limit": 2, "projection": "summary"}).json()
        assert "description" not in first["tasks"][0]
        cursor = first["nextCursor"]
        following = {"limit": 2, "cursor": cursor, "projection": "summary"}
        rest = api.get("/tasks", params=following).json()
        assert [t["number"] for t in first["tasks"] + rest["tasks"]] == [1, 2, 3]
        assert rest["hasMore"] is False
        moved = api.get("/tasks", params={"cursor": cursor, "status": "done"})
        error = moved.json()["error"]
        assert (error["code"], error["details"]["field"]) == ("VALIDATION", "cursor")
