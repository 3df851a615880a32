"""list_activity and post_message through the official SDK client, in both protocol eras."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import TextContent

from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import messages
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    tasks.create_task(
        db, person_actor(user), project="CRW", workspace_id=None, idempotency_key="t-1", title="Fix"
    )
    return user


@pytest.fixture
def secret(db: Database, owner: User) -> str:
    return tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=["read", "messages.write"], project="CRW"
    ).secret


def cursor_part(result: Any) -> str:
    """The cursor the second text part gives: its first line is `cursor: <c>`."""
    assert len(result.content) == 2
    second = result.content[1]
    assert isinstance(second, TextContent)
    first_line = second.text.splitlines()[0]
    assert first_line.startswith("cursor: ")
    assert "since" in second.text
    return first_line.removeprefix("cursor: ")


async def test_the_cursor_in_the_second_part_follows_new_activity_oldest_first(
    url: str, db: Database, owner: User, secret: str, mode: str
) -> None:
    async with mcp_client(url, secret, mode) as client:
        listed = await client.call_tool("list_activity", {"projectId": "CRW"})
        body = body_of(listed)
        cursor = cursor_part(listed)
        assert body["cursor"] == cursor == body["entries"][0]["id"]
        assert body["entries"][0]["type"] == "task.created"
        for n in (1, 2, 3):
            posted = body_of(
                await client.call_tool(
                    "post_message",
                    {
                        "projectId": "CRW",
                        "workspaceId": None,
                        "participantId": owner.id,
                        "body": f"message {n}",
                        "taskId": "CRW-1",
                    },
                )
            )
            assert posted["message"]["length"] == 9
        page = await client.call_tool("list_activity", {"since": cursor, "limit": 2})
        first = body_of(page)["entries"]
        assert [e["type"] for e in first] == ["message.posted", "message.posted"]
        assert [e["taskKey"] for e in first] == ["CRW-1", "CRW-1"]
        rest = await client.call_tool("list_activity", {"since": cursor_part(page)})
        assert len(body_of(rest)["entries"]) == 1
        done = await client.call_tool("list_activity", {"since": cursor_part(rest)})
        assert body_of(done)["entries"] == []
        assert cursor_part(done) == cursor_part(rest)
        bad = await client.call_tool("list_activity", {"since": "yesterday"})
        assert bad.is_error
        assert bad.structured_content is not None
        assert bad.structured_content["details"]["field"] == "since"
        over = await client.call_tool("list_activity", {"limit": 101})
        assert over.is_error
    thread = messages.list_thread(db, person_actor(owner), "CRW", owner.id)
    assert [m.body for m in thread.messages] == ["message 3", "message 2", "message 1"]


async def test_post_message_refuses_unknown_participants_and_is_hidden_without_its_scope(
    url: str, db: Database, owner: User, secret: str, mode: str
) -> None:
    async with mcp_client(url, secret, mode) as client:
        result = await client.call_tool(
            "post_message",
            {"projectId": "CRW", "workspaceId": None, "participantId": "rol_none", "body": "Hi"},
        )
        assert result.is_error
        assert result.structured_content is not None
        assert result.structured_content["code"] == "NOT_FOUND"
        assert result.structured_content["details"]["field"] == "participantId"
    reader = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=["read"], project="CRW"
    ).secret
    async with mcp_client(url, reader, mode, {"X-MCP-Toolsets": "review"}) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert "list_activity" in names
    assert "post_message" not in names
