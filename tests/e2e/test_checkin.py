"""The check-in over MCP, against a real server, on both databases.

An idle check-in costs a few hundred bytes on the wire. After a person answers an agent's
question, decides its hand-in, mentions it, re-assigns a task to it, writes in its thread and
breaks its claim, the agent's next check-in tells each of those once, and nothing of another
agent's questions, hand-ins, messages or claims; the one after is idle again. A check-in
renews the caller's leases.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from sqlalchemy.engine import URL

from crewboard.config import Settings
from crewboard.domain.identity.records import User
from crewboard.domain.projects import TeamRole
from crewboard.services.board import claims, notes, questions, task_updates, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.projects import team
from crewboard.services.review import decisions, messages
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import MODES, RAW_HEADERS, body_of, mcp_client, rpc
from tests.support.server import free_port, running_server

pytestmark = pytest.mark.anyio

SCOPES = ["read", "tasks.manage", "drafts.create"]
IDLE_BYTES = 300


@dataclass
class Crew:
    base: str
    db: Database
    owner: User
    builder: TeamRole
    scout: TeamRole
    builder_secret: str
    scout_secret: str


@pytest.fixture
def crew(database_url: URL, tmp_path: Path) -> Iterator[Crew]:
    """A served app with a project, two AI seats and an agent token acting as each."""
    db = Database(database_url)
    try:
        owner = make_user(db, "owner@example.com")
        make_project(db, owner, "CRW")
        me = person_actor(owner)
        seats = [
            team.add_team_role(db, me, project="CRW", name=name, role=role)
            for name, role in (("builder", "backend"), ("scout", "research"))
        ]
        secrets = [
            tokens.issue_token(
                db, me, kind="agent", scopes=SCOPES, project="CRW", name=seat.name, seat=seat.id
            ).secret
            for seat in seats
        ]
        settings = Settings(data_dir=tmp_path, port=free_port())
        with running_server(settings, db) as base:
            yield Crew(base, db, owner, seats[0], seats[1], secrets[0], secrets[1])
    finally:
        db.dispose()


def new_task(crew: Crew, title: str, **fields: Any) -> dict[str, Any]:
    made = tasks.create_task(
        crew.db, person_actor(crew.owner), project="CRW", workspace_id=None,
        idempotency_key=None, title=title, **fields,
    )  # fmt: skip
    return dict(made.body["task"])


async def check_in(client: Client, cursor: str | None = None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"projectId": "CRW"}
    if cursor is not None:
        arguments["cursor"] = cursor
    result = await client.call_tool("get_updates", arguments)
    assert not result.is_error, result.content
    return dict(body_of(result))


KEYED = ("ask_question", "submit_result")


async def tool(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name in KEYED:
        arguments = {**arguments, "idempotencyKey": uuid.uuid4().hex}
    if name == "submit_result":  # a hand-in builds on a read of its task
        read = await tool(client, "get_task", {"taskId": arguments["taskId"]})
        arguments |= {"contextReceiptId": read.get("contextReceiptId")}
        arguments |= {"expectedRevision": read.get("revision") or read["task"]["revision"]}
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    return dict(body_of(result))


def idle_wire_bytes(crew: Crew, cursor: str) -> int:
    """The whole HTTP body of an idle check-in (JSON-RPC envelope included)."""
    headers = {**RAW_HEADERS, "MCP-Protocol-Version": "2025-11-25"}
    headers["Authorization"] = f"Bearer {crew.builder_secret}"
    request = rpc(
        "tools/call", {"name": "get_updates", "arguments": {"projectId": "CRW", "cursor": cursor}}
    )
    response = httpx2.post(f"{crew.base}/mcp", json=request, headers=headers, timeout=30)
    assert response.status_code == 200
    assert json.loads(json.loads(response.content)["result"]["content"][0]["text"])["updates"] == []
    return len(response.content)


@pytest.mark.parametrize("mode", MODES)
async def test_an_idle_check_in_costs_a_few_hundred_bytes(crew: Crew, mode: str) -> None:
    new_task(crew, "Ready for anyone", status="ready_for_ai", priority="high")
    new_task(crew, "Not ready yet")
    async with mcp_client(crew.base, crew.builder_secret, mode) as agent:
        first = await check_in(agent)
        # The first check-in starts now and names what the agent may take.
        assert [(u["kind"], u["task"], u["priority"]) for u in first["updates"]] == [
            ("ready", "CRW-1", "high")
        ]
        idle = await check_in(agent, first["nextCursor"])
        assert idle == {"updates": [], "hasMore": False, "nextCursor": idle["nextCursor"]}
        assert len(json.dumps(idle, separators=(",", ":"))) <= IDLE_BYTES
        assert idle_wire_bytes(crew, idle["nextCursor"]) <= IDLE_BYTES
        # Its own writes are not news to it.
        await tool(agent, "claim_task", {"taskId": "CRW-1"})
        assert (await check_in(agent, idle["nextCursor"]))["updates"] == []


async def test_the_agent_hears_each_change_once_and_nothing_of_another_agents_business(
    crew: Crew,
) -> None:
    me = person_actor(crew.owner)
    mine = new_task(crew, "Build the export", status="ready_for_ai", assignee_id=crew.builder.id)
    later = new_task(crew, "Write the docs")  # backlog, no one's yet
    elsewhere = new_task(crew, "Unrelated work", assignee_id=crew.scout.id)
    async with (
        mcp_client(crew.base, crew.builder_secret, MODES[0]) as agent,
        mcp_client(crew.base, crew.scout_secret, MODES[1]) as other,
    ):
        cursor = (await check_in(agent))["nextCursor"]
        held = (await tool(agent, "claim_task", {"taskId": "CRW-1"}))["claim"]
        await tool(agent, "claim_task", {"taskId": "CRW-2"})  # the one a person will break
        asked = await tool(agent, "ask_question", {"taskId": "CRW-1", "question": "CSV or XLSX?"})
        handed = await tool(
            agent, "submit_result",
            {"projectId": "CRW", "taskId": "CRW-1", "expectedRevision": mine["revision"] + 0,
             "title": "Export built", "content": "The export writes CSV."},
        )  # fmt: skip
        # The other agent's own business, which the first must not hear of.
        other_asked = await tool(other, "ask_question", {"taskId": "CRW-3", "question": "Scope?"})
        other_hand_in = await tool(
            other, "submit_result",
            {"projectId": "CRW", "taskId": "CRW-3", "expectedRevision": elsewhere["revision"],
             "title": "Found it", "content": "Notes."},
        )  # fmt: skip
        await tool(other, "claim_task", {"taskId": "CRW-3"})

        # The person's turn.
        questions.answer_question(crew.db, me, _id(asked, "question"), "CSV, please.")
        questions.answer_question(crew.db, me, _id(other_asked, "question"), "Narrow.")
        decisions.request_revision(crew.db, me, _id(handed, "draft"), comment="Add headers.")
        decisions.reject(crew.db, me, _id(other_hand_in, "draft"), comment="No.")
        notes.post_comment(
            crew.db, me, task="CRW-3", workspace_id=None, idempotency_key=uuid.uuid4().hex,
            content="@builder could you look at this too?", answer=lambda c: {"id": c.id},
        )  # fmt: skip
        notes.post_comment(
            crew.db, me, task="CRW-3", workspace_id=None, idempotency_key=uuid.uuid4().hex,
            content="@scout thanks", answer=lambda c: {"id": c.id},
        )  # fmt: skip
        task_updates.update_task(
            crew.db, me, project="CRW", workspace_id=None, idempotency_key=uuid.uuid4().hex,
            task_id=str(later["id"]), expected_revision=int(later["revision"]),
            patch={"assignee_id": crew.builder.id, "priority": "high"},
        )  # fmt: skip
        for seat in (crew.builder, crew.scout):
            messages.post_message(
                crew.db, me, project="CRW", workspace_id=None, participant_id=seat.id,
                body=f"Hi {seat.name}",
                task=None, idempotency_key=uuid.uuid4().hex, answer=lambda m: {"id": m.id},
            )  # fmt: skip
        claims.break_claim(crew.db, me, task="CRW-2")

        news = await check_in(agent, cursor)
        told = sorted(
            (u["kind"], u.get("task"), u.get("text") or u.get("status")) for u in news["updates"]
        )
        assert told == sorted(
            [
                ("answer", "CRW-1", "CSV, please."),
                ("decision", "CRW-1", "Add headers."),
                ("mention", "CRW-3", "@builder could you look at this too?"),
                ("task", "CRW-2", None),
                ("message", None, "Hi builder"),
                ("claim_lost", "CRW-2", "broken"),
                # Asking for a revision put the task back on the board and made its follow-up
                # task, both for the builder's seat; the hand-in let go of the claim on the
                # first, so both are free.
                ("ready", "CRW-1", None),
                ("ready", "CRW-4", None),
            ]
        ), json.dumps(news, indent=1)
        changed = next(u for u in news["updates"] if u["kind"] == "task")
        assert set(changed["changed"]) >= {"assigneeId", "priority"}
        assert changed["by"] in (crew.owner.display_name, crew.owner.email)
        assert held["fence"] == 1
        assert "claims" not in news  # the hand-in let go of CRW-1, the person broke CRW-2
        # Once told, never again.
        again = await check_in(agent, news["nextCursor"])
        assert again["updates"] == [], again


async def test_a_check_in_renews_the_callers_leases(crew: Crew) -> None:
    new_task(crew, "Long job", status="ready_for_ai")
    async with mcp_client(crew.base, crew.builder_secret, MODES[1]) as agent:
        held = (await tool(agent, "claim_task", {"taskId": "CRW-1", "leaseSeconds": 60}))["claim"]
        cursor = (await check_in(agent))["nextCursor"]
        answer = await check_in(agent, cursor)
        (claim,) = answer["claims"]
        assert claim["task"] == "CRW-1"
        assert claim["claimFence"] == held["fence"]
        assert _when(claim["expiresAt"]) > _when(held["expiresAt"])


def _id(answer: dict[str, Any], kind: str) -> str:
    """The id of what a tool made, wherever its answer keeps it."""
    for key in (kind, "draft", "question", "handIn"):
        value = answer.get(key)
        if isinstance(value, dict) and "id" in value:
            return str(value["id"])
    found = answer.get(f"{kind}Id") or answer.get("id")
    assert found, answer
    return str(found)


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text)
