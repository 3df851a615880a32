"""get_task's context pack and receipt through the official SDK client, in both protocol eras."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp_types import TextContent

from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.board.context import PACK_BUDGET
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory.records import file_record
from crewboard.storage.database import Database
from tests.support.factories import count_rows, make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

HAND_IN = ("read", "tasks.manage", "drafts.create")


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")

    def work(uow: Any) -> str:
        project = uow.projects.get_with_role("CRW", user.id)[0]
        return str(
            file_record(
                uow,
                person_actor(user),
                project,
                title="Redirect rules",
                summary="Login redirects go to the page asked for.\nNever off-site.",
                content="Only relative paths are followed after login.",
                collection=None,
                document=None,
                source_draft_id=None,
            ).id
        )

    record = db.write(work)
    tasks.create_task(
        db,
        person_actor(user),
        project="CRW",
        workspace_id=None,
        idempotency_key="t-1",
        title="Fix the login redirect",
        brief="Follow the redirect rules.",
        context_item_ids=[record],
    )
    return user


def secret(db: Database, owner: User, scopes: tuple[str, ...]) -> str:
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=list(scopes), project="CRW"
    )
    return issued.secret


async def test_get_task_hands_a_drafting_token_the_pack_and_a_receipt(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret(db, owner, HAND_IN), mode) as client:
        result = await client.call_tool("get_task", {"taskId": "CRW-1"})
    assert result.is_error is False
    read = body_of(result)
    assert read["contextReceiptId"].startswith("rcp_")
    assert "contextReceiptUnavailable" not in read
    pack = read["contextPack"]
    assert [r["title"] for r in pack["records"]] == ["Redirect rules"]
    assert pack["records"][0]["content"] == "Only relative paths are followed after login."
    assert pack["task"]["key"] == "CRW-1"
    assert count_rows(db, "context_receipts") == 1
    first = result.content[0]
    assert isinstance(first, TextContent)
    assert len(first.text.encode()) < 48 * 1024
    assert len(json.dumps(pack, separators=(",", ":"), ensure_ascii=False).encode()) <= PACK_BUDGET


async def test_get_task_without_the_pack_hands_out_no_context_and_no_receipt(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret(db, owner, HAND_IN), mode) as client:
        read = body_of(
            await client.call_tool("get_task", {"taskId": "CRW-1", "includeContextPack": False})
        )
    assert "contextPack" not in read
    assert "contextReceiptId" not in read
    assert "contextReceiptUnavailable" not in read
    assert count_rows(db, "context_receipts") == 0


async def test_a_read_only_token_gets_the_pack_without_a_receipt(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret(db, owner, ("read",)), mode) as client:
        read = body_of(await client.call_tool("get_task", {"taskId": "CRW-1"}))
    assert [r["title"] for r in read["contextPack"]["records"]] == ["Redirect rules"]
    assert "contextReceiptId" not in read
    assert "contextReceiptUnavailable" not in read


async def test_agent_brief_is_plain_text_naming_the_records_with_no_receipt(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret(db, owner, HAND_IN), mode) as client:
        result = await client.call_tool("get_task", {"taskId": "CRW-1", "format": "agent_brief"})
    body = body_of(result)
    assert body["format"] == "agent_brief"
    text = body["text"]
    assert len(text) <= 3000
    assert text.startswith("Task CRW-1: Fix the login redirect")
    assert "Redirect rules: Login redirects go to the page asked for." in text
    assert "contextReceiptId" not in body
    assert count_rows(db, "context_receipts") == 0
