"""The spec file tools end to end: over real HTTP with the SDK client in both protocol eras,
and over stdio (`crewboard mcp` as a subprocess in a working folder of its own), where the
tools may read and write the caller's disk, inside that folder only."""

from __future__ import annotations

import base64
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from sqlalchemy.engine import URL

from crewboard.contract.specs import present as files
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.specs import file_lookup
from crewboard.services.views import iso
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support.factories import grant, make_project, make_user
from tests.support.mcp_client import MODES, body_of, mcp_client

pytestmark = pytest.mark.anyio

BUDGET = 48 * 1024  # bytes of the first text part of any answer
SPECS = {"X-MCP-Toolsets": "specs"}
WRITER = ["read", "specs.write"]
ON = {"projectId": "CRW", "workspaceId": None}
READ_TOOLS = {"list_spec_files", "get_spec_file", "read_spec_file"}
WRITE_TOOLS = {
    "upload_spec_file",
    "update_spec_file",
    "move_spec_file_to_trash",
    "restore_spec_file_from_trash",
}
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com")
    make_project(db, user, "CRW")
    return user


def secret_for(db: Database, user: User, scopes: list[str], name: str | None = None) -> str:
    issued = tokens.issue_token(db, person_actor(user), kind="personal", scopes=scopes, name=name)
    return issued.secret


def spec_file_tools(listed: types.ListToolsResult) -> set[str]:
    """The listed tools of the ones these tests cover: the specs toolset also holds the
    attachment and comment tools (tests/e2e/test_mcp_spec_comments.py)."""
    return {t.name for t in listed.tools} & (READ_TOOLS | WRITE_TOOLS | {"download_spec_file"})


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    """The error result's {code, message, details}; fails on a success."""
    assert result.is_error, result.content
    error = result.structured_content
    assert isinstance(error, dict)
    assert error["message"]
    return error


def first_text(result: types.CallToolResult) -> str:
    part = result.content[0]
    assert isinstance(part, types.TextContent)
    return part.text


async def read_whole(client: Client, path: str, limit: int | None = None) -> tuple[str, int]:
    """The file's text read window by window through nextOffset, and how many reads it took;
    every answer checked against the budget."""
    pieces: list[str] = []
    offset: int | None = 1
    reads = 0
    while offset is not None:
        arguments = {"projectId": "CRW", "path": path, "offset": offset}
        if limit is not None:
            arguments["limit"] = limit
        result = await client.call_tool("read_spec_file", arguments)
        assert len(first_text(result).encode()) <= BUDGET
        window = body_of(result)
        assert window["offset"] == offset
        pieces.append(window["text"])
        reads += 1
        following = window["nextOffset"]
        assert following is None or following == offset + window["lines"] > offset
        offset = following
    return "".join(pieces), reads


# --- over HTTP, both protocol eras ----------------------------------------------------------


async def test_text_and_binary_uploads_are_listed_and_described(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITER), mode, SPECS) as client:
        text = await client.call_tool(
            "upload_spec_file", {**ON, "path": "docs//./plan.md", "content": "# Plan\nStep 1\n"}
        )
        made = body_of(text)
        assert made["created"] is True
        assert made["file"]["path"] == "docs/plan.md"  # normalised
        assert made["file"]["kind"] == "text"
        assert made["file"]["totalLines"] == 2
        encoded = base64.b64encode(PNG).decode()
        picture = body_of(
            await client.call_tool(
                "upload_spec_file", {**ON, "path": "assets/logo.png", "contentBase64": encoded}
            )
        )["file"]
        assert picture["kind"] == "binary"
        assert picture["size"] == len(PNG)
        assert picture["totalLines"] is None

        listed = body_of(await client.call_tool("list_spec_files", {"projectId": "CRW"}))
        assert [f["path"] for f in listed["files"]] == ["assets/logo.png", "docs/plan.md"]
        assert listed["total"] == 2
        assert listed["nextOffset"] is None
        folder = body_of(
            await client.call_tool("list_spec_files", {"projectId": "CRW", "path": "docs/"})
        )
        assert [f["path"] for f in folder["files"]] == ["docs/plan.md"]
        page = body_of(await client.call_tool("list_spec_files", {"projectId": "CRW", "limit": 1}))
        assert (len(page["files"]), page["total"], page["nextOffset"]) == (1, 2, 1)

        by_path = body_of(
            await client.call_tool(
                "get_spec_file", {"projectId": "CRW", "path": "docs/plan.md", "revisions": 5}
            )
        )
        by_id = body_of(
            await client.call_tool(
                "get_spec_file", {"projectId": "CRW", "fileId": made["file"]["id"]}
            )
        )
        assert by_id["file"] == by_path["file"] == made["file"]
        assert by_path["file"]["contentVersion"].startswith("cv_")
        (first,) = by_path["revisions"]
        assert first["revision"] == 1
        assert first["savedBy"]["userId"] == owner.id

        # A binary file has no lines: the refusal says where to get it instead.
        binary = error_of(
            await client.call_tool(
                "read_spec_file", {"projectId": "CRW", "path": "assets/logo.png"}
            )
        )
        assert binary["code"] == "VALIDATION"
        assert "download_spec_file" in binary["message"]
        again = error_of(
            await client.call_tool(
                "upload_spec_file", {**ON, "path": "docs/plan.md", "content": "x"}
            )
        )
        assert again["code"] == "ALREADY_EXISTS"
        assert again["details"]["field"] == "path"


async def test_an_upload_takes_exactly_one_source_and_names_the_field_it_refuses(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITER), mode, SPECS) as client:
        cases = [
            ("content", {"path": "a.md"}),
            ("content", {"path": "a.md", "content": None}),
            ("content", {"path": "a.md", "content": "x", "contentBase64": "eA=="}),
            ("contentBase64", {"path": "a.md", "contentBase64": "not base64!"}),
            ("path", {"path": "../outside.md", "content": "x"}),
            ("path", {"path": "/etc/passwd", "content": "x"}),
        ]
        for field, arguments in cases:
            refused = error_of(await client.call_tool("upload_spec_file", {**ON, **arguments}))
            assert refused["code"] == "VALIDATION", arguments
            assert refused["details"]["field"] == field, arguments
        listed = body_of(await client.call_tool("list_spec_files", {"projectId": "CRW"}))
        assert listed["total"] == 0
        empty = body_of(
            await client.call_tool("upload_spec_file", {**ON, "path": "empty.md", "content": ""})
        )
        assert (empty["file"]["size"], empty["file"]["totalLines"]) == (0, 0)


async def test_windows_followed_by_next_offset_reassemble_the_file_exactly(
    url: str, db: Database, owner: User, mode: str
) -> None:
    # Windows end on the line limit and on the answer's room; CRLF lines, non-ASCII text and a
    # last line without a newline come back byte for byte.
    lines = [
        f"Line {n}: {'é' * (n % 50)}ü€" + ("\r\n" if n % 7 == 0 else "\n") for n in range(1, 4001)
    ]
    text = "".join(lines) + "no newline at the end"
    async with mcp_client(url, secret_for(db, owner, WRITER), mode, SPECS) as client:
        body_of(
            await client.call_tool("upload_spec_file", {**ON, "path": "big.md", "content": text})
        )
        whole, reads = await read_whole(client, "big.md")
        assert whole == text
        assert reads > 2  # 4,001 lines do not fit two windows of 2,000 in 48 KiB answers
        small, small_reads = await read_whole(client, "big.md", limit=1500)
        assert small == text
        assert small_reads >= 3

        window = body_of(
            await client.call_tool(
                "read_spec_file", {"projectId": "CRW", "path": "big.md", "offset": 2, "limit": 3}
            )
        )
        assert window["text"] == "".join(lines[1:4])
        assert (window["lines"], window["totalLines"], window["nextOffset"]) == (3, 4001, 5)
        assert window["truncated"] is False
        last = body_of(
            await client.call_tool(
                "read_spec_file", {"projectId": "CRW", "path": "big.md", "offset": 4001}
            )
        )
        assert (last["text"], last["nextOffset"], last["truncated"]) == (
            "no newline at the end",
            None,
            False,
        )
        past = error_of(
            await client.call_tool(
                "read_spec_file", {"projectId": "CRW", "path": "big.md", "offset": 4002}
            )
        )
        assert past["details"]["field"] == "offset"


async def test_long_lines_never_make_an_answer_over_48_kib(
    url: str, db: Database, owner: User, mode: str
) -> None:
    # A control character takes six bytes in JSON (\u0001), "€" three in UTF-8: 9,000
    # characters of them per line are 30 to 54 KB of answer each.
    lines = [("\x01€" if n % 2 else "x€") * 4_500 + "\n" for n in range(12)]
    text = "".join(lines)
    huge = "y" * 60_000 + "\n" + "after\n"  # one line longer than any answer holds
    async with mcp_client(url, secret_for(db, owner, WRITER), mode, SPECS) as client:
        await client.call_tool("upload_spec_file", {**ON, "path": "long.md", "content": text})
        await client.call_tool("upload_spec_file", {**ON, "path": "huge.md", "content": huge})
        whole, reads = await read_whole(client, "long.md")
        assert whole == text
        assert reads >= 12  # no more than one such line fits an answer
        cut = await client.call_tool("read_spec_file", {"projectId": "CRW", "path": "huge.md"})
        assert len(first_text(cut).encode()) <= BUDGET
        window = body_of(cut)
        assert window["truncated"] is True
        assert window["lines"] == 1
        assert 0 < len(window["text"]) < 60_000
        assert huge.startswith(window["text"])
        assert window["nextOffset"] == 2
        rest = body_of(
            await client.call_tool(
                "read_spec_file", {"projectId": "CRW", "path": "huge.md", "offset": 2}
            )
        )
        assert rest["text"] == "after\n"


async def test_a_save_from_a_stale_version_is_refused_naming_who_saved_and_when(
    url: str, db: Database, owner: User, clock: ManualClock, mode: str
) -> None:
    bob = make_user(db, "bob@example.com")
    grant(db, owner, "CRW", bob, Role.WRITE)
    alice_secret = secret_for(db, owner, WRITER, name="alice-laptop")
    async with (
        mcp_client(url, alice_secret, mode, SPECS) as alice,
        mcp_client(url, secret_for(db, bob, WRITER, name="bob-agent"), mode, SPECS) as bob_client,
    ):
        made = body_of(
            await alice.call_tool("upload_spec_file", {**ON, "path": "spec.md", "content": "v1\n"})
        )
        # The instructions tell a writer how to save safely.
        assert "expectedVersion" in (bob_client.instructions or "")
        assert "update_spec_file" in (bob_client.instructions or "")
        read = body_of(
            await bob_client.call_tool("read_spec_file", {"projectId": "CRW", "path": "spec.md"})
        )
        assert read["contentVersion"] == made["file"]["contentVersion"]

        clock.advance(timedelta(minutes=5))
        alice_save = {
            **ON,
            "path": "spec.md",
            "content": "v1\nAlice's line\n",
            "expectedVersion": read["contentVersion"],
            "idempotencyKey": "alice-save-1",
        }
        saved = body_of(await alice.call_tool("update_spec_file", alice_save))
        assert saved["revision"]["revision"] == 2
        assert saved["file"]["revisionCount"] == 2
        assert saved["file"]["contentVersion"] not in (read["contentVersion"], "2")
        replay = await alice.call_tool("update_spec_file", alice_save)
        assert body_of(replay) == saved
        assert len(replay.content) == 2  # the note says it is the first answer again

        clock.advance(timedelta(minutes=1))
        stale = await bob_client.call_tool(
            "update_spec_file",
            {
                **ON,
                "path": "spec.md",
                "content": "v1\nBob's line\n",
                "expectedVersion": read["contentVersion"],
            },
        )
        conflict = error_of(stale)
        assert conflict["code"] == "REVISION_CONFLICT"
        details = conflict["details"]
        assert details["field"] == "expectedVersion"
        assert details["currentVersion"] == saved["file"]["contentVersion"]
        assert details["currentRevision"] == 2
        assert details["updatedBy"]["userId"] == owner.id
        saved_at = iso(clock.now() - timedelta(minutes=1))
        assert details["updatedAt"] == saved_at
        assert "alice-laptop" in conflict["message"]
        assert saved_at in conflict["message"]

        # Alice's text is kept; Bob reads it again and saves his merge from the new version.
        now = body_of(
            await bob_client.call_tool("read_spec_file", {"projectId": "CRW", "path": "spec.md"})
        )
        assert now["text"] == "v1\nAlice's line\n"
        merged = body_of(
            await bob_client.call_tool(
                "update_spec_file",
                {
                    **ON,
                    "fileId": made["file"]["id"],
                    "content": "v1\nAlice's line\nBob's line\n",
                    "expectedVersion": now["contentVersion"],
                },
            )
        )
        assert merged["file"]["revisionCount"] == 3
        assert merged["revision"]["savedBy"]["userId"] == bob.id
        older = body_of(
            await alice.call_tool(
                "read_spec_file", {"projectId": "CRW", "path": "spec.md", "revision": 1}
            )
        )
        assert (older["text"], older["revision"]) == ("v1\n", 1)


async def test_the_trash_hides_a_file_from_lists_and_reads_until_it_is_restored(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITER), mode, SPECS) as client:
        made = body_of(
            await client.call_tool("upload_spec_file", {**ON, "path": "old.md", "content": "o\n"})
        )
        version = made["file"]["contentVersion"]
        ref = {**ON, "path": "old.md"}
        trashed = await client.call_tool("move_spec_file_to_trash", ref)
        assert body_of(trashed)["changed"] is True
        assert body_of(trashed)["file"]["trashed"] is True

        assert (
            body_of(await client.call_tool("list_spec_files", {"projectId": "CRW"}))["total"] == 0
        )
        bin_ = body_of(
            await client.call_tool("list_spec_files", {"projectId": "CRW", "trashed": True})
        )
        assert [f["path"] for f in bin_["files"]] == ["old.md"]
        for tool, arguments in [
            ("get_spec_file", {"projectId": "CRW", "path": "old.md"}),
            ("read_spec_file", {"projectId": "CRW", "path": "old.md"}),
            ("update_spec_file", {**ref, "content": "n\n", "expectedVersion": version}),
        ]:
            assert error_of(await client.call_tool(tool, arguments))["code"] == "NOT_FOUND", tool
        kept = body_of(
            await client.call_tool(
                "read_spec_file", {"projectId": "CRW", "path": "old.md", "includeTrashed": True}
            )
        )
        assert kept["text"] == "o\n"
        taken = error_of(await client.call_tool("upload_spec_file", {**ref, "content": "new\n"}))
        assert taken["code"] == "ALREADY_EXISTS"  # the path stays the trashed file's
        twice = await client.call_tool("move_spec_file_to_trash", ref)
        assert body_of(twice)["changed"] is False
        assert len(twice.content) == 2

        restored = body_of(await client.call_tool("restore_spec_file_from_trash", ref))
        assert restored["changed"] is True
        assert restored["file"]["trashed"] is False
        back = body_of(
            await client.call_tool("read_spec_file", {"projectId": "CRW", "path": "old.md"})
        )
        assert back["text"] == "o\n"
        assert back["contentVersion"] == version  # the trash is no save


async def test_a_read_only_token_reads_spec_files_but_is_shown_and_allowed_no_write(
    url: str, db: Database, owner: User, mode: str
) -> None:
    spec_calls.upload_spec_file(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        path="notes.md",
        content=b"read me\n",
        idempotency_key=None,
    )
    async with mcp_client(url, secret_for(db, owner, ["read"]), mode, SPECS) as client:
        names = spec_file_tools(await client.list_tools())
        assert names == READ_TOOLS
        assert "update_spec_file" not in (client.instructions or "")
        window = body_of(
            await client.call_tool("read_spec_file", {"projectId": "CRW", "path": "notes.md"})
        )
        assert window["text"] == "read me\n"
        for tool, arguments in [
            ("upload_spec_file", {**ON, "path": "new.md", "content": "x"}),
            (
                "update_spec_file",
                {**ON, "path": "notes.md", "content": "x", "expectedVersion": "cv_x"},
            ),
            ("move_spec_file_to_trash", {**ON, "path": "notes.md"}),
            ("restore_spec_file_from_trash", {**ON, "path": "notes.md"}),
        ]:
            refused = error_of(await client.call_tool(tool, arguments))
            assert refused["code"] == "PERMISSION_DENIED", tool
            assert refused["details"]["requiredScope"] == "specs.write"
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    async with mcp_client(url, secret_for(db, reader, WRITER), mode, SPECS) as client:
        assert spec_file_tools(await client.list_tools()) == READ_TOOLS
        refused = error_of(
            await client.call_tool("upload_spec_file", {**ON, "path": "new.md", "content": "x"})
        )
        assert refused["code"] == "PERMISSION_DENIED"
    listed = files.list_spec_files(db, person_actor(owner), project="CRW")
    assert [f["path"] for f in listed["files"]] == ["notes.md"]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder for this process, where the served app runs too."""
    folder = tmp_path / "here"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


async def test_the_callers_disk_is_out_of_reach_over_http(
    url: str, db: Database, owner: User, mode: str, here: Path
) -> None:
    local = here.parent / "local.md"
    local.write_text("on the caller's disk\n")
    spec_calls.upload_spec_file(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        path="docs/plan.md",
        content=b"# Plan\n",
        idempotency_key=None,
    )
    headers = {"X-MCP-Toolsets": "all"}
    async with mcp_client(url, secret_for(db, owner, WRITER), mode, headers) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names >= READ_TOOLS | WRITE_TOOLS
        assert "download_spec_file" not in names
        for path in ("../local.md", str(local)):
            refused = error_of(
                await client.call_tool(
                    "upload_spec_file", {**ON, "path": "up.md", "localFilePath": path}
                )
            )
            assert refused["code"] == "PERMISSION_DENIED"
            assert "stdio" in refused["message"]
        download = error_of(
            await client.call_tool(
                "download_spec_file", {"projectId": "CRW", "path": "docs/plan.md", "folder": "."}
            )
        )
        assert download["code"] == "PERMISSION_DENIED"
        assert "stdio" in download["message"]
        assert "read_spec_file" in download["message"]  # and what to do instead
    listed = files.list_spec_files(db, person_actor(owner), project="CRW")
    assert [f["path"] for f in listed["files"]] == ["docs/plan.md"]
    assert everything_under(here) == []


# --- over stdio: the caller's own working folder --------------------------------------------


@dataclass(frozen=True)
class Local:
    """A project with two spec files, a token for it, the working folder `crewboard mcp`
    runs in, and a folder beside it that nothing may be written to."""

    db: Database
    owner: User
    database_url: URL
    secret: str
    work: Path
    outside: Path

    @asynccontextmanager
    async def client(self, mode: str) -> AsyncIterator[Client]:
        """`crewboard mcp` started in the working folder, showing the specs toolset."""
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "crewboard", "mcp", "--toolsets", "specs"],
            env={
                "PATH": os.environ.get("PATH", ""),
                # A checkout other than the installed one (a worktree) runs its own code.
                **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
                "CREWBOARD_DATABASE_URL": self.database_url.render_as_string(hide_password=False),
                "CREWBOARD_TOKEN": self.secret,
                "CREWBOARD_DATA_DIR": str(self.work.parent / "data"),
            },
            cwd=str(self.work),
        )
        async with Client(params, mode=mode) as client:
            yield client

    def paths(self) -> list[str]:
        listed = files.list_spec_files(self.db, person_actor(self.owner), project="CRW")
        return [f["path"] for f in listed["files"]]


@pytest.fixture
def local(database_url: URL, db: Database, owner: User, tmp_path: Path) -> Local:
    for path, content in (("docs/plan.md", b"# Plan\nFrom Crewboard\n"), ("logo.png", PNG)):
        spec_calls.upload_spec_file(
            db,
            person_actor(owner),
            project="CRW",
            workspace_id=None,
            path=path,
            content=content,
            idempotency_key=None,
        )
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    return Local(db, owner, database_url, secret_for(db, owner, WRITER), work, outside)


def everything_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


async def download(client: Client, path: str, **more: Any) -> types.CallToolResult:
    return await client.call_tool("download_spec_file", {"projectId": "CRW", "path": path, **more})


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_downloads_into_dot_specs_and_replaces_a_file_only_when_asked(
    local: Local, mode: str
) -> None:
    work = local.work
    async with local.client(mode) as client:
        listed = await client.list_tools()
        assert spec_file_tools(listed) == READ_TOOLS | WRITE_TOOLS | {"download_spec_file"}
        listing = {t.name: t for t in listed.tools}
        hints = listing["download_spec_file"].annotations
        assert hints is not None
        assert not hints.read_only_hint  # it writes the caller's files
        assert hints.destructive_hint is True  # overwrite replaces one

        saved = body_of(await download(client, "docs/plan.md"))
        target = work / ".specs" / "docs" / "plan.md"
        assert Path(saved["savedTo"]) == target.resolve()
        assert target.read_bytes() == b"# Plan\nFrom Crewboard\n"
        assert saved["bytes"] == len(b"# Plan\nFrom Crewboard\n")
        picture = body_of(await download(client, "logo.png", folder="assets"))
        assert (work / "assets" / "logo.png").read_bytes() == PNG
        assert picture["file"]["kind"] == "binary"

        target.write_text("my local edits\n")
        refused = error_of(await download(client, "docs/plan.md"))
        assert refused["code"] == "ALREADY_EXISTS"
        assert refused["details"]["field"] == "overwrite"
        assert target.read_text() == "my local edits\n"
        body_of(await download(client, "docs/plan.md", overwrite=True))
        assert target.read_bytes() == b"# Plan\nFrom Crewboard\n"
    # Written whole under a temporary name and renamed: nothing else is left behind.
    assert everything_under(work / ".specs") == ["docs", "docs/plan.md"]


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_download_never_writes_outside_the_working_folder(
    local: Local, mode: str
) -> None:
    work, outside = local.work, local.outside
    (work / "out").symlink_to(outside, target_is_directory=True)
    (work / "gone").symlink_to(outside / "not-yet", target_is_directory=True)
    (work / ".specs").mkdir()
    (work / ".specs" / "docs").symlink_to(outside, target_is_directory=True)
    (work / "plain").mkdir()
    (work / "plain" / "docs").mkdir()
    (work / "plain" / "docs" / "plan.md").symlink_to(outside / "planted.md")
    (work / "inner.md").write_text("inside\n")
    (work / "linked" / "docs").mkdir(parents=True)
    (work / "linked" / "docs" / "plan.md").symlink_to(work / "inner.md")
    async with local.client(mode) as client:
        for folder in ("../outside", str(outside), "out", "out/deeper", "gone", "a/../../outside"):
            for overwrite in (False, True):
                refused = error_of(
                    await download(client, "docs/plan.md", folder=folder, overwrite=overwrite)
                )
                assert refused["code"] == "VALIDATION", folder
                assert refused["details"]["field"] == "folder", folder
        # .specs/docs is a link out of the folder: the default place is refused too.
        assert error_of(await download(client, "docs/plan.md"))["details"]["field"] == "folder"
        # A link at the file itself is never written through, wherever it points.
        for folder in ("plain", "linked"):
            refused = error_of(
                await download(client, "docs/plan.md", folder=folder, overwrite=True)
            )
            assert refused["details"]["field"] == "folder", folder
    assert everything_under(outside) == []
    assert (work / "inner.md").read_text() == "inside\n"
    assert (work / "plain" / "docs" / "plan.md").is_symlink()


def _add(local: Local, path: str, content: bytes) -> None:
    spec_calls.upload_spec_file(
        local.db,
        person_actor(local.owner),
        project="CRW",
        workspace_id=None,
        path=path,
        content=content,
        idempotency_key=None,
    )


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_download_of_a_file_and_a_folder_of_the_same_name_refuses_naming_both(
    local: Local, mode: str
) -> None:
    """The project holds `a` and `a/b.md`: whichever comes second cannot land beside the
    first; the answer names both and writes nothing (it was a FileExistsError)."""
    _add(local, "a", b"the file a\n")
    _add(local, "a/b.md", b"# inside a\n")
    async with local.client(mode) as client:
        body_of(await download(client, "a", folder="first"))
        refused = error_of(await download(client, "a/b.md", folder="first"))
        assert refused["code"] == "VALIDATION"
        assert refused["details"]["field"] == "folder"
        assert refused["details"]["path"] == "a/b.md"
        assert Path(refused["details"]["conflictsWith"]) == local.work / "first" / "a"
        assert "a/b.md" in refused["message"]
        assert str(local.work / "first" / "a") in refused["message"]
        # The other order: the folder is there first, and overwrite cannot make it a file.
        body_of(await download(client, "a/b.md", folder="second"))
        for overwrite in (False, True):
            refused = error_of(await download(client, "a", folder="second", overwrite=overwrite))
            assert refused["code"] == "VALIDATION"
            assert Path(refused["details"]["conflictsWith"]) == local.work / "second" / "a"
        # Either one saved elsewhere lands.
        body_of(await download(client, "a/b.md", folder="elsewhere"))
    assert (local.work / "first" / "a").read_bytes() == b"the file a\n"
    assert (local.work / "second" / "a" / "b.md").read_bytes() == b"# inside a\n"
    assert everything_under(local.work / "first") == ["a"]
    assert everything_under(local.work / "second") == ["a", "a/b.md"]


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_download_the_disk_refuses_is_a_named_refusal(local: Local, mode: str) -> None:
    """A link to nothing on the way, and a name the file system cannot hold (255 characters
    that are 510 bytes): a VALIDATION naming the folder, never an internal error."""
    long_name = "\u00e9" * 255
    _add(local, f"docs/{long_name}", b"accents\n")
    (local.work / "dangling").symlink_to(local.work / "nowhere", target_is_directory=True)
    async with local.client(mode) as client:
        for path, folder in (("docs/plan.md", "dangling"), (f"docs/{long_name}", "long")):
            refused = error_of(await download(client, path, folder=folder))
            assert refused["code"] == "VALIDATION", folder
            assert refused["details"]["field"] == "folder", folder
    assert not (local.work / "nowhere").exists()
    assert everything_under(local.work / "long") in ([], ["docs"])


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_uploads_from_a_local_file_inside_the_working_folder_only(
    local: Local, mode: str
) -> None:
    work, outside = local.work, local.outside
    (work / "notes").mkdir()
    (work / "notes" / "local.md").write_text("# Written locally\n")
    (work / "notes" / "diagram.bin").write_bytes(PNG)
    (outside / "secret.md").write_text("not for upload\n")
    (work / "leak.md").symlink_to(outside / "secret.md")
    (work / "out").symlink_to(outside, target_is_directory=True)
    (work / "alias.md").symlink_to(work / "notes" / "local.md")
    async with local.client(mode) as client:
        made = body_of(
            await client.call_tool(
                "upload_spec_file",
                {**ON, "path": "docs/local.md", "localFilePath": "notes/local.md"},
            )
        )
        assert made["file"]["kind"] == "text"
        binary = body_of(
            await client.call_tool(
                "upload_spec_file",
                {**ON, "path": "docs/diagram.bin", "localFilePath": "./notes/diagram.bin"},
            )
        )
        assert (binary["file"]["kind"], binary["file"]["size"]) == ("binary", len(PNG))
        # A link that stays inside the folder is followed like the file it names.
        saved = body_of(
            await client.call_tool(
                "update_spec_file",
                {
                    **ON,
                    "path": "docs/local.md",
                    "localFilePath": "alias.md",
                    "expectedVersion": made["file"]["contentVersion"],
                },
            )
        )
        assert saved["file"]["revisionCount"] == 2
        for source in (
            "../outside/secret.md",
            str(outside / "secret.md"),
            "leak.md",
            "out/secret.md",
            "notes/missing.md",
            "notes",
        ):
            refused = error_of(
                await client.call_tool(
                    "upload_spec_file", {**ON, "path": "docs/stolen.md", "localFilePath": source}
                )
            )
            assert refused["code"] == "VALIDATION", source
            assert refused["details"]["field"] == "localFilePath", source
    assert local.paths() == ["docs/diagram.bin", "docs/local.md", "docs/plan.md", "logo.png"]
    stored = files.read_spec_file(
        local.db,
        person_actor(local.owner),
        project="CRW",
        ref=file_lookup.FileRef(path="docs/local.md"),
    )
    assert stored["text"] == "# Written locally\n"
    assert everything_under(outside) == ["secret.md"]
