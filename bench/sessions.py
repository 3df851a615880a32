"""The spec session workload: `python -m bench sessions [--database postgresql] [--turns N]`.

Two questions, against a real model server on loopback that speaks the OpenAI API
(tests/support/model_server.py), so the provider's own time is a real HTTP exchange:

- **A turn's overhead**: what running a turn costs beyond waiting on the provider - claiming
  it, building the request (workflow, working context, conversation), streaming the reply
  into the turn row, writing the reply and its proposals, ending the turn. Measured in this
  process by the runner itself (`Outcome.seconds - Outcome.provider_seconds`) over `--turns`
  turns, each on a session that already holds a conversation and a proposed file.
  Target: median under 50 ms.
- **Tool calls while sessions run**: a served node (`bench.server`, `--runners` session
  runners) answers `bench_noop` over HTTP while `--sessions` sessions stream long replies
  (a chunk every 50 ms for ~10 s each), against the same calls with no session running,
  in alternating blocks. Target: the median within 1.1x.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from tests.support.factories import make_project, make_user
from tests.support.model_server import ModelServer, Reply
from tests.support.sessions import configure_model, proposes

from bench.measure import Target, connect
from bench.noop import NOOP_NAME
from bench.process import ServerProcess, throwaway_postgres
from bench.runner import add_database_options, progress
from crewboard.config import Settings
from crewboard.contract.sessions.present import started_answer
from crewboard.domain.identity.records import Actor
from crewboard.domain.sessions import Mode
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import sessions
from crewboard.services.sessions.conversation import send_message
from crewboard.services.sessions.runner import SessionRunner
from crewboard.storage import migrate
from crewboard.storage.database import Database

OVERHEAD_TARGET_MS = 50.0
CALLS_TARGET = 1.1
REPLY = proposes("specs/export/requirements.md", "# Requirements\n\n" + "1. A rule.\n" * 60)


def ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def p95(values: list[float]) -> float:
    return round(sorted(values)[int(len(values) * 0.95) - 1] * 1000, 2)


async def overhead(url: str, turns: int, folder: Path) -> dict[str, Any]:
    """Median and 95th percentile of a turn's cost beyond the provider, over `turns` turns."""
    db = Database(url)
    migrate.upgrade(db)
    try:
        owner = make_user(db, "bench@example.com", is_owner=True)
        make_project(db, owner, "BEN")
        actor: Actor = person_actor(owner)
        with ModelServer(default=lambda _api, _body: REPLY) as model:
            configure_model(db, model, "openai", max_retries=0)
            runner = SessionRunner(db, Settings(data_dir=folder, session_turn_limit=10_000))
            session = sessions.start_session(
                db, actor, project="BEN", workspace_id=None, mode=Mode.GENERATE,
                prompt="A CSV export of invoices. " * 20, answer=started_answer,
            ).body["sessionId"]  # fmt: skip
            await runner.drain()
            cost: list[float] = []
            provider: list[float] = []
            for n in range(turns):
                send_message(db, actor, project="BEN", ref=session, text=f"Go on ({n}).",
                             turn_limit=10_000)  # fmt: skip
                (outcome,) = await runner.drain()
                cost.append(outcome.overhead)
                provider.append(outcome.provider_seconds)
    finally:
        db.dispose()
    return {"overhead_ms": ms(cost), "overhead_p95_ms": p95(cost), "provider_ms": ms(provider),
            "met": ms(cost) < OVERHEAD_TARGET_MS}  # fmt: skip


async def noop_calls(target: Target, count: int) -> list[float]:
    took: list[float] = []
    async with connect(target, "legacy") as client:
        for _ in range(20):
            await client.call_tool(NOOP_NAME, {})
        for _ in range(count):
            started = time.perf_counter()
            await client.call_tool(NOOP_NAME, {})
            took.append(time.perf_counter() - started)
    return took


def start_sessions(db: Database, count: int) -> None:
    owner = db.read(lambda uow: uow.users.get_by_email("owner@crewboard.local"))
    assert owner is not None
    for n in range(count):
        sessions.start_session(
            db, person_actor(owner), project="DEMO", workspace_id=None, mode=Mode.GENERATE,
            prompt=f"Session {n}: an export of invoices.", answer=started_answer,
        )  # fmt: skip


def wait_running(db: Database, count: int) -> None:
    """Until the node runs `count` turns (its runner looks at the queue every 2 s)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        running = db.read(lambda uow: uow.conn.exec_driver_sql(
            "SELECT count(*) FROM spec_session_turns WHERE status = 'running'").scalar_one())  # fmt: skip
        if running >= count:
            return
        time.sleep(0.1)
    raise RuntimeError(f"the node did not start {count} turns within 30 s")


def under_load(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
    server = ServerProcess(database_url, env={"CREWBOARD_SESSION_RUNNERS": str(args.runners)})
    with server as info, ModelServer() as model:
        url = database_url or f"sqlite:///{Path(server.folder) / 'data' / 'crewboard.db'}"
        db = Database(url)
        try:
            configure_model(db, model, "openai", timeout=60, max_retries=0)
            target = Target(f"{info.base_url}/mcp", info.token, info.project, info.pid)
            quiet: list[float] = []
            loaded: list[float] = []
            for block in range(args.blocks):
                progress(f"{info.database}: block {block + 1} of {args.blocks}, quiet")
                quiet += anyio.run(noop_calls, target, args.calls)
                model.script(*[Reply("word " * 200, chunks=200, pause=0.05)] * args.sessions)
                start_sessions(db, args.sessions)
                wait_running(db, min(args.sessions, args.runners))
                progress(f"{info.database}: block {block + 1}, {args.sessions} sessions streaming")
                loaded += anyio.run(noop_calls, target, args.calls)
                wait_idle(db)
        finally:
            db.dispose()
    ratio = ms(loaded) / ms(quiet)
    return {"quiet_ms": ms(quiet), "loaded_ms": ms(loaded), "ratio": round(ratio, 3),
            "met": ratio <= CALLS_TARGET}  # fmt: skip


def wait_idle(db: Database) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        busy = db.read(lambda uow: uow.conn.exec_driver_sql(
            "SELECT count(*) FROM spec_session_turns WHERE status IN ('queued', 'running')"
        ).scalar_one())  # fmt: skip
        if not busy:
            return
        time.sleep(0.2)
    raise RuntimeError("the sessions did not end within 120 s")


def run(args: argparse.Namespace, database_url: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="crewboard-bench-sessions-") as folder:
        url = database_url or f"sqlite:///{Path(folder) / 'turns.db'}"
        progress(f"turn overhead: {args.turns} turns")
        turn = anyio.run(overhead, url, args.turns, Path(folder))
    if database_url:  # the load part gets a database of its own
        with throwaway_postgres(args.postgres_url) as other:
            load = under_load(args, other)
    else:
        load = under_load(args, None)
    print("| measure | result | target |")
    print("| --- | ---: | ---: |")
    print(f"| a turn's overhead beyond the provider (median) | {turn['overhead_ms']} ms "
          f"(p95 {turn['overhead_p95_ms']} ms; provider {turn['provider_ms']} ms) | < 50 ms |")  # fmt: skip
    print(f"| bench_noop with {args.sessions} sessions streaming, against none | "
          f"{load['loaded_ms']} / {load['quiet_ms']} ms = **{load['ratio']}x** | <= 1.1x |")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench sessions", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--runners", type=int, default=8)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--blocks", type=int, default=3)
    args = parser.parse_args(argv)
    if args.database == "postgresql":
        with throwaway_postgres(args.postgres_url) as url:
            run(args, url)
    else:
        run(args, None)
