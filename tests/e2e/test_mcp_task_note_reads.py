"""An agent reads back what people said to it, through the official SDK client in both eras:
the answer to its question (given in the web inbox) and a reviewer's revision comment, on
get_task, in list_task_notes and in list_activity mine; list_task_notes pages in budget."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp_types import TextContent

from crewboard.contract.board import present_notes
from crewboard.domain.identity.records import User
from crewboard.services.board import notes as task_notes
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.review import review_world
from tests.support.web import post_form, sign_in

pytestmark = pytest.mark.anyio

TASK = {"taskId": "CRW-1", "workspaceId": None}


@pytest.fixture
def owner(db: Database) -> User:
    return make_user(db, "owner@example.com")


@pytest.fixture
def world(db: Database, owner: User) -> dict[str, str]:
    """A seat, a ready_for_ai task CRW-1 for it and an agent token that can hand in."""
    return review_world(db, owner)


@pytest.fixture
def person(url: str, owner: User) -> Iterator[httpx2.Client]:
    """The owner signed in to the web app."""
    client = sign_in(url, owner.email)
    try:
        yield client
    finally:
        client.close()


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return body_of(result)


def submit(person: httpx2.Client, path: str, data: dict[str, str]) -> None:
    """A person's form in the web inbox; it answers with a redirect back."""
    answer = post_form(person, path, {"next": "/p/CRW/inbox", **data})
    assert answer.status_code == 303, answer.text
    assert "error" not in answer.headers.get("location", "")


async def test_an_agent_reads_the_answer_to_its_question_on_the_task_and_in_its_activity(
    url: str, world: dict[str, str], person: httpx2.Client, mode: str
) -> None:
    async with mcp_client(url, world["secret"], mode) as agent:
        asked = await call(
            agent,
            "ask_question",
            {**TASK, "idempotencyKey": "q-1", "question": "Keep the query string on redirect?"},
        )
        question_id = asked["question"]["id"]
        waiting = (await call(agent, "get_task", TASK))["notes"]["questions"]
        assert (waiting["total"], waiting["open"]) == (1, 1)
        assert waiting["items"][0]["status"] == "open"

        submit(person, f"/p/CRW/inbox/questions/{question_id}/answer", {"answer": "Yes, keep it."})

        notes = (await call(agent, "get_task", TASK))["notes"]["questions"]
        assert (notes["total"], notes["open"]) == (1, 0)
        [shown] = notes["items"]
        assert (shown["status"], shown["answer"]) == ("answered", "Yes, keep it.")
        assert shown["answeredBy"] == "owner"  # by the one naming rule
        brief = await call(agent, "get_task", {**TASK, "format": "agent_brief"})
        assert "1 answered, 0 open" in brief["text"]

        thread = await call(agent, "list_task_notes", {**TASK, "kind": "question"})
        [row] = thread["notes"]
        assert (row["id"], row["answer"]) == (question_id, "Yes, keep it.")
        assert thread["hasMore"] is False

        entries = (await call(agent, "list_activity", {"mine": True}))["entries"]
        [answered] = [e for e in entries if e["type"] == "task.question_answered"]
        assert (answered["questionId"], answered["answerPreview"]) == (
            question_id,
            "Yes, keep it.",
        )
        assert answered["mine"] is True


async def test_an_agent_reads_the_reviewers_comment_on_the_follow_up_task_and_in_its_activity(
    url: str, world: dict[str, str], person: httpx2.Client, mode: str
) -> None:
    comment = "Cover the expired-cookie case as well."
    async with mcp_client(url, world["secret"], mode) as agent:
        read = await call(agent, "get_task", TASK)
        handed = await call(
            agent,
            "submit_result",
            {
                "projectId": "CRW",
                "workspaceId": None,
                "taskId": read["task"]["id"],
                "idempotencyKey": "hand-in-1",
                "expectedRevision": read["task"]["revision"],
                "contextReceiptId": read["contextReceiptId"],
                "title": "Redirect fixed",
                "content": "The loop is gone.",
            },
        )
        draft_id = handed["draft"]["id"]

        submit(person, f"/p/CRW/inbox/drafts/{draft_id}/revise", {"comment": comment})

        entries = (await call(agent, "list_activity", {"mine": True}))["entries"]
        [decision] = [e for e in entries if e["type"] == "draft.revision_requested"]
        assert (decision["draftId"], decision["commentPreview"]) == (draft_id, comment)
        follow_up = decision["followUpTaskId"]
        again = await call(agent, "get_task", {"taskId": follow_up})
        assert comment in again["task"]["brief"]
        assert again["task"]["parentTaskId"] == read["task"]["id"]


async def test_list_task_notes_pages_stay_in_budget_and_the_cursor_continues(
    url: str, db: Database, world: dict[str, str], owner: User, mode: str
) -> None:
    for n in range(6):  # 20,000 characters each: two fit one answer
        task_notes.post_comment(
            db,
            person_actor(owner),
            task="CRW-1",
            workspace_id=None,
            content=f"{n}" * task_notes.MAX_NOTE_CHARS,
            idempotency_key=f"c-{n}",
            answer=present_notes.comment_answer,
        )
    seen: list[str] = []
    async with mcp_client(url, world["secret"], mode) as agent:
        arguments: dict[str, Any] = {**TASK, "limit": 100}
        while True:
            result = await agent.call_tool("list_task_notes", arguments)
            first = result.content[0]
            assert isinstance(first, TextContent)
            assert len(first.text.encode()) <= 48 * 1024
            body = body_of(result)
            assert 1 <= len(body["notes"]) < 6
            seen += [n["content"][0] for n in body["notes"]]
            if not body["hasMore"]:
                assert len(result.content) == 1
                break
            assert len(result.content) == 2  # the second part says how to go on
            arguments["cursor"] = body["nextCursor"]
        assert seen == ["5", "4", "3", "2", "1", "0"]

        cursor = arguments["cursor"]
        for change in ({"kind": "output"}, {"taskId": world["task"], "kind": ["comment"]}):
            refused = await agent.call_tool("list_task_notes", {**arguments, **change})
            assert refused.is_error
            assert refused.structured_content is not None
            assert refused.structured_content["code"] == "VALIDATION"
            assert refused.structured_content["details"]["field"] == "cursor"
        same_by_id = await call(
            agent, "list_task_notes", {**arguments, "taskId": world["task"], "cursor": cursor}
        )
        assert same_by_id["notes"]
        unknown = await agent.call_tool("list_task_notes", {**TASK, "kind": "chat"})
        assert unknown.is_error
        assert unknown.structured_content is not None
        assert unknown.structured_content["details"]["field"] == "kind"


async def test_a_read_only_token_sees_list_task_notes_as_a_read(
    url: str, db: Database, world: dict[str, str], owner: User, mode: str
) -> None:
    secret = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=["read"], project="CRW"
    ).secret
    async with mcp_client(url, secret, mode, {"X-MCP-Toolsets": "board"}) as agent:
        listed = {t.name: t for t in (await agent.list_tools()).tools}
        assert "ask_question" not in listed
        annotations = listed["list_task_notes"].annotations
        assert annotations is not None
        assert annotations.read_only_hint is True
        assert (await call(agent, "list_task_notes", TASK))["notes"] == []
