"""get_project_memory through the official SDK client, in both protocol eras."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from mcp_types import TextContent

from crewboard.contract import memory_present as memory_edits
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW", collections=["Architecture", "Runbooks"])
    return user


def file(db: Database, owner: User, title: str, **fields: Any) -> str:
    def work(uow: Any) -> dict[str, Any]:
        found = uow.projects.get_with_role("CRW", owner.id)
        return memory.file_record(
            uow,
            person_actor(owner),
            found[0],
            title=title,
            summary=f"About {title}",
            content=f"The text of {title}.",
            source_draft_id=None,
            **{"collection": None, "document": None, **fields},
        )

    return str(db.write(work).id)


def reader_secret(db: Database, owner: User, toolsets: list[str] | None = None) -> str:
    issued = tokens.issue_token(
        db,
        person_actor(owner),
        kind="agent",
        scopes=["read"],
        project="CRW",
        **({"toolsets": toolsets} if toolsets else {}),
    )
    return issued.secret


async def test_get_project_memory_is_a_read_only_memory_tool_with_its_limits(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(
        url, reader_secret(db, owner), mode, {"X-MCP-Toolsets": "memory"}
    ) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    tool = listed["get_project_memory"]
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is True
    properties = tool.input_schema["properties"]
    assert properties["ids"]["maxItems"] == 50
    assert properties["ids"]["type"] == ["array", "null"]
    assert properties["limit"]["maximum"] == 200
    assert properties["document"]["enum"] == [
        "overview",
        "context",
        "decisions",
        "notes",
        "legal",
        None,
    ]
    assert "projectId" not in tool.input_schema.get("required", [])


async def test_get_project_memory_returns_records_documents_and_a_page_note(
    url: str, db: Database, owner: User, mode: str
) -> None:
    older = file(db, owner, "Layers", collection="Architecture", document="decisions")
    file(db, owner, "Restart", collection="Runbooks")
    memory_edits.set_document(
        db, person_actor(owner), "CRW", "decisions", "Use SQLite.", expected_version=0
    )
    async with mcp_client(url, reader_secret(db, owner), mode) as client:
        page = await client.call_tool("get_project_memory", {"projectId": "CRW", "limit": 1})
        filed = await client.call_tool(
            "get_project_memory",
            {"document": "decisions", "includeContent": False, "workspaceId": None},
        )
        by_id = await client.call_tool("get_project_memory", {"ids": [older]})

    first = body_of(page)
    assert (first["total"], first["nextOffset"], len(first["records"])) == (2, 1, 1)
    assert first["documents"][0]["content"] == "Use SQLite."
    assert len(page.content) == 2
    note = page.content[1]
    assert isinstance(note, TextContent)
    assert "offset 1" in note.text
    decisions = body_of(filed)
    assert [r["id"] for r in decisions["records"]] == [older]
    assert "content" not in decisions["records"][0]
    assert decisions["documents"][0]["length"] == len("Use SQLite.")
    only = body_of(by_id)
    assert ([r["id"] for r in only["records"]], only["documents"]) == ([older], [])
    assert only["records"][0]["content"] == "The text of Layers."
    assert len(by_id.content) == 1


async def test_bad_arguments_are_error_results_naming_the_field(
    url: str, db: Database, owner: User, mode: str
) -> None:
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"document": "legalese"}, "VALIDATION", "document"),
        ({"projectId": "CRW", "collection": "Lore"}, "VALIDATION", "collection"),
        ({"ids": [f"mem_{n}" for n in range(51)]}, "LIMIT_EXCEEDED", "ids"),
        ({"limit": 0}, "VALIDATION", "limit"),
        ({"limit": 201}, "VALIDATION", "limit"),
        ({"offset": -1}, "VALIDATION", "offset"),
        ({"collection": "c" * 201}, "LIMIT_EXCEEDED", "collection"),
        ({"status": "approved"}, "VALIDATION", "status"),
    ]
    async with mcp_client(url, reader_secret(db, owner), mode) as client:
        for arguments, code, field in cases:
            result = await client.call_tool("get_project_memory", arguments)
            assert result.is_error, arguments
            assert result.structured_content is not None
            assert result.structured_content["code"] == code, arguments
            assert result.structured_content["details"]["field"] == field, arguments
            assert result.structured_content["message"]
            if field == "collection" and code == "VALIDATION":
                accepted = result.structured_content["details"]["accepted"]
                assert accepted == ["Architecture", "Runbooks"]
        missing = await client.call_tool("get_project_memory", {"projectId": "NOPE"})
    assert missing.structured_content is not None
    assert missing.structured_content["code"] == "NOT_FOUND"


# --- the same reads over REST ------------------------------------------------------------------


def test_rest_reads_a_projects_memory_and_one_record(url: str, db: Database, owner: User) -> None:
    kept = file(db, owner, "Layers", collection="Architecture")
    file(db, owner, "Restart", collection="Runbooks")
    headers = {"Authorization": f"Bearer {reader_secret(db, owner)}"}
    with httpx2.Client(base_url=url, headers=headers) as http:
        listed = http.get(
            "/api/v1/projects/CRW/memory",
            params={"collection": "architecture", "includeContent": "false"},
        )
        by_ids = http.get("/api/v1/projects/CRW/memory", params={"ids": f"{kept},mem_x"})
        one = http.get(f"/api/v1/memory/{kept}")
        bad = http.get("/api/v1/projects/CRW/memory", params={"limit": "500"})
        missing = http.get("/api/v1/memory/mem_missing")

    assert listed.status_code == 200, listed.text
    assert [r["id"] for r in listed.json()["records"]] == [kept]
    assert "content" not in listed.json()["records"][0]
    assert [r["id"] for r in by_ids.json()["records"]] == [kept]
    assert (one.status_code, one.json()["content"]) == (200, "The text of Layers.")
    assert (bad.status_code, bad.json()["error"]["details"]["field"]) == (422, "limit")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "NOT_FOUND")
