"""The proposal tools through the official SDK client, in both protocol eras."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import TextContent

from crewboard.contract.projects import present
from crewboard.contract.review.present_proposals import proposal_page_view
from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import proposals
from crewboard.storage.database import Database
from tests.support.factories import count_rows, make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

PLANNING_TOOLS = ["propose_task", "propose_task_update", "propose_task_delete"]
TEAM_TOOLS = ["propose_role", "propose_composition"]
SCOPES = ["read", "tasks.manage", "team.manage"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    tasks.create_task(
        db, person_actor(user), project="CRW", workspace_id=None, idempotency_key="t-1", title="Fix"
    )
    present.add_team_role(db, person_actor(user), project="CRW", name="Quill", role="Writer")
    return user


def secret(db: Database, owner: User, scopes: list[str] = SCOPES) -> str:
    return tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=scopes, project="CRW"
    ).secret


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error
    assert result.structured_content is not None
    return dict(result.structured_content)


async def test_the_tools_are_listed_in_their_toolsets_as_retry_safe_writes(
    url: str, db: Database, owner: User, mode: str
) -> None:
    # Task proposals are planning tools (they reshape the board through people).
    async with mcp_client(url, secret(db, owner), mode, {"X-MCP-Toolsets": "planning"}) as client:
        planning = {t.name: t for t in (await client.list_tools()).tools}
    async with mcp_client(url, secret(db, owner), mode, {"X-MCP-Toolsets": "team"}) as client:
        teams = {t.name: t for t in (await client.list_tools()).tools}
    assert set(PLANNING_TOOLS) <= set(planning)
    assert set(planning).isdisjoint(TEAM_TOOLS)
    assert set(TEAM_TOOLS) <= set(teams)
    assert set(teams).isdisjoint(PLANNING_TOOLS)
    for tool in [*(planning[n] for n in PLANNING_TOOLS), *(teams[n] for n in TEAM_TOOLS)]:
        assert tool.annotations is not None
        assert not tool.annotations.read_only_hint  # the protocol default, not sent
        assert tool.annotations.idempotent_hint is True
        assert "idempotencyKey" in tool.input_schema["properties"]
        assert "workspaceId" not in tool.input_schema["properties"]  # taken, not listed
    seats = teams["propose_composition"].input_schema["properties"]["seats"]
    assert (seats["minItems"], seats["maxItems"]) == (1, 12)
    headers = {"X-MCP-Toolsets": "all"}
    async with mcp_client(
        url, secret(db, owner, ["read", "tasks.manage"]), mode, headers
    ) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert set(PLANNING_TOOLS) <= names
    assert names.isdisjoint(TEAM_TOOLS)  # they need team.manage


async def test_each_proposal_tool_leaves_a_card_and_changes_nothing_else(
    url: str, db: Database, owner: User, mode: str
) -> None:
    calls = [
        ("propose_task", {"projectId": "CRW", "title": "Docs", "roleHint": "quill"}),
        ("propose_task_update", {"taskId": "CRW-1", "changes": {"status": "ready_for_ai"}}),
        ("propose_task_delete", {"taskId": "CRW-1", "reason": "Duplicate."}),
        ("propose_role", {"projectId": "CRW", "name": "Mira", "role": "Illustrator"}),
        (
            "propose_composition",
            {"projectId": "CRW", "seats": [{"role": "Editor", "typeHint": "ai"}]},
        ),
    ]
    async with mcp_client(url, secret(db, owner), mode) as client:
        for name, arguments in calls:
            result = await client.call_tool(
                name, {**arguments, "workspaceId": None, "idempotencyKey": name}
            )
            made = body_of(result)["proposal"]
            assert made["status"] == "pending", name
            assert len(result.content) == 2
            assert isinstance(result.content[1], TextContent)
            again = body_of(
                await client.call_tool(
                    name, {**arguments, "workspaceId": None, "idempotencyKey": name}
                )
            )
            assert again["proposal"]["id"] == made["id"]
    assert (count_rows(db, "proposals"), count_rows(db, "tasks"), count_rows(db, "team_roles")) == (
        5,
        1,
        1,
    )
    listed = proposal_page_view(proposals.list_proposals(db, person_actor(owner), project="CRW"))[
        "proposals"
    ]
    kinds = {c["kind"]: c for c in listed}
    assert kinds["task_update"]["payload"]["changes"] == {
        "status": {"from": "backlog", "to": "ready_for_ai"}
    }


async def test_bad_proposals_are_refused_naming_the_field(
    url: str, db: Database, owner: User, mode: str
) -> None:
    bad = [
        ("propose_composition", {"projectId": "CRW", "seats": []}, "VALIDATION", "seats"),
        (
            "propose_composition",
            {"projectId": "CRW", "seats": [{"role": f"R{n}"} for n in range(13)]},
            "LIMIT_EXCEEDED",
            "seats",
        ),
        (
            "propose_task",
            {"projectId": "CRW", "title": "x", "typeHint": "poem"},
            "VALIDATION",
            "typeHint",
        ),
        (
            "propose_task_update",
            {"taskId": "CRW-1", "changes": {"status": "finished"}},
            "VALIDATION",
            "changes.status",
        ),
        ("propose_task_update", {"taskId": "CRW-1", "changes": {}}, "VALIDATION", "changes"),
        (
            "propose_task_update",
            {"taskId": "CRW-1", "changes": {"dueDate": "2026-01-01"}},
            "VALIDATION",
            "changes.dueDate",
        ),
    ]
    async with mcp_client(url, secret(db, owner), mode) as client:
        for name, arguments, code, field in bad:
            error = error_of(await client.call_tool(name, {**arguments, "workspaceId": None}))
            assert (error["code"], error["details"]["field"]) == (code, field), name
    assert count_rows(db, "proposals") == 0
