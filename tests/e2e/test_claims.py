"""Agents sharing one board over MCP, against a real server, on both databases.

Sixteen agents (sixteen agent tokens, each its own SDK client) call claim_next_task at once
over ten ready tasks, round after round: a task never has two holders and every task is taken
once. An agent that stops renewing loses its task within its lease plus five seconds (the
sweeper records the lapse), another agent takes it, and the first agent's late write with its
old fence is refused CLAIM_LOST and changes nothing.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio import to_thread
from mcp import Client
from sqlalchemy import select
from sqlalchemy.engine import URL

from crewboard.config import Settings
from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage import schema
from crewboard.storage.database import Database
from crewboard.storage.uow import EventRecord
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import MODES, body_of, mcp_client
from tests.support.server import free_port, running_server

pytestmark = pytest.mark.anyio

AGENTS = 16
TASKS = 10  # ready tasks a round
ROUNDS = 20
LEASE = 30  # seconds: the shortest lease a claim may ask for
SWEEP = 0.2  # seconds between the test server's looks for lapsed leases
SCOPES = ["read", "tasks.manage"]


@dataclass
class Board:
    base: str
    db: Database
    owner: User
    secrets: list[str]


@pytest.fixture
def board(database_url: URL, tmp_path: Path) -> Iterator[Board]:
    """A served app on a database with the real clock (leases run out in real time), a
    project and sixteen agent tokens on it."""
    db = Database(database_url)
    try:
        owner = make_user(db, "owner@example.com")
        make_project(db, owner, "CRW")
        secrets = [
            tokens.issue_token(
                db, person_actor(owner), kind="agent", scopes=SCOPES, project="CRW",
                name=f"agent {n}",
            ).secret
            for n in range(AGENTS)
        ]  # fmt: skip
        settings = Settings(data_dir=tmp_path, port=free_port(), claim_sweep_interval=SWEEP)
        with running_server(settings, db) as base:
            yield Board(base, db, owner, secrets)
    finally:
        db.dispose()


async def agents(board: Board, stack: AsyncExitStack, count: int) -> list[Client]:
    """`count` connected clients, one per agent token, both protocol eras."""
    return [
        await stack.enter_async_context(
            mcp_client(board.base, board.secrets[n], MODES[n % len(MODES)])
        )
        for n in range(count)
    ]


def ready_tasks(board: Board, round_: int) -> set[str]:
    made = set()
    for n in range(TASKS):
        result = tasks.create_task(
            board.db, person_actor(board.owner), project="CRW", workspace_id=None,
            idempotency_key=f"r{round_}-{n}", title=f"Round {round_} task {n}",
            status="ready_for_ai",
        )  # fmt: skip
        made.add(str(result.body["task"]["id"]))
    return made


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """Whether the tool went through, and its answer (or its refusal: code, message, details)."""
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        return False, result.structured_content
    return True, body_of(result)


def claimed_events(db: Database) -> Counter[str]:
    """How many times each task was claimed, from the project's event log."""
    with db.engine.connect() as conn:
        rows = conn.execute(
            select(schema.events.c.task_id).where(schema.events.c.type == "task.claimed")
        )
        return Counter(str(row[0]) for row in rows)


async def test_sixteen_agents_never_share_a_task_and_take_every_ready_task_once(
    board: Board,
) -> None:
    seconds: list[float] = []
    async with AsyncExitStack() as stack:
        clients = await agents(board, stack, AGENTS)
        for round_ in range(ROUNDS):
            ready = await to_thread.run_sync(ready_tasks, board, round_)
            got: list[dict[str, Any] | None] = []

            async def claim_next(client: Client, got: list[dict[str, Any] | None] = got) -> None:
                started = time.perf_counter()
                ok, body = await call(client, "claim_next_task", {"projectId": "CRW"})
                seconds.append(time.perf_counter() - started)
                assert ok, body
                got.append(body["claim"])

            with anyio.fail_after(120):
                async with anyio.create_task_group() as group:
                    for client in clients:
                        group.start_soon(claim_next, client)
            taken = [claim["taskId"] for claim in got if claim is not None]
            holders = {claim["taskId"]: claim["holder"]["tokenId"] for claim in got if claim}
            assert sorted(taken) == sorted(ready), f"round {round_}: {Counter(taken)}"
            assert len(set(holders.values())) == TASKS  # ten agents, one task each
            assert got.count(None) == AGENTS - TASKS
            assert {claim["fence"] for claim in got if claim} == {1}
    counts = claimed_events(board.db)
    assert len(counts) == TASKS * ROUNDS
    assert set(counts.values()) == {1}
    cuts = statistics.quantiles(seconds, n=20)
    print(  # noqa: T201 - the measurement the issue asks for
        f"\nclaim_next_task, {AGENTS} agents at once ({board.db.dialect}): "
        f"p50 {statistics.median(seconds) * 1000:.0f} ms, p95 {cuts[18] * 1000:.0f} ms"
    )


def lapses(db: Database, task_id: str) -> int:
    with db.engine.connect() as conn:
        rows = conn.execute(
            select(schema.events.c.id).where(
                schema.events.c.type == "task.claim_lapsed", schema.events.c.task_id == task_id
            )
        )
        return len(rows.all())


async def test_an_agent_that_stops_renewing_loses_its_task_and_its_late_write_is_refused(
    board: Board,
) -> None:
    await to_thread.run_sync(ready_tasks, board, 0)
    async with AsyncExitStack() as stack:
        silent, other = await agents(board, stack, 2)
        ok, first = await call(
            silent, "claim_next_task", {"projectId": "CRW", "leaseSeconds": LEASE}
        )
        assert ok, first
        claimed_at = time.monotonic()
        task, fence = first["claim"]["taskId"], first["claim"]["fence"]
        ok, _ = await call(silent, "claim_task", {"taskId": task, "leaseSeconds": LEASE})
        assert ok  # its holder claims it again: a renewal, the same fence
        ok, read = await call(silent, "get_task", {"taskId": task, "includeContextPack": False})
        revision = read["task"]["revision"]
        ok, busy = await call(other, "claim_task", {"taskId": task})
        assert (ok, busy["code"]) == (False, "ALREADY_EXISTS")
        assert busy["details"]["holder"]["tokenId"] == first["claim"]["holder"]["tokenId"]

        # The silent agent renews no more: the sweeper records the lapse in time.
        lapsed = threading.Event()

        def heard(events: list[EventRecord]) -> None:
            if any(e.type == "task.claim_lapsed" for e in events):
                lapsed.set()

        board.db.add_event_listener(heard)
        heard_in_time = await to_thread.run_sync(lapsed.wait, LEASE + 5 + 5)
        lost_after = time.monotonic() - claimed_at
        assert heard_in_time, "no lapse recorded"
        assert lost_after <= LEASE + 5, f"the lapse came {lost_after:.1f} s after the claim"
        assert await to_thread.run_sync(lapses, board.db, task) == 1  # once, however often swept

        ok, second = await call(other, "claim_task", {"taskId": task, "leaseSeconds": LEASE})
        assert ok, second
        assert second["claim"]["fence"] == fence + 1

        late = {
            "projectId": "CRW", "taskId": task, "idempotencyKey": "late-write",
            "expectedRevision": revision, "patch": {"title": "Written too late"},
            "claimFence": fence,
        }  # fmt: skip
        ok, refused = await call(silent, "update_task", late)
        assert (ok, refused["code"]) == (False, "CLAIM_LOST")
        assert refused["details"]["currentFence"] == fence + 1
        assert refused["details"]["holder"]["tokenId"] == second["claim"]["holder"]["tokenId"]
        ok, after = await call(other, "get_task", {"taskId": task, "includeContextPack": False})
        assert after["task"]["revision"] == revision
        assert after["task"]["title"] != "Written too late"

        # The new holder writes with its own fence.
        late |= {"idempotencyKey": "holder-write", "claimFence": fence + 1}
        ok, written = await call(other, "update_task", late)
        assert ok, written
