"""The artifact tools over real HTTP with the official SDK client, both protocol eras: an agent
versions a mockup (create, a delta, a full revision, a rollback), reads a file in windows, and
is refused with words it can act on (a stale revision count, a binary file, a revision no
longer kept, a read-only token)."""

from __future__ import annotations

import base64

import pytest

from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

TOOLSETS = {"X-MCP-Toolsets": "artifacts"}
ON = {"projectId": "CRW", "workspaceId": None}
LOGO = b"\x89PNG\r\n\x1a\n" + bytes(range(200))


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def secret(db: Database, owner: User) -> str:
    return tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=["read", "specs.write"]
    ).secret


async def test_an_agent_versions_a_mockup_and_reads_it_back(
    url: str, secret: str, mode: str
) -> None:
    async with mcp_client(url, secret, mode, TOOLSETS) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names >= {
            "list_artifacts", "get_artifact", "read_artifact_file", "create_artifact",
            "write_artifact_revision", "rollback_artifact",
        }  # fmt: skip
        made = body_of(
            await client.call_tool(
                "create_artifact",
                {**ON, "slug": "login", "files": [
                    {"path": "index.html", "content": "<h1>Login</h1>\n"},
                    {"path": "logo.png", "contentBase64": base64.b64encode(LOGO).decode()},
                ]},
            )
        )  # fmt: skip
        assert made["artifact"]["revisionCount"] == 1
        delta = body_of(
            await client.call_tool(
                "write_artifact_revision",
                {**ON, "artifactId": "login", "baseRevision": 1, "expectedVersion": 1,
                 "files": [{"path": "site.css", "content": "h1 { color: navy }\n"}]},
            )
        )  # fmt: skip
        assert [f["path"] for f in delta["files"]] == ["index.html", "logo.png", "site.css"]
        stale = await client.call_tool(
            "write_artifact_revision",
            {**ON, "artifactId": "login", "expectedVersion": 1,
             "files": [{"path": "index.html", "content": "x\n"}]},
        )  # fmt: skip
        assert stale.is_error
        assert isinstance(stale.structured_content, dict)
        assert stale.structured_content["code"] == "REVISION_CONFLICT"
        assert "get_artifact" in stale.structured_content["message"]
        back = body_of(
            await client.call_tool(
                "rollback_artifact",
                {**ON, "artifactId": made["artifact"]["id"], "revision": 1, "expectedVersion": 2},
            )
        )
        assert back["revision"]["kind"] == "rollback"
        shown = body_of(
            await client.call_tool("get_artifact", {"projectId": "CRW", "artifactId": "login"})
        )
        assert [f["path"] for f in shown["files"]] == ["index.html", "logo.png"]
        assert shown["files"][1]["checksum"].startswith("sha256:")
        assert [r["revision"] for r in shown["revisions"]] == [3, 2, 1]
        read = body_of(
            await client.call_tool(
                "read_artifact_file",
                {"projectId": "CRW", "artifactId": "login", "path": "site.css", "revision": 2},
            )
        )
        assert read["text"] == "h1 { color: navy }\n"
        binary = await client.call_tool(
            "read_artifact_file", {"projectId": "CRW", "artifactId": "login", "path": "logo.png"}
        )
        assert binary.is_error
        assert isinstance(binary.structured_content, dict)
        assert binary.structured_content["details"]["field"] == "path"
        listed = body_of(await client.call_tool("list_artifacts", {"projectId": "CRW"}))
        assert [(a["slug"], a["revisionCount"]) for a in listed["artifacts"]] == [("login", 3)]


async def test_bad_files_are_refused_naming_the_field(url: str, secret: str, mode: str) -> None:
    async with mcp_client(url, secret, mode, TOOLSETS) as client:
        for files, field in (
            ([{"path": "a.txt"}], "files[0].content"),
            ([{"path": "a.txt", "content": "x", "contentBase64": "eA=="}], "files[0].content"),
            ([{"path": "a.bin", "contentBase64": "not base64!"}], "files[0].contentBase64"),
            ([{"path": "../a.txt", "content": "x"}], "files[0]"),
        ):
            refused = await client.call_tool(
                "create_artifact", {**ON, "slug": "bad", "files": files}
            )
            assert refused.is_error, files
            assert isinstance(refused.structured_content, dict)
            assert refused.structured_content["details"]["field"] == field, files
        empty = await client.call_tool("create_artifact", {**ON, "slug": "bad", "files": []})
        assert empty.is_error


async def test_a_read_only_token_reads_but_cannot_write(
    url: str, db: Database, owner: User, mode: str
) -> None:
    reader = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=["read"]).secret
    async with mcp_client(url, reader, mode, TOOLSETS) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "list_artifacts" in names
        assert "create_artifact" not in names


async def test_a_delta_on_an_older_base_is_refused_unless_merged_onto_the_newest(
    url: str, secret: str, mode: str
) -> None:
    """Revision 2 changed index.html; a delta built on revision 1 (with the current count)
    would bring the old page back: refused naming both revisions, or merged when asked."""
    async with mcp_client(url, secret, mode, TOOLSETS) as client:
        body_of(
            await client.call_tool(
                "create_artifact",
                {**ON, "slug": "login", "files": [{"path": "index.html", "content": "v1\n"}]},
            )
        )
        body_of(
            await client.call_tool(
                "write_artifact_revision",
                {**ON, "artifactId": "login", "baseRevision": 1, "expectedVersion": 1,
                 "files": [{"path": "index.html", "content": "v2\n"}]},
            )
        )  # fmt: skip
        delta = {
            **ON, "artifactId": "login", "baseRevision": 1, "expectedVersion": 2,
            "files": [{"path": "site.css", "content": "h1 {}\n"}],
        }  # fmt: skip
        stale = await client.call_tool("write_artifact_revision", delta)
        assert stale.is_error
        assert isinstance(stale.structured_content, dict)
        assert stale.structured_content["code"] == "REVISION_CONFLICT"
        details = stale.structured_content["details"]
        assert (details["field"], details["baseRevision"], details["currentRevision"]) == (
            "baseRevision", 1, 2,
        )  # fmt: skip
        merged = body_of(
            await client.call_tool("write_artifact_revision", {**delta, "mergeOntoCurrent": True})
        )
        assert merged["revision"]["baseRevision"] == 2
        page = body_of(
            await client.call_tool(
                "read_artifact_file",
                {"projectId": "CRW", "artifactId": "login", "path": "index.html"},
            )
        )
        assert page["text"] == "v2\n"
