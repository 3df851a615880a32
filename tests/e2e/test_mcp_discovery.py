"""MySpec-style discovery through the real server, over the MCP SDK's client (both protocol
eras) and REST: an agent that knows no names searches the projects, opens the most recently
active one, sees its spec files, attachments and sessions, and lists the tasks of one tasks.md
with their text; REST answers the same."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx2
import pytest

from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_task, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

ON = {"projectId": "CRW", "workspaceId": None}
PLAN = "# Plan\n- [ ] Write the migration\n  - two columns\n- [-] Parse the file\n"


@pytest.fixture
def owner(db: Database, clock: ManualClock) -> User:
    user = make_user(db, "alice@example.com")
    make_project(db, user, "CRW", description="The Crewboard web app")
    clock.advance(timedelta(minutes=1))
    make_project(db, user, "OPS", description="Servers")
    clock.advance(timedelta(minutes=1))
    return user


@pytest.fixture
def secret(db: Database, owner: User) -> str:
    scopes = ["read", "specs.write", "tasks.manage"]
    return tokens.issue_token(db, person_actor(owner), kind="personal", scopes=scopes).secret


async def test_an_agent_finds_a_project_its_files_and_the_tasks_of_one_tasks_md(
    url: str, secret: str, mode: str, db: Database, owner: User
) -> None:
    headers = {"X-MCP-Toolsets": "specs,board"}
    async with mcp_client(url, secret, mode, headers) as client:

        async def call(tool: str, arguments: dict[str, Any]) -> Any:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result
            return body_of(result)

        listed = await call("list_projects", {})
        assert [p["key"] for p in listed["projects"]] == ["OPS", "CRW"]
        made = (await call("upload_spec_file", {**ON, "path": "tasks.md", "content": PLAN}))["file"]
        make_task(db, owner, "CRW", "Outside the file")
        listed = await call("list_projects", {})
        assert [p["key"] for p in listed["projects"]] == ["CRW", "OPS"]  # CRW changed last
        found = await call("list_projects", {"q": "CREWBOARD app"})
        assert [p["key"] for p in found["projects"]] == ["CRW"]
        assert found["total"] == 1

        project = await call("get_project", {"projectId": "CRW"})
        assert [f["path"] for f in project["specFiles"]] == ["tasks.md"]
        assert project["counts"]["specFiles"] == 1
        assert project["attachments"] == []
        assert project["counts"]["activeSessions"] == len(project["activeSessions"]) == 0

        by_path = await call(
            "list_tasks", {"projectId": "CRW", "file": "tasks.md", "includeDetails": True}
        )
        assert [t["title"] for t in by_path["tasks"]] == ["Write the migration", "Parse the file"]
        assert "two columns" in by_path["tasks"][0]["description"]
        assert by_path["tasks"][0]["sourceFileId"] == made["id"]
        by_id = await call("list_tasks", {"projectId": "CRW", "file": made["id"]})
        assert [t["key"] for t in by_id["tasks"]] == [t["key"] for t in by_path["tasks"]]
        assert "description" not in by_id["tasks"][0]

        unknown = await client.call_tool("list_tasks", {"projectId": "CRW", "file": "no/tasks.md"})
        assert unknown.is_error
        assert unknown.structured_content is not None
        error = unknown.structured_content
        assert (error["code"], error["details"]["field"]) == ("NOT_FOUND", "file")
        too_long = await client.call_tool("list_projects", {"q": "x" * 201})
        assert too_long.is_error
        assert too_long.structured_content is not None
        assert too_long.structured_content["details"]["field"] == "q"


def test_rest_answers_the_same_search_project_and_file_listing(
    url: str, secret: str, db: Database, owner: User
) -> None:
    with httpx2.Client(
        base_url=f"{url}/api/v1", headers={"Authorization": f"Bearer {secret}"}
    ) as api:
        made = api.post(
            "/projects/CRW/specs", json={"workspaceId": None, "path": "tasks.md", "content": PLAN}
        )
        assert made.status_code == 201, made.text
        file_id = made.json()["file"]["id"]

        assert [p["key"] for p in api.get("/projects").json()["projects"]] == ["CRW", "OPS"]
        found = api.get("/projects", params={"q": "servers"}).json()
        assert [p["key"] for p in found["projects"]] == ["OPS"]
        bad = api.get("/projects", params={"q": "x" * 201})
        assert bad.status_code == 422
        assert bad.json()["error"]["details"]["field"] == "q"

        project = api.get("/projects/CRW").json()
        assert [f["id"] for f in project["specFiles"]] == [file_id]

        tasks = api.get(
            "/projects/CRW/tasks", params={"file": file_id, "includeDetails": "true"}
        ).json()["tasks"]
        assert [t["title"] for t in tasks] == ["Write the migration", "Parse the file"]
        assert "two columns" in tasks[0]["description"]
        refused = api.get("/projects/CRW/tasks", params={"file": "notes.md"})
        assert refused.status_code == 404
        assert refused.json()["error"]["details"]["field"] == "file"
