"""Calls written the way the reference products document them work on the first try, over real
HTTP with the SDK client: workspaceId left out (the project's own is taken) or sent on a read,
snake_case and reference argument names, and a reference product's tool name."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from crewboard.contract.projects import present
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.projects import workspaces
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

ALL = {"X-MCP-Toolsets": "all"}
SCOPES = ["read", "tasks.manage", "specs.write"]
SPEC = "# Exports\n\nAn export stops after ten minutes.\n"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com")
    make_project(db, user, "CRW")  # private
    return user


@pytest.fixture
def space(db: Database, owner: User) -> str:
    """A shared workspace holding project TEAM."""
    made = workspaces.create_workspace(db, person_actor(owner), name="Studio")
    present.create_project(
        db, person_actor(owner), workspace_id=made.id, key="TEAM", name="Team project"
    )
    return made.id


def secret_for(db: Database, user: User) -> str:
    return tokens.issue_token(db, person_actor(user), kind="personal", scopes=SCOPES).secret


async def call(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    return body_of(result)


async def refusal(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert result.is_error, result.content
    error = result.structured_content
    assert isinstance(error, dict)
    return error


async def test_writes_and_reads_take_the_projects_workspace_when_left_out(
    url: str, db: Database, owner: User, space: str, mode: str
) -> None:
    async with mcp_client(url, secret_for(db, owner), mode, ALL) as client:
        private = await call(
            client, "create_task", {"projectId": "CRW", "title": "Ship", "idempotencyKey": "t1"}
        )
        assert private["task"]["key"] == "CRW-1"
        shared = await call(
            client, "create_task", {"projectId": "TEAM", "title": "Ship", "idempotencyKey": "t2"}
        )
        assert shared["task"]["key"] == "TEAM-1"
        # Named, it is still checked: null and another workspace are refused for TEAM.
        for wrong in (None, "wsp_elsewhere"):
            error = await refusal(
                client,
                "create_task",
                {"projectId": "TEAM", "workspaceId": wrong, "title": "X", "idempotencyKey": "t3"},
            )
            assert (error["code"], error["details"]["field"]) == ("VALIDATION", "workspaceId")
            assert error["details"]["expected"] == space
        await call(
            client,
            "create_task",
            {"projectId": "TEAM", "workspaceId": space, "title": "Ok", "idempotencyKey": "t4"},
        )
        uploaded = await call(
            client, "upload_spec_file", {"projectId": "TEAM", "path": "docs/e.md", "content": SPEC}
        )
        assert uploaded["file"]["path"] == "docs/e.md"
        thread = await call(
            client,
            "create_spec_file_comment_thread",
            {"projectId": "TEAM", "path": "docs/e.md", "anchorQuote": "ten minutes", "body": "?"},
        )
        assert thread["thread"]["anchor"]["quote"] == "ten minutes"
        read = await call(
            client,
            "read_spec_file",
            {"projectId": "TEAM", "workspaceId": space, "path": "docs/e.md"},
        )
        assert read["text"] == SPEC
        error = await refusal(
            client,
            "read_spec_file",
            {"projectId": "TEAM", "workspaceId": None, "path": "docs/e.md"},
        )
        assert error["details"]["field"] == "workspaceId"


async def test_reference_names_of_tools_and_arguments_run_our_tools(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret_for(db, owner), mode, ALL) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "list_spec_files" in listed
        assert "list_spec_file" not in listed
        # MySpec writes its arguments in snake_case.
        await call(
            client,
            "upload_spec_file",
            {"project_id": "CRW", "workspace_id": None, "path": "docs/e.md", "content": SPEC},
        )
        files = await call(client, "list_spec_file", {"project_id": "CRW", "trashed": False})
        assert [f["path"] for f in files["files"]] == ["docs/e.md"]
        made = await call(
            client,
            "create_spec_file_comment_thread",
            {"project_id": "CRW", "path": "docs/e.md", "anchor_quote": "ten minutes", "body": "?"},
        )
        assert made["thread"]["comments"][0]["body"] == "?"
        read = await call(
            client, "read_spec_file", {"projectId": "CRW", "workspaceId": None, "path": "docs/e.md"}
        )
        assert read["totalLines"] == 3
        # Pencil names a task's human owner humanAssigneeId.
        task = await call(
            client,
            "create_task",
            {
                "projectId": "CRW",
                "title": "Own it",
                "humanAssigneeId": owner.id,
                "idempotencyKey": "h1",
            },
        )
        got = await call(client, "get_task_context", {"taskId": task["task"]["key"]})
        assert got["task"]["humanOwnerId"] == owner.id
        error = await refusal(
            client,
            "create_task",
            {
                "projectId": "CRW",
                "title": "Twice",
                "humanAssigneeId": owner.id,
                "humanOwnerId": "usr_other",
                "idempotencyKey": "h2",
            },
        )
        assert (error["code"], error["details"]["field"]) == ("VALIDATION", "humanOwnerId")
