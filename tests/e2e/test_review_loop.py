"""The whole review loop: an agent over a real MCP client, a person at the operator CLI.

agent reads its task (receipt) → hands in → person requests a revision → agent picks up the
follow-up and hands in again → a memory record it read changes (the draft is flagged) →
person approves into memory → memory, activity and the team show it; the older draft is
superseded. Then an acceptance rule takes a hand-in and a person undoes it, and proposal
cards are accepted and dismissed. Both databases, both protocol eras' clients.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client
from mcp_types import TextContent
from sqlalchemy.engine import URL

from crewboard.cli.main import cli
from crewboard.domain.clock import ManualClock
from crewboard.storage.database import Database
from tests.support.factories import make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.review import review_world

pytestmark = pytest.mark.anyio

Cli = Callable[..., Any]


@pytest.fixture
def person(database_url: URL, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """The operator CLI on the server's database, acting as the owner; answers parsed JSON."""
    monkeypatch.setenv("CREWBOARD_DATA_DIR", str(tmp_path / "cli"))
    monkeypatch.setenv("CREWBOARD_DATABASE_URL", database_url.render_as_string(hide_password=False))
    monkeypatch.delenv("CREWBOARD_CONFIG_FILE", raising=False)
    runner = CliRunner()

    def run(*args: str, ok: bool = True) -> Any:
        result = runner.invoke(
            cli, [*args, "--as", "owner@example.com", "--json"], catch_exceptions=False
        )
        assert (result.exit_code == 0) is ok, result.output
        return json.loads(result.output)

    return run


@pytest.fixture
def world(db: Database) -> dict[str, str]:
    """An AI seat, a memory record, a task for the seat that names the record, an agent token."""
    return review_world(db, make_user(db, "owner@example.com"))


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return body_of(result)


async def read_task(client: Client, task: str) -> dict[str, Any]:
    return dict(await call(client, "get_task", {"taskId": task}))


async def hand_in(client: Client, read: dict[str, Any], key: str, text: str) -> dict[str, Any]:
    task = read["task"]
    return dict(
        await call(
            client,
            "submit_result",
            {
                "projectId": task["projectId"],
                "workspaceId": None,
                "taskId": task["id"],
                "idempotencyKey": key,
                "expectedRevision": task["revision"],
                "contextReceiptId": read["contextReceiptId"],
                "title": f"Result: {task['title']}"[:300],
                "summary": "Redirect fixed",
                "content": text,
                "collection": "architecture",
                "document": "decisions",
                "references": [
                    {"kind": "commit", "value": "a1b2c3d4e5f6"},
                    {"kind": "tests", "value": "212 pass", "label": "after"},
                    {"kind": "link", "value": "CI run", "url": "https://ci.example.com/1"},
                ],
            },
        )
    )


async def ask_and_answer(agent: Client, person: Cli, task: str, hand_in_id: str) -> None:
    """The agent asks; the person sees the question above the hand-in and answers it."""
    asked = await call(
        agent,
        "ask_question",
        {
            "taskId": task,
            "workspaceId": None,
            "idempotencyKey": "q-1",
            "question": "Should expired tokens redirect too?",
        },
    )
    waiting = person("inbox", "list", "--project", "CRW")
    assert [i["id"] for i in waiting["items"] if i["kind"] == "hand_in"] == [hand_in_id]
    assert waiting["counts"] == {"hand_in": 1, "proposal": 0, "question": 1, "message": 0}
    assert [i["kind"] for i in waiting["items"]] == ["question", "hand_in"]  # newest first
    person("question", "answer", asked["question"]["id"], "--text", "Yes, the same way.")
    assert person("inbox", "list")["counts"]["question"] == 0


async def test_agent_and_person_complete_the_review_loop(
    url: str, world: dict[str, str], person: Cli, mode: str, clock: ManualClock
) -> None:
    async with mcp_client(url, world["secret"], mode) as agent:
        first_read = await read_task(agent, world["task"])
        assert first_read["contextReceiptId"].startswith("rcp_")
        named = [r["id"] for r in first_read["contextPack"]["records"]]
        assert world["record"] in named
        first = await hand_in(agent, first_read, "hand-in-1", "Fixed the redirect loop.")
        assert first["taskMoved"] is True
        first_id = first["draft"]["id"]
        clock.advance(timedelta(minutes=5))

        await ask_and_answer(agent, person, world["task"], first_id)
        revised = person("review", "revise", first_id, "--comment", "Also cover expired tokens.")
        follow_up = revised["followUpTaskId"]

        again = await read_task(agent, follow_up)
        assert "Also cover expired tokens." in again["task"]["brief"]
        assert again["task"]["parentTaskId"] == world["task"]
        second = await hand_in(agent, again, "hand-in-2", "Redirect and expired tokens fixed.")
        second_id = second["draft"]["id"]
        assert second["inputsChanged"] == []

        # A person corrects the record the agent read: the waiting draft is flagged.
        person(
            "memory", "edit", world["record"], "--expected-version", "1",
            "--content", "Login sessions are stored in Redis with a 15 minute expiry.",
        )  # fmt: skip
        shown = person("review", "show", second_id)
        changed = shown["inputsChanged"]
        assert [(c["kind"], c["id"]) for c in changed] == [("record", world["record"])]

        approved = person(
            "review", "approve", second_id, "--memory", "--collection", "architecture",
            "--document", "decisions",
        )  # fmt: skip
        assert approved["draft"]["status"] == "saved_to_memory"
        assert person("review", "show", first_id)["status"] == "superseded"

        accepted = await call(agent, "get_project_memory", {"projectId": "CRW", "ids": []})
        records = await call(
            agent, "get_project_memory", {"projectId": "CRW", "collection": "architecture"}
        )
        sources = {r.get("sourceDraftId") for r in records["records"]}
        assert second_id in sources
        assert accepted is not None

        activity = await agent.call_tool("list_activity", {"projectId": "CRW", "mine": True})
        everything = body_of(activity)["entries"]
        answers = [e for e in everything if e["type"] == "task.question_answered"]
        assert [e["answerPreview"] for e in answers] == ["Yes, the same way."]
        entries = [e for e in everything if e["type"].startswith("draft.")]
        statuses = {(e["draftId"], e["type"]) for e in entries}
        assert (first_id, "draft.revision_requested") in statuses
        assert (second_id, "draft.saved_to_memory") in statuses
        assert (first_id, "draft.superseded") in statuses
        assert {e["idempotencyKey"] for e in entries} == {"hand-in-1", "hand-in-2"}
        handed_text = json.dumps(entries)
        assert "expired tokens fixed" not in handed_text  # never the draft's text
        assert "Fixed the redirect loop" not in handed_text
        assert all("content" not in e for e in entries)
        cursor = activity.content[1]
        assert isinstance(cursor, TextContent)

        seat = next(
            r
            for r in (await call(agent, "list_team", {"projectId": "CRW"}))["teams"][0]["roles"]
            if r["id"] == world["seat"]
        )
        assert seat["xp"] > 0


async def test_an_acceptance_rule_takes_a_hand_in_and_a_person_undoes_it(
    url: str, world: dict[str, str], person: Cli, mode: str
) -> None:
    rule = person("rule", "add", "CRW", "--match", "all", "--collection", "general")
    async with mcp_client(url, world["secret"], mode) as agent:
        read = await read_task(agent, world["task"])
        handed = await hand_in(agent, read, "ruled", "Done by the book.")
        draft_id = handed["draft"]["id"]
        assert handed["draft"]["status"] == "accepted_by_rule"
        shown = person("review", "show", draft_id)
        assert shown["ruleId"] == rule["id"]
        record_id = shown["memoryRecordId"]
        found = await call(agent, "get_project_memory", {"projectId": "CRW", "ids": [record_id]})
        assert [r["id"] for r in found["records"]] == [record_id]

        undone = person("review", "undo", draft_id)
        assert undone["draft"]["status"] == "returned_to_review"
        gone = await call(agent, "get_project_memory", {"projectId": "CRW", "ids": [record_id]})
        assert gone["records"] == []
        task = await read_task(agent, world["task"])
        assert task["task"]["status"] == "review"


async def test_proposal_cards_are_accepted_or_dismissed_by_a_person(
    url: str, db: Database, world: dict[str, str], person: Cli, mode: str
) -> None:
    async with mcp_client(url, world["secret"], mode) as agent:
        wanted = await call(
            agent,
            "propose_task",
            {
                "projectId": "CRW",
                "workspaceId": None,
                "title": "Add a logout button",
                "typeHint": "development",
            },
        )
        unwanted = await call(
            agent,
            "propose_role",
            {
                "projectId": "CRW",
                "workspaceId": None,
                "name": "Poet",
                "role": "Writes release poems",
            },
        )
        refused = await agent.call_tool(
            "propose_task",
            {"projectId": "CRW", "workspaceId": None, "title": "x", "typeHint": "poetry"},
        )
        assert refused.is_error
        board_before = (await call(agent, "list_tasks", {"projectId": "CRW"}))["tasks"]
        team_before = await call(agent, "list_team", {"projectId": "CRW"})

        person("proposal", "dismiss", unwanted["proposal"]["id"])
        assert await call(agent, "list_team", {"projectId": "CRW"}) == team_before
        assert (await call(agent, "list_tasks", {"projectId": "CRW"}))["tasks"] == board_before

        made = person("proposal", "accept", wanted["proposal"]["id"])
        assert made["status"] == "accepted"
        titles = [
            t["title"] for t in (await call(agent, "list_tasks", {"projectId": "CRW"}))["tasks"]
        ]
        assert titles[-1] == "Add a logout button"
        assert len(titles) == len(board_before) + 1
        twice = person("proposal", "accept", wanted["proposal"]["id"], ok=False)
        assert twice["error"]["code"] == "VALIDATION"
