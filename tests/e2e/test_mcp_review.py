"""submit_result and create_draft through the official SDK client, in both protocol eras."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from crewboard.contract.projects import present
from crewboard.contract.review.present import draft_read_view
from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import drafts
from crewboard.storage.database import Database
from tests.support.factories import count_rows, make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

SCOPES = ["read", "tasks.manage", "drafts.create"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW", collections=["general", "architecture"])
    seat = present.add_team_role(db, person_actor(user), project="CRW", name="Coder", kind="ai")
    tasks.create_task(
        db,
        person_actor(user),
        project="CRW",
        workspace_id=None,
        idempotency_key="t-1",
        title="Fix the login redirect",
        status="ready_for_ai",
        assignee_id=seat["id"],
    )
    return user


def secret(db: Database, owner: User, scopes: list[str] = SCOPES) -> str:
    return tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=scopes, project="CRW"
    ).secret


def hand_in(**extra: Any) -> dict[str, Any]:
    return {
        "projectId": "CRW",
        "workspaceId": None,
        "taskId": "CRW-1",
        "idempotencyKey": "h-1",
        "expectedRevision": 1,
        "contextReceiptId": None,
        "title": "Redirect fixed",
        "content": "The loop is gone.",
        "references": [{"kind": "commit", "value": "a1b2c3d"}],
    } | extra


async def test_review_tools_are_listed_with_their_scopes_and_annotations(
    url: str, db: Database, owner: User, mode: str
) -> None:
    # submit_result ends the agent's loop (board); create_draft is a review tool.
    toolsets = {"X-MCP-Toolsets": "board,review"}
    async with mcp_client(url, secret(db, owner), mode, toolsets) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    submit = listed["submit_result"]
    assert submit.annotations is not None
    assert not submit.annotations.read_only_hint  # the protocol default, not sent
    assert submit.annotations.idempotent_hint is True
    required = set(submit.input_schema["required"])
    assert {"taskId", "idempotencyKey", "expectedRevision"} <= required
    # workspaceId is taken, not listed: left out, the task's project's own is taken.
    assert "workspaceId" not in submit.input_schema["properties"]
    assert "contextReceiptId" in required
    assert "create_draft" in listed
    drafts_only = secret(db, owner, ["read", "drafts.create"])
    async with mcp_client(url, drafts_only, mode, {"X-MCP-Toolsets": "board,review"}) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert "create_draft" in names
    assert "submit_result" not in names


async def test_submit_result_hands_in_and_a_retry_replays(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode) as client:
        first = await client.call_tool("submit_result", hand_in())
        assert not first.is_error, first.content
        body = body_of(first)
        assert (body["taskMoved"], body["task"]["status"]) == (True, "review")
        assert len(first.content) == 2  # says it waits for a person
        retry = await client.call_tool("submit_result", hand_in())
        assert body_of(retry) == body
        clash = await client.call_tool("submit_result", hand_in(title="Other"))
        stale = await client.call_tool("submit_result", hand_in(idempotencyKey="h-2"))
    assert clash.is_error
    assert clash.structured_content is not None
    assert clash.structured_content["code"] == "IDEMPOTENCY_CONFLICT"
    stale_body = body_of(stale)
    assert stale_body["taskMoved"] is False
    assert stale_body["taskNotMovedReason"]["code"] == "STATUS"
    assert count_rows(db, "drafts") == 2
    shown = draft_read_view(drafts.get_draft(db, person_actor(owner), body["draft"]["id"]))
    assert shown["via"] == "mcp"


async def test_bad_hand_ins_are_error_results_naming_the_field(
    url: str, db: Database, owner: User, mode: str
) -> None:
    cases: list[tuple[dict[str, Any], str, str]] = [
        (hand_in(references=[{"kind": "link", "value": "CI", "url": "http://ci.example.com"}]), "VALIDATION", "references[0].url"),
        (hand_in(references=[{"kind": "commit", "value": "abc"}]), "VALIDATION", "references[0].value"),
        (hand_in(collection="nope"), "VALIDATION", "collection"),
        (hand_in(document="wiki"), "VALIDATION", "document"),
        ({k: v for k, v in hand_in().items() if k != "contextReceiptId"}, "VALIDATION", "contextReceiptId"),
        (hand_in(contextReceiptId="rcp_nope"), "VALIDATION", "contextReceiptId"),
        (hand_in(title="t" * 301), "LIMIT_EXCEEDED", "title"),
    ]  # fmt: skip
    async with mcp_client(url, secret(db, owner), mode) as client:
        for arguments, code, field in cases:
            result = await client.call_tool("submit_result", arguments)
            assert result.is_error, arguments
            assert result.structured_content is not None
            assert result.structured_content["code"] == code, result.structured_content
            assert field in result.structured_content["details"]["field"], result.structured_content
    assert count_rows(db, "drafts") == 0


async def test_create_draft_lands_a_draft_and_leaves_the_task(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, secret(db, owner, ["read", "drafts.create"]), mode) as client:
        made = await client.call_tool(
            "create_draft", {"taskId": "CRW-1", "title": "An idea", "content": "Try a cookie."}
        )
        refused = await client.call_tool("submit_result", hand_in())
    body = body_of(made)
    assert (body["draft"]["status"], body["taskMoved"]) == ("pending", False)
    assert body["task"]["status"] == "ready_for_ai"
    assert refused.is_error


def test_the_rest_doors_hand_in_and_read_drafts_but_never_decide(
    url: str, db: Database, owner: User
) -> None:
    headers = {"Authorization": f"Bearer {secret(db, owner)}"}
    with httpx2.Client(base_url=f"{url}/api/v1", headers=headers) as api:
        body = {k: v for k, v in hand_in().items() if k not in ("taskId", "idempotencyKey")}
        made = api.post("/tasks/CRW-1/results", json=body, headers={"Idempotency-Key": "r-1"})
        assert made.status_code == 201, made.text
        draft_id = made.json()["draft"]["id"]
        assert made.json()["taskMoved"] is True
        again = api.post("/tasks/CRW-1/results", json=body, headers={"Idempotency-Key": "r-1"})
        assert (again.status_code, again.json()["replayed"]) == (201, True)
        plain = api.post("/tasks/CRW-1/drafts", json={"title": "Idea", "content": "Cookie."})
        assert plain.status_code == 201, plain.text
        shown = api.get(f"/drafts/{draft_id}")
        assert (shown.json()["content"], shown.json()["via"]) == ("The loop is gone.", "rest")
        listed = api.get("/projects/CRW/drafts", params={"status": "pending"})
        assert listed.json()["total"] == 2
        bad = api.post(
            "/tasks/CRW-1/results",
            json={**body, "references": [{"kind": "link", "value": "x", "url": "http://x.y"}]},
            headers={"Idempotency-Key": "r-2"},
        )
        assert (bad.status_code, bad.json()["error"]["code"]) == (422, "VALIDATION")
        assert api.post(f"/drafts/{draft_id}/approve").status_code in (404, 405)
