"""tasks.md over MCP, both protocol eras, through the real server (create_app installs the
tasks.md hook): an agent uploads a tasks.md, lists the tasks it made with their file, line and
contentVersion, moves one with expectedVersions for the file, and reads the box back; a stale
file entry fails only that file's tasks."""

from __future__ import annotations

import pytest

from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

BOTH = {"X-MCP-Toolsets": "specs,board"}
ON = {"projectId": "CRW", "workspaceId": None}
PLAN = "# Plan\n- [ ] Write the migration\n  - two columns\n- [-] Parse the file\n"


@pytest.fixture
def secret(db: Database) -> str:
    user: User = make_user(db, "alice@example.com")
    project = make_project(db, user, "CRW")
    scopes = ["read", "specs.write", "tasks.manage"]
    issued = tokens.issue_token(
        db, person_actor(user), kind="agent", scopes=scopes, project=project
    )
    return issued.secret


async def test_an_agent_plans_from_tasks_md_and_its_status_change_rewrites_the_box(
    url: str, secret: str, mode: str
) -> None:
    async with mcp_client(url, secret, mode, BOTH) as client:
        made = body_of(
            await client.call_tool("upload_spec_file", {**ON, "path": "tasks.md", "content": PLAN})
        )["file"]
        listed = body_of(await client.call_tool("list_tasks", {"projectId": "CRW"}))["tasks"]
        assert [(t["title"], t["status"], t["sourceLine"]) for t in listed] == [
            ("Write the migration", "backlog", 2),
            ("Parse the file", "in_progress", 4),
        ]
        assert {t["sourceFileId"] for t in listed} == {made["id"]}
        assert {t["contentVersion"] for t in listed} == {made["contentVersion"]}

        moved = body_of(
            await client.call_tool(
                "set_task_status",
                {
                    **ON,
                    "idempotencyKey": "finish-1",
                    "changes": [{"taskId": listed[0]["key"], "status": "done"}],
                    "expectedVersions": {made["id"]: made["contentVersion"]},
                },
            )
        )
        assert (moved["succeeded"], moved["failed"]) == (1, 0)
        read = body_of(
            await client.call_tool("read_spec_file", {"projectId": "CRW", "path": "tasks.md"})
        )
        assert read["text"] == PLAN.replace("- [ ] Write", "- [x] Write")
        assert read["revision"] == 2

        # The version listed before that save is stale now: only this file's task fails.
        stale = await client.call_tool(
            "set_task_status",
            {
                **ON,
                "idempotencyKey": "again-1",
                "changes": [{"taskId": listed[1]["key"], "status": "done"}],
                "expectedVersions": {made["id"]: made["contentVersion"]},
            },
        )
        answer = body_of(stale)
        assert (answer["succeeded"], answer["failed"]) == (0, 1)
        error = answer["outcomes"][0]["error"]
        assert error["code"] == "REVISION_CONFLICT"
        assert error["details"]["fileId"] == made["id"]
        assert error["details"]["currentRevision"] == 2
        again = body_of(
            await client.call_tool("read_spec_file", {"projectId": "CRW", "path": "tasks.md"})
        )
        assert again["revision"] == 2
