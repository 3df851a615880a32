"""The spec comment tools end to end: over real HTTP with the SDK client (the stateless era for
the whole flow, the handshake era for a call of each kind), an agent's comments shown as AI
work, refusals as tool errors, and threads following a save made with update_spec_file."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from crewboard.contract.catalogue import default_catalogue
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.specs import file_lookup
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import MODES, body_of, mcp_client

pytestmark = pytest.mark.anyio

SPECS = {"X-MCP-Toolsets": "specs"}
WRITER = ["read", "specs.write"]
ON = {"projectId": "CRW", "workspaceId": None}
SPEC = (
    "# Exports\n"
    "\n"
    "Exports stream their rows as they are read.\n"
    "\n"
    "An export stops after ten minutes.\n"
    "\n"
    "An export of an empty table is an empty file.\n"
)
COMMENT_TOOLS = [
    "list_spec_file_comments",
    "create_spec_file_comment_thread",
    "reply_spec_file_comment_thread",
    "update_spec_file_comment",
    "delete_spec_file_comment",
]
STATELESS, HANDSHAKE = MODES[1], MODES[0]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def file_id(db: Database, owner: User) -> str:
    made = spec_calls.upload_spec_file(
        db, person_actor(owner), project="CRW", workspace_id=None, path="docs/exports.md",
        content=SPEC.encode(), idempotency_key=None,
    )  # fmt: skip
    return str(made.body["file"]["id"])


def secret_for(db: Database, user: User, scopes: list[str], kind: str = "personal") -> str:
    issued = tokens.issue_token(
        db,
        person_actor(user),
        kind=kind,
        scopes=scopes,
        name="Exporter" if kind == "agent" else None,
        project="CRW" if kind == "agent" else None,
    )
    return issued.secret


async def call(client: Client, name: str, **arguments: Any) -> Any:
    """A tool call that must succeed; its answer."""
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    return body_of(result)


async def refusal(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    """A tool call that must be refused; its {code, message, details}."""
    result = await client.call_tool(name, arguments)
    assert result.is_error, result.content
    error = result.structured_content
    assert isinstance(error, dict)
    assert error["message"]
    return error


def notes(result: types.CallToolResult) -> list[str]:
    return [p.text for p in result.content[1:] if isinstance(p, types.TextContent)]


async def test_a_thread_is_started_answered_edited_and_deleted_through_the_tools(
    url: str, db: Database, owner: User, file_id: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITER), STATELESS, SPECS) as client:
        made = await call(
            client, "create_spec_file_comment_thread", **ON, path="docs/exports.md",
            anchorQuote="stops after ten minutes", body="Ten minutes is short for the archive.",
            idempotencyKey="thread-1",
        )  # fmt: skip
        thread = made["thread"]
        assert thread["anchor"]["quote"] == "stops after ten minutes"
        assert thread["anchor"]["start"] == SPEC.index("stops after ten minutes")
        first = thread["comments"][0]
        assert (first["yours"], first["aiWork"]) == (True, False)
        answer = await call(
            client, "reply_spec_file_comment_thread", **ON, threadId=thread["id"],
            body="And for the audit log.",
        )  # fmt: skip
        edited = await call(
            client, "update_spec_file_comment", **ON, commentId=first["id"],
            expectedVersion=first["contentVersion"], body="Ten minutes is short.",
        )  # fmt: skip
        assert edited["comment"]["contentVersion"] != first["contentVersion"]
        stale = await refusal(
            client, "update_spec_file_comment", **ON, commentId=first["id"],
            expectedVersion=first["contentVersion"], body="Lost.",
        )  # fmt: skip
        assert stale["code"] == "REVISION_CONFLICT"
        listed = await call(client, "list_spec_file_comments", projectId="CRW", fileId=file_id)
        [shown] = listed["threads"]
        assert [c["body"] for c in shown["comments"]] == [
            "Ten minutes is short.",
            "And for the audit log.",
        ]
        result = await client.call_tool(
            "delete_spec_file_comment", {**ON, "commentId": first["id"]}
        )
        assert body_of(result)["outcome"] == "placeholder"
        assert notes(result)
        assert "replies stay" in notes(result)[0]
        gone = await call(
            client, "delete_spec_file_comment", **ON, commentId=answer["comment"]["id"]
        )
        assert gone["outcome"] == "threadDeleted"
        empty = await call(client, "list_spec_file_comments", projectId="CRW", fileId=file_id)
        assert (empty["threads"], empty["total"]) == ([], 0)


async def test_an_agent_tokens_comment_shows_as_ai_work(
    url: str, db: Database, owner: User, file_id: str
) -> None:
    agent = secret_for(db, owner, WRITER, kind="agent")
    async with mcp_client(url, agent, STATELESS, SPECS) as client:
        made = await call(
            client, "create_spec_file_comment_thread", **ON, fileId=file_id,
            anchorQuote="An export", anchorSuffix=" of an empty table",
            body="Should an empty export carry a header row?",
        )  # fmt: skip
        assert made["thread"]["comments"][0]["aiWork"] is True
    person = secret_for(db, owner, WRITER)
    async with mcp_client(url, person, STATELESS, SPECS) as client:
        await call(client, "reply_spec_file_comment_thread", **ON, threadId=made["thread"]["id"],
                   body="Yes, with the column names.")  # fmt: skip
        listed = await call(client, "list_spec_file_comments", projectId="CRW", fileId=file_id)
        agent_comment, person_comment = listed["threads"][0]["comments"]
        assert (agent_comment["aiWork"], agent_comment["yours"]) == (True, False)
        assert agent_comment["author"]["tokenName"] == "Exporter"
        assert (person_comment["aiWork"], person_comment["yours"]) == (False, True)
        # The person's own token cannot edit the agent's comment: it is not theirs.
        denied = await refusal(
            client, "update_spec_file_comment", **ON, commentId=agent_comment["id"],
            expectedVersion=agent_comment["contentVersion"], body="Rewritten.",
        )  # fmt: skip
        assert denied["code"] == "PERMISSION_DENIED"


async def test_refusals_come_back_as_tool_errors_saying_what_to_add(
    url: str, db: Database, owner: User, file_id: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITER), STATELESS, SPECS) as client:
        ambiguous = await refusal(
            client, "create_spec_file_comment_thread", **ON, fileId=file_id,
            anchorQuote="An export", body="Which one?",
        )  # fmt: skip
        assert (ambiguous["code"], ambiguous["details"]["field"]) == ("VALIDATION", "anchorQuote")
        assert "anchorPrefix/anchorSuffix" in ambiguous["message"]
        missing = await refusal(
            client, "create_spec_file_comment_thread", **ON, fileId=file_id,
            anchorQuote="stops after an hour", body="?",
        )  # fmt: skip
        assert missing["details"]["field"] == "anchorQuote"
        too_long = await refusal(
            client, "create_spec_file_comment_thread", **ON, fileId=file_id,
            anchorQuote="Exports", body="x" * 10_001,
        )  # fmt: skip
        assert too_long["code"] == "LIMIT_EXCEEDED"
        await call(client, "move_spec_file_to_trash", **ON, fileId=file_id)
        trashed = await refusal(
            client, "create_spec_file_comment_thread", **ON, fileId=file_id,
            anchorQuote="Exports stream", body="?",
        )  # fmt: skip
        assert trashed["details"]["trashed"] is True
        unknown = await refusal(
            client, "list_spec_file_comments", projectId="CRW", fileId=file_id, status="closed"
        )
        assert unknown["details"]["field"] == "status"


async def test_a_save_through_update_spec_file_moves_or_orphans_threads(
    url: str, db: Database, owner: User, file_id: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITER), STATELESS, SPECS) as client:
        kept = await call(
            client, "create_spec_file_comment_thread", **ON, fileId=file_id,
            anchorQuote="stream their rows", body="Even for CSV?",
        )  # fmt: skip
        gone = await call(
            client, "create_spec_file_comment_thread", **ON, fileId=file_id,
            anchorQuote="stops after ten minutes", body="Too short.",
        )  # fmt: skip
        version = (await call(client, "get_spec_file", projectId="CRW", fileId=file_id))["file"]
        new = "Draft.\n\n" + SPEC.replace("An export stops after ten minutes.\n\n", "")
        await call(
            client, "update_spec_file", **ON, fileId=file_id, content=new,
            expectedVersion=version["contentVersion"],
        )  # fmt: skip
        orphaned = await call(
            client, "list_spec_file_comments", projectId="CRW", fileId=file_id, status="orphaned"
        )
        assert [t["id"] for t in orphaned["threads"]] == [gone["thread"]["id"]]
        still = await call(
            client, "list_spec_file_comments", projectId="CRW", fileId=file_id, status="open"
        )
        [moved] = still["threads"]
        assert moved["id"] == kept["thread"]["id"]
        assert moved["anchor"]["revision"] == 2
        assert new[moved["anchor"]["start"] : moved["anchor"]["end"]] == "stream their rows"


@pytest.mark.parametrize("mode", [HANDSHAKE])
async def test_the_handshake_era_lists_comments_and_starts_a_thread(
    url: str, db: Database, owner: User, file_id: str, mode: str
) -> None:
    async with mcp_client(url, secret_for(db, owner, WRITER), mode, SPECS) as client:
        made = await call(
            client, "create_spec_file_comment_thread", **ON, fileId=file_id,
            anchorQuote="Exports stream", body="Good.",
        )  # fmt: skip
        listed = await call(client, "list_spec_file_comments", projectId="CRW", fileId=file_id)
        assert [t["id"] for t in listed["threads"]] == [made["thread"]["id"]]


async def test_a_read_only_token_sees_only_the_list_and_no_tool_resolves_a_thread(
    url: str, db: Database, owner: User
) -> None:
    async with mcp_client(url, secret_for(db, owner, ["read"]), STATELESS, SPECS) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert names & set(COMMENT_TOOLS) == {"list_spec_file_comments"}
    catalogue = [t.name for t in default_catalogue()]
    assert [n for n in catalogue if n in COMMENT_TOOLS] == COMMENT_TOOLS
    assert not [n for n in catalogue if "resolve" in n or "reopen" in n]


async def test_a_thread_longer_than_an_answer_comes_cut_to_fit_and_flagged(
    url: str, db: Database, owner: User, file_id: str
) -> None:
    """Sixty comments of 1,000 characters are more than one answer holds: the list answers
    the first ones that fit, flags the thread and keeps its count."""

    me = person_actor(owner)
    made = spec_calls.create_spec_file_comment_thread(
        db, me, project="CRW", workspace_id=None, ref=file_lookup.FileRef(file_id=file_id),
        anchor_quote="ten minutes", anchor_prefix=None, anchor_suffix=None,
        body="Why ten?", idempotency_key=None,
    )  # fmt: skip
    thread_id = made.body["thread"]["id"]
    for n in range(60):
        spec_calls.reply_spec_file_comment_thread(
            db, me, project="CRW", workspace_id=None, thread_id=thread_id,
            body=f"{n} " + "é" * 998, idempotency_key=None,
        )  # fmt: skip
    async with mcp_client(url, secret_for(db, owner, WRITER), STATELESS, SPECS) as client:
        result = await client.call_tool(
            "list_spec_file_comments", {"projectId": "CRW", "fileId": file_id}
        )
        assert not result.is_error
        first = result.content[0]
        assert isinstance(first, types.TextContent)
        assert len(first.text.encode()) <= 48 * 1024
        (thread,) = body_of(result)["threads"]
        assert thread["commentsTruncated"] is True
        assert thread["commentCount"] == 61
        assert 0 < len(thread["comments"]) < 61
        assert thread["comments"][0]["body"] == "Why ten?"
        assert any("commentsTruncated" in note for note in notes(result))
