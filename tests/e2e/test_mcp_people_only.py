"""A tool the caller can never call is not listed to it: tools that speak in a person's name
(`people_only`, the handoff tools) are hidden from agent tokens, and every tool listed to an
agent token or a person's token is called by it without a refusal for who the caller is."""

from __future__ import annotations

from typing import Any

import pytest

from crewboard.contract.catalogue import default_catalogue
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_task, make_user
from tests.support.fuzz import Schema
from tests.support.mcp_client import mcp_client

pytestmark = pytest.mark.anyio

SCOPES = [
    "read",
    "tasks.manage",
    "drafts.create",
    "messages.write",
    "team.manage",
    "specs.write",
    "projects.admin",
]
EVERYTHING = {"X-MCP-Toolsets": "all"}
CATALOGUE = list(default_catalogue())
PEOPLE_ONLY = {t.name for t in CATALOGUE if t.people_only}


def identity_refusal(content: dict[str, Any] | None) -> bool:
    """Whether an error answer refuses the caller for what it is (an agent token, a token)
    rather than for what it asked."""
    if content is None:
        return False
    details = content.get("details") or {}
    return content.get("code") == "HUMAN_IDENTITY_REQUIRED" or (
        content.get("code") == "PERMISSION_DENIED" and "tokenKind" in details
    )


def arguments_for(schema: dict[str, Any], task_id: str) -> dict[str, Any]:
    """The smallest valid arguments, naming the real project and task where asked for."""
    fuzz = Schema(schema)
    found: dict[str, Any] = fuzz.minimal(fuzz.root, "object")
    real = {"projectId": "CRW", "taskId": task_id}
    for name in schema.get("properties", {}):
        if name in real:
            found[name] = real[name]
    return found


def last_if_ending(name: str) -> bool:
    """Calls that end the project (archive, delete) or a token go last."""
    tool = default_catalogue().find(name)
    return tool is not None and (tool.destructive or "archive" in name)


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


def secrets(db: Database, owner: User) -> dict[str, str]:
    person = person_actor(owner)
    return {
        "agent": tokens.issue_token(
            db, person, kind="agent", scopes=SCOPES, project="CRW", name="Agent"
        ).secret,
        "person": tokens.issue_token(db, person, kind="personal", scopes=SCOPES).secret,
    }


async def test_an_agent_token_is_not_listed_the_tools_only_people_may_call(
    url: str, db: Database, owner: User, mode: str
) -> None:
    assert {"create_handoff", "list_handoffs", "update_handoff_action_item"} <= PEOPLE_ONLY
    listed: dict[str, set[str]] = {}
    for kind, secret in secrets(db, owner).items():
        async with mcp_client(url, secret, mode, EVERYTHING) as client:
            listed[kind] = {t.name for t in (await client.list_tools()).tools}
    assert not listed["agent"] & PEOPLE_ONLY
    assert listed["person"] >= PEOPLE_ONLY


async def test_every_tool_listed_to_an_agent_or_a_person_does_not_refuse_who_it_is(
    url: str, db: Database, owner: User, mode: str
) -> None:
    task_id = make_task(db, owner, "CRW")
    refused: list[str] = []
    for kind, secret in secrets(db, owner).items():
        async with mcp_client(url, secret, mode, EVERYTHING) as client:
            listed = (await client.list_tools()).tools
            assert listed, kind
            for tool in sorted(listed, key=lambda t: last_if_ending(t.name)):
                result = await client.call_tool(
                    tool.name, arguments_for(tool.input_schema, task_id)
                )
                if result.is_error and identity_refusal(result.structured_content):
                    refused.append(f"{kind}: {tool.name} {result.structured_content}")
    assert not refused, "\n".join(refused)
