"""MCP prompts through the official SDK client, in both protocol eras."""

from __future__ import annotations

import json
import re
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, MCPError

from crewboard.contract.projects import present
from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import mcp_client

pytestmark = pytest.mark.anyio

ALL = ["read", "tasks.manage", "drafts.create"]
INVALID_PARAMS = -32602


@pytest.fixture
def owner(db: Database) -> User:
    """CRW with a state page, an AI seat holding two ready tasks and one nobody holds; OTH,
    another person's project."""
    user = make_user(db, "owner@example.com")
    actor = person_actor(user)
    make_project(db, user, "CRW")
    seat = present.add_team_role(db, actor, project="CRW", name="Coder", kind="ai")
    for title, priority, assignee in (
        ("Tidy the logs", "low", seat["id"]),
        ("Fix the login redirect", "high", seat["id"]),
        ("Nobody's yet", "high", None),
    ):
        tasks.create_task(
            db,
            actor,
            project="CRW",
            workspace_id=None,
            idempotency_key=title,
            title=title,
            status="ready_for_ai",
            priority=priority,
            assignee_id=assignee,
        )
    present.update_project_state(
        db, actor, project="CRW", workspace_id=None, content="## Now\n- login", expected_revision=0
    )
    other = make_user(db, "other@example.com")
    make_project(db, other, "OTH")
    return user


def secret(db: Database, user: User, scopes: list[str] = ALL) -> str:
    return tokens.issue_token(
        db, person_actor(user), kind="agent", scopes=scopes, project="CRW"
    ).secret


def text_of(result: types.GetPromptResult) -> str:
    (message,) = result.messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    return message.content.text


def call_in(text: str, tool: str) -> dict[str, Any]:
    """The arguments the prompt gives for `tool` (its compact JSON right after the name)."""
    match = re.search(rf"{tool} (\{{.*?\}})(?=[ .(]|$)", text, flags=re.MULTILINE)
    assert match, f"{tool} is not called in:\n{text}"
    parsed: dict[str, Any] = json.loads(match.group(1))
    return parsed


async def refusal(client: Client, name: str, arguments: dict[str, str]) -> MCPError:
    with pytest.raises(MCPError) as refused:
        await client.get_prompt(name, arguments)
    return refused.value


async def test_prompts_are_offered_only_with_the_tools_they_name(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode) as client:
        full = {p.name: p for p in (await client.list_prompts()).prompts}
    async with mcp_client(url, secret(db, owner, ["read"]), mode) as client:
        reader = [p.name for p in (await client.list_prompts()).prompts]
    async with mcp_client(url, secret(db, owner), mode, {"X-MCP-Tools": "get_task"}) as client:
        narrowed = [p.name for p in (await client.list_prompts()).prompts]
    assert list(full) == ["start_session", "take_next_task", "hand_in_result"]
    assert all(p.title and p.description for p in full.values())
    assert [(a.name, a.required) for a in full["start_session"].arguments or []] == [
        ("projectId", True)
    ]
    assert [a.name for a in full["hand_in_result"].arguments or []] == ["taskId"]
    assert reader == ["start_session"]  # no set_task_status, no submit_result
    assert narrowed == []
    async with mcp_client(url, secret(db, owner, ["read"]), mode) as client:
        hidden = await refusal(client, "hand_in_result", {"taskId": "CRW-1"})
    assert hidden.code == INVALID_PARAMS
    assert hidden.data["accepted"] == ["start_session"]


async def test_start_session_embeds_the_state_page_and_names_the_calls(
    url: str, db: Database, owner: User, mode: str
) -> None:
    planning = {"X-MCP-Toolsets": "board,planning"}  # update_project_state is a planning tool
    async with mcp_client(url, secret(db, owner), mode, planning) as client:
        text = text_of(await client.get_prompt("start_session", {"projectId": "CRW"}))
    assert "## Now\n- login" in text
    assert call_in(text, "get_project_state") == {"projectId": "CRW"}
    assert call_in(text, "update_project_state") == {
        "projectId": "CRW",
        "expectedRevision": 1,
        "content": "<the whole new page>",
    }
    assert call_in(text, "list_tasks")["status"] == ["in_progress", "ready_for_ai"]


async def test_take_next_task_picks_the_highest_priority_ready_task_that_has_an_assignee(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode) as client:
        text = text_of(await client.get_prompt("take_next_task", {"projectId": "CRW"}))
    assert text.index("CRW-2 Fix the login redirect") < text.index("CRW-1 Tidy the logs")
    assert "CRW-3" not in text
    assert call_in(text, "get_task") == {"taskId": "CRW-2"}
    assert call_in(text, "set_task_status") == {
        "projectId": "CRW",
        "idempotencyKey": "claim-CRW-2-r1",
        "changes": [{"taskId": "CRW-2", "status": "in_progress"}],
        "expectedVersions": {"CRW-2": 1},
    }
    assert "hand_in_result" in text


async def test_hand_in_result_fills_in_the_submit_result_call(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode) as client:
        text = text_of(await client.get_prompt("hand_in_result", {"taskId": "CRW-2"}))
    call = call_in(text, "submit_result")
    assert {k: call[k] for k in ("projectId", "taskId", "expectedRevision")} == {
        "projectId": "CRW",
        "taskId": "CRW-2",
        "expectedRevision": 1,
    }
    assert "workspaceId" not in call  # the project's own is taken (an unlisted argument)
    assert {"idempotencyKey", "contextReceiptId", "title", "content", "references"} <= set(call)


REFUSALS = [
    ("no_such_prompt", {}, "name"),
    ("start_session", {}, "projectId"),
    ("start_session", {"projectId": "  "}, "projectId"),
    ("start_session", {"projectId": "CRW", "extra": "1"}, "extra"),
    ("start_session", {"projectId": "C" * 201}, "projectId"),
    ("hand_in_result", {"projectId": "CRW"}, "projectId"),
]


@pytest.mark.parametrize(
    "case", REFUSALS, ids=[f"{n}-{f}-{i}" for i, (n, _, f) in enumerate(REFUSALS)]
)
async def test_an_unknown_prompt_or_a_bad_argument_is_refused_naming_it(
    url: str, db: Database, owner: User, mode: str, case: tuple[str, dict[str, str], str]
) -> None:
    name, arguments, field = case
    async with mcp_client(url, secret(db, owner), mode) as client:
        refused = await refusal(client, name, arguments)
    assert refused.code == INVALID_PARAMS
    assert refused.data["field"] == field
    assert refused.message


async def test_a_project_or_task_the_caller_cannot_open_is_refused_as_not_found(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode) as client:
        other = await refusal(client, "start_session", {"projectId": "OTH"})
        missing = await refusal(client, "take_next_task", {"projectId": "NOPE"})
        task = await refusal(client, "hand_in_result", {"taskId": "OTH-1"})
    for error in (other, missing, task):
        assert error.code == INVALID_PARAMS
        assert error.data["code"] == "NOT_FOUND"
    assert other.message.replace("OTH", "X") == missing.message.replace("NOPE", "X")
