"""The check-in workload: `python -m bench checkin [--database postgresql] [--calls N]`.

What an idle agent pays to learn that nothing changed. One agent token (acting as an AI seat)
on a project whose event log already holds `--events` events checks in with `get_updates`
and the cursor of its last check-in, so the call reads an empty range at the end of a long
log. Against `bench_noop` (the MCP path alone) over the same client, alternating in blocks of
20 after a warm-up: the median of each, their ratio, and the bytes of the idle answer.

A second row times the idle check-in of an agent that holds a claim, which also renews that
claim's lease (a write): told, not held to the target.

Target: the idle check-in's median within 1.2x the no-op's; its answer under 300 bytes.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench.measure import Target, answer_of, connect
from bench.noop import NOOP_NAME
from bench.oauth import alternate_async
from bench.process import ServerProcess, throwaway_postgres
from bench.runner import add_database_options, progress
from crewboard.domain.identity.access import Scope
from crewboard.domain.identity.records import Actor
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.projects import team
from crewboard.storage.database import Database

TARGET = 1.2
IDLE_BYTES = 300
BLOCK = 20


def agent_tokens(db: Database, project: str, events: int) -> tuple[str, str]:
    """Two agent tokens on the project, each acting as an AI seat, after `events` events."""
    owner = db.read(lambda uow: uow.users.get_by_email("owner@crewboard.local"))
    assert owner is not None
    person = Actor(user_id=owner.id, scopes=frozenset(Scope))
    for n in range(events):
        tasks.create_task(
            db, person, project=project, workspace_id=None, idempotency_key=f"checkin-{n}",
            title=f"Check-in bench task {n}", status="ready_for_ai" if n % 10 == 0 else None,
        )  # fmt: skip
    secrets = []
    for name in ("idle agent", "holding agent"):
        team.add_team_role(db, person, project=project, name=name, role="backend")
        issued = tokens.issue_token(
            db, person, kind="agent", scopes=["read", "tasks.manage"], project=project, name=name
        )
        secrets.append(issued.secret)
    return secrets[0], secrets[1]


async def _cursor(client: Client, project: str) -> str:
    return str(
        answer_of(await client.call_tool("get_updates", {"projectId": project}))["nextCursor"]
    )


async def measure(
    base_url: str, secrets: tuple[str, str], project: str, rounds: int
) -> list[dict[str, Any]]:
    rows = []
    for label, secret, holds in (
        ("idle check-in", secrets[0], False),
        ("idle check-in holding a claim (renews it)", secrets[1], True),
    ):
        async with connect(Target(f"{base_url}/mcp", secret, project, 0), "legacy") as client:
            if holds:
                claimed = await client.call_tool("claim_next_task", {"projectId": project})
                assert not claimed.is_error, answer_of(claimed)
            cursor = await _cursor(client, project)
            arguments = {"projectId": project, "cursor": cursor}
            answer = await client.call_tool("get_updates", arguments)
            body = answer_of(answer)
            assert body["updates"] == [], body
            size = len(getattr(answer.content[0], "text", "").encode())
            for _ in range(50):  # warm-up
                await client.call_tool(NOOP_NAME, {})
                await client.call_tool("get_updates", arguments)
            noop, check_in = await alternate_async(
                lambda: client.call_tool(NOOP_NAME, {}),
                lambda: client.call_tool("get_updates", arguments),  # noqa: B023 - awaited here
                rounds,
                BLOCK,
            )
        noop_ms = statistics.median(noop) * 1000
        check_ms = statistics.median(check_in) * 1000
        rows.append(
            {
                "measure": label,
                "noop_ms": round(noop_ms, 3),
                "check_in_ms": round(check_ms, 3),
                "ratio": round(check_ms / noop_ms, 3),
                "bytes": size,
                "met": None if holds else check_ms / noop_ms <= TARGET and size <= IDLE_BYTES,
            }
        )
    return rows


def run(args: argparse.Namespace, database_url: str | None) -> list[dict[str, Any]]:
    server = ServerProcess(database_url)
    with server as info:
        url = database_url or f"sqlite:///{Path(server.folder) / 'data' / 'crewboard.db'}"
        db = Database(url)
        try:
            progress(f"{info.database}: {args.events} events in the project's log")
            secrets = agent_tokens(db, info.project, args.events)
        finally:
            db.dispose()
        progress(f"{info.database}: {args.calls} check-ins and no-ops, alternating")
        rows = anyio.run(measure, info.base_url, secrets, info.project, args.calls)
    for row in rows:
        row["database"] = info.database
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench checkin", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--events", type=int, default=2000)
    args = parser.parse_args(argv)
    if args.database == "postgresql":
        with throwaway_postgres(args.postgres_url) as url:
            rows = run(args, url)
    else:
        rows = run(args, None)
    print(f"| database | measure | no-op | check-in | ratio (target <= {TARGET}x) | answer bytes |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        met = "" if r["met"] in (True, None) else " (missed)"
        print(
            f"| {r['database']} | {r['measure']} | {r['noop_ms']} ms | {r['check_in_ms']} ms "
            f"| **{r['ratio']}x**{met} | {r['bytes']} |"
        )
    print("\n" + json.dumps(rows))
