"""The task note and repository tools through the official SDK client, in both protocol eras."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import TextContent

from crewboard.contract.board import present_notes
from crewboard.domain.identity.records import User
from crewboard.services.board import repos, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, make_project, make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.task_reads import task_activity

pytestmark = pytest.mark.anyio

NOTE_TOOLS = ["post_comment", "agent_update", "save_output", "ask_question"]
REPO_TOOLS = ["list_task_repos", "propose_repo_change", "report_repo_status"]
TASK = {"taskId": "CRW-1", "workspaceId": None}


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    tasks.create_task(
        db,
        person_actor(user),
        project="CRW",
        workspace_id=None,
        idempotency_key="t-1",
        title="Fix the login redirect",
    )
    return user


@pytest.fixture
def repo_id(db: Database, owner: User) -> str:
    return str(repos.add_repo(db, person_actor(owner), "CRW", "app", "https://github.com/a/app").id)


def agent_secret(
    db: Database, owner: User, scopes: tuple[str, ...] = ("read", "tasks.manage")
) -> str:
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=list(scopes), project="CRW"
    )
    return issued.secret


async def test_the_tools_are_listed_with_true_annotations(
    url: str, db: Database, owner: User, mode: str
) -> None:
    # Notes are on the board (agent_update in planning), repository tools in repos.
    async with mcp_client(
        url, agent_secret(db, owner), mode, {"X-MCP-Toolsets": "board,planning,repos"}
    ) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    for name in NOTE_TOOLS + REPO_TOOLS:
        annotations = listed[name].annotations
        assert annotations is not None
        assert bool(annotations.read_only_hint) is (name == "list_task_repos"), name
        if name != "list_task_repos":
            assert annotations.idempotent_hint is True
            assert annotations.destructive_hint is False
            required = set(listed[name].input_schema["required"])
            assert {"taskId", "idempotencyKey"} <= required, name
            assert "workspaceId" not in listed[name].input_schema["properties"], name
    assert listed["save_output"].input_schema["properties"]["name"]["maxLength"] == 200
    assert listed["post_comment"].input_schema["properties"]["content"]["maxLength"] == 20_000
    tests = listed["report_repo_status"].input_schema["properties"]["tests"]
    assert tests["enum"] == ["passed", "failed", "running", "none", None]
    reader = agent_secret(db, owner, ("read",))
    async with mcp_client(url, reader, mode, {"X-MCP-Toolsets": "board,repos"}) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert "list_task_repos" in names
    assert names.isdisjoint(NOTE_TOOLS + REPO_TOOLS[1:])


async def test_each_note_tool_writes_what_it_says(
    url: str, db: Database, owner: User, mode: str
) -> None:
    async with mcp_client(url, agent_secret(db, owner), mode) as client:
        posted = body_of(
            await client.call_tool(
                "post_comment",
                {**TASK, "idempotencyKey": "c-1", "content": "**Update**\n- Tests pass."},
            )
        )
        assert posted["comment"]["kind"] == "comment"
        update = body_of(
            await client.call_tool(
                "agent_update", {**TASK, "idempotencyKey": "u-1", "content": "Halfway there."}
            )
        )
        assert update["agentUpdate"]["kind"] == "agent_update"
        saved = body_of(
            await client.call_tool(
                "save_output",
                {**TASK, "idempotencyKey": "o-1", "name": "audit.md", "content": "# Audit\n"},
            )
        )
        assert (saved["output"]["name"], saved["output"]["version"]) == ("audit.md", 1)
        asked = body_of(
            await client.call_tool(
                "ask_question", {**TASK, "idempotencyKey": "q-1", "question": "Which page?"}
            )
        )
        assert asked["question"]["status"] == "open"
    activity = task_activity(db, person_actor(owner), "CRW-1")
    assert [c["content"] for c in activity["comments"]["items"]] == ["**Update**\n- Tests pass."]
    assert [u["content"] for u in activity["agentUpdates"]["items"]] == ["Halfway there."]
    assert [o["preview"] for o in activity["outputs"]["items"]] == ["# Audit\n"]
    assert [q["question"] for q in activity["questions"]["items"]] == ["Which page?"]


async def test_each_repo_tool_does_what_it_says(
    url: str, db: Database, owner: User, repo_id: str, mode: str
) -> None:
    async with mcp_client(url, agent_secret(db, owner), mode) as client:
        found = body_of(await client.call_tool("list_task_repos", {"projectId": "CRW"}))
        assert [r["id"] for r in found["repos"]] == [repo_id]
        link = {
            **TASK,
            "repoId": repo_id,
            "branch": "agent/crw-1-fix-login",
            "targetBranch": "main",
            "title": "Fix login redirect",
        }
        made = body_of(
            await client.call_tool("propose_repo_change", {**link, "idempotencyKey": "p-1"})
        )
        assert made["created"] is True
        pr = "https://github.com/a/app/pull/42"
        again = body_of(
            await client.call_tool(
                "propose_repo_change", {**link, "idempotencyKey": "p-2", "prUrl": pr}
            )
        )
        assert (again["created"], again["link"]["id"]) == (False, made["link"]["id"])
        reported = body_of(
            await client.call_tool(
                "report_repo_status",
                {**TASK, "idempotencyKey": "r-1", "commit": "abc1234", "tests": "passed"},
            )
        )
        assert reported["report"]["tests"] == "passed"
        listed = body_of(await client.call_tool("list_task_repos", {"taskId": "CRW-1"}))
    assert [(x["branch"], x["prUrl"]) for x in listed["links"]] == [("agent/crw-1-fix-login", pr)]
    assert [r["commit"] for r in listed["reports"]] == ["abc1234"]
    assert count_rows(db, "task_repo_links") == 1


async def test_a_keyed_retry_replays_and_a_changed_retry_is_refused(
    url: str, db: Database, owner: User, mode: str
) -> None:
    arguments = {**TASK, "idempotencyKey": "same", "content": "once"}
    async with mcp_client(url, agent_secret(db, owner), mode) as client:
        first = await client.call_tool("post_comment", arguments)
        retry = await client.call_tool("post_comment", arguments)
        assert body_of(retry) == body_of(first)
        assert len(retry.content) == 2  # the second part says it is the first answer
        clash = await client.call_tool("post_comment", {**arguments, "content": "twice"})
    assert clash.is_error
    assert clash.structured_content is not None
    assert clash.structured_content["code"] == "IDEMPOTENCY_CONFLICT"
    assert clash.structured_content["details"]["resourceId"] == body_of(first)["comment"]["id"]
    assert count_rows(db, "task_comments") == 1


async def test_bad_arguments_are_error_results_naming_the_field(
    url: str, db: Database, owner: User, repo_id: str, mode: str
) -> None:
    cases: list[tuple[str, dict[str, Any], str, str]] = [
        ("post_comment", {"taskId": "CRW-1", "workspaceId": "ws_other", "idempotencyKey": "k", "content": "x"}, "VALIDATION", "workspaceId"),
        ("post_comment", {**TASK, "content": "x"}, "VALIDATION", "idempotencyKey"),
        ("agent_update", {**TASK, "idempotencyKey": "k", "content": "x" * 20_001}, "LIMIT_EXCEEDED", "content"),
        ("agent_update", {**TASK, "idempotencyKey": "k", "content": ""}, "VALIDATION", "content"),
        ("save_output", {**TASK, "idempotencyKey": "k", "name": "n" * 201, "content": "x"}, "LIMIT_EXCEEDED", "name"),
        ("ask_question", {**TASK, "idempotencyKey": "k", "question": "  "}, "VALIDATION", "question"),
        ("report_repo_status", {**TASK, "idempotencyKey": "k", "tests": "green"}, "VALIDATION", "tests"),
        ("report_repo_status", {**TASK, "idempotencyKey": "k", "commit": "xyz"}, "VALIDATION", "commit"),
        ("propose_repo_change", {**TASK, "idempotencyKey": "k", "repoId": repo_id, "branch": "b", "prUrl": "http://x.y/1"}, "VALIDATION", "prUrl"),
        ("list_task_repos", {}, "VALIDATION", "projectId"),
    ]  # fmt: skip
    async with mcp_client(url, agent_secret(db, owner), mode) as client:
        for tool, arguments, code, field in cases:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, field)
            assert result.structured_content is not None
            assert result.structured_content["code"] == code, (tool, field)
            assert result.structured_content["details"]["field"] == field, (tool, field)
        tests = await client.call_tool("report_repo_status", cases[6][1])
    assert tests.structured_content is not None
    assert tests.structured_content["details"]["accepted"] == [
        "passed",
        "failed",
        "running",
        "none",
    ]
    assert count_rows(db, "task_comments") + count_rows(db, "task_repo_reports") == 0


async def test_list_task_repos_fits_the_answer_budget_and_says_what_it_cut(
    url: str, db: Database, owner: User, repo_id: str, mode: str
) -> None:
    actor = person_actor(owner)
    for n in range(20):  # 20 reports of 4000 four-byte characters: far over 48 KiB
        repos.report_repo_status(
            db,
            actor,
            task="CRW-1",
            workspace_id=None,
            idempotency_key=f"r-{n}",
            repo_id=repo_id,
            summary="🙂" * 4000,
            answer=present_notes.report_answer,
        )
    async with mcp_client(url, agent_secret(db, owner), mode) as client:
        result = await client.call_tool("list_task_repos", {"taskId": "CRW-1"})
    first = result.content[0]
    assert isinstance(first, TextContent)
    assert len(first.text.encode()) <= 48 * 1024
    body = body_of(result)
    assert 1 <= len(body["reports"]) < 20
    assert body["reportsTotal"] == 20
    assert [r["id"] for r in body["repos"]] == [repo_id]
    assert len(result.content) == 2
    note = result.content[1]
    assert isinstance(note, TextContent)
    assert f"{len(body['reports'])} of 20 reports" in note.text
