"""The code bridge workload: `python -m bench bridge [--database postgresql] [--turns N]`.

A served node (`bench.server`), a real `crewboard reverse` on this repository's `src/` folder,
and the loopback model server scripted to make `--reads` file reads a turn, one a round, as a
brownfield model reading code does. Two questions:

- **A bridged read's round trip**: from the moment the turn queues the call to the moment the
  bridge's answer is stored (the call row's `created_at` → `answered_at`, both written by the
  server), against the same read done locally (`CodeFolder.answer` in this process). The
  difference is the bridge: the queue, the long poll, HTTP both ways, the answer's write.
- **A brownfield turn's overhead beyond the model's own time**: the turn's wall time on the
  node (`started_at` → `finished_at`) less the time spent waiting on the model
  (`provider_seconds`), with its reads in it, per turn and per read.

With `--database postgresql --nodes 2` the bridge holds its long poll on a node that runs no
turns, and the turn runs on the other: the round trip then crosses nodes through the database.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.model_server import ModelServer, Reply, ToolUse
from tests.support.serve import start_serve, stop_serve, wait_healthy
from tests.support.sessions import configure_model, proposes

from bench.process import REPO, ServerProcess, free_port, throwaway_postgres
from bench.runner import add_database_options, progress
from crewboard.cli.reverse.folder import CodeFolder
from crewboard.contract.sessions.present import started_answer
from crewboard.domain.sessions import Mode
from crewboard.services.identity import tokens
from crewboard.services.sessions import sessions
from crewboard.storage.database import Database

FOLDER = REPO / "src"
CONNECT_TIMEOUT = 60.0
TURN_TIMEOUT = 300.0


def reads_of(count: int) -> list[dict[str, Any]]:
    """`count` windows of 100 lines over the larger modules of this repository."""
    files = sorted((p for p in FOLDER.rglob("*.py") if p.stat().st_size > 8_000), key=str)
    windows = []
    for n in range(count):
        path = files[n % len(files)]
        start = 1 + 100 * (n // len(files))
        windows.append({"path": str(path.relative_to(FOLDER)), "startLine": start,
                        "endLine": start + 99})  # fmt: skip
    return windows


def ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 2)


def local_reads(windows: list[dict[str, Any]], rounds: int) -> list[float]:
    folder = CodeFolder(FOLDER)
    seconds: list[float] = []
    for _ in range(rounds):
        for window in windows:
            started = time.perf_counter()
            answer = folder.answer("read_file", window)
            seconds.append(time.perf_counter() - started)
            assert "error" not in answer, answer
    return seconds


def start_reverse(url: str, token: str, project: str, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREWBOARD_")}
    env["CREWBOARD_TOKEN"] = token
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "crewboard", "reverse", str(FOLDER), "--project", project,
             "--url", url],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while "Connected" not in log.read_text(encoding="utf-8", errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"crewboard reverse did not connect:\n{log.read_text()}")
        time.sleep(0.1)  # another process's start has no event to wait on; bounded above
    return process


TURN = (
    "SELECT status, started_at, finished_at, provider_seconds, error FROM spec_session_turns "
    "WHERE session_id = {session} ORDER BY seq DESC LIMIT 1"
)
CALLS = (
    "SELECT status, created_at, answered_at FROM code_calls WHERE session_id = {session} "
    "ORDER BY seq"
)


def turn_rows(db: Database, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    def work(uow: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        # Each driver's own placeholder: the bench reads the rows the server wrote, as is.
        mark = "%(session)s" if db.dialect == "postgresql" else ":session"
        run = uow.conn.exec_driver_sql
        turn = run(TURN.format(session=mark), {"session": session_id}).mappings().one()
        calls = run(CALLS.format(session=mark), {"session": session_id}).mappings().all()
        return dict(turn), [dict(c) for c in calls]

    return db.read(work)


def moment(value: Any) -> datetime:
    """A stored time as an aware datetime (SQLite's driver gives text, PostgreSQL's a
    datetime)."""
    when = datetime.fromisoformat(value) if isinstance(value, str) else value
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def seconds_between(start: Any, end: Any) -> float:
    return (moment(end) - moment(start)).total_seconds()


@contextmanager
def second_node(database_url: str, folder: Path) -> Iterator[str]:
    """`crewboard serve` on the same database, as a second node an operator adds."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREWBOARD_")}
    env |= {"CREWBOARD_DATABASE_URL": database_url, "CREWBOARD_PORT": str(port),
            "CREWBOARD_DATA_DIR": str(folder / "node2"), "CREWBOARD_NODE_NAME": "bench-node-2"}  # fmt: skip
    log = folder / "node2.log"
    process = start_serve(env, log)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, process, log)
        yield url
    finally:
        stop_serve(process)


def run_turns(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
    windows = reads_of(args.reads)
    with ExitStack() as stack:
        holder_env = {"CREWBOARD_SESSION_RUNNERS": "0"} if args.nodes == 2 else {}
        holder = ServerProcess(database_url, env=holder_env)
        info = stack.enter_context(holder)
        if args.nodes == 2 and database_url:  # a second node on the database runs the turns
            stack.enter_context(second_node(database_url, holder.folder))
        url = database_url or f"sqlite:///{holder.folder / 'data' / 'crewboard.db'}"
        db = Database(url)
        stack.callback(db.dispose)
        model = stack.enter_context(ModelServer())
        configure_model(db, model, "openai", timeout=60, max_retries=0)
        bridge = start_reverse(info.base_url, info.token, info.project, holder.folder / "rev.log")
        stack.callback(bridge.wait, timeout=20)
        stack.callback(bridge.terminate)
        actor = tokens.authenticate_token(db, info.token)
        trips: list[float] = []
        overheads: list[float] = []
        providers: list[float] = []
        for n in range(args.turns):
            progress(f"{info.database}: turn {n + 1} of {args.turns}, {args.reads} reads")
            model.script(
                *[ToolUse((("read_file", window),)) for window in windows],
                Reply(proposes(f"specs/bench-{n}/requirements.md", "# Requirements\n")),
            )
            session_id = sessions.start_session(
                db, actor, project=info.project, workspace_id=None, mode=Mode.GENERATE,
                prompt="Describe what this code does.", workflow_id="crewboard-brownfield-v1",
                answer=started_answer,
            ).body["sessionId"]  # fmt: skip
            deadline = time.monotonic() + TURN_TIMEOUT
            while (turn := turn_rows(db, session_id)[0])["status"] not in ("done", "failed"):
                if time.monotonic() > deadline:
                    raise RuntimeError("the turn did not end in time")
                time.sleep(0.2)  # the node's write has no event here; bounded above
            if turn["status"] != "done":
                raise RuntimeError(f"the turn failed: {turn['error']}")
            _, calls = turn_rows(db, session_id)
            trips += [seconds_between(c["created_at"], c["answered_at"]) for c in calls]
            wall = seconds_between(turn["started_at"], turn["finished_at"])
            overheads.append(wall - float(turn["provider_seconds"]))
            providers.append(float(turn["provider_seconds"]))
    local = local_reads(windows, rounds=max(1, args.turns))
    return {
        "database": info.database, "nodes": args.nodes, "reads": len(trips),
        "bridged_p50_ms": ms(trips), "bridged_p95_ms": p95(trips),
        "local_p50_ms": ms(local), "local_p95_ms": p95(local),
        "turn_overhead_ms": ms(overheads), "per_read_ms": round(ms(overheads) / args.reads, 2),
        "provider_ms": ms(providers),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench bridge", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--reads", type=int, default=20, help="file reads in each turn")
    parser.add_argument("--nodes", type=int, choices=(1, 2), default=1)
    args = parser.parse_args(argv)
    if args.nodes == 2 and args.database != "postgresql":
        parser.error("--nodes 2 needs --database postgresql (SQLite serves one node)")
    with tempfile.TemporaryDirectory(prefix="crewboard-bench-bridge-"):
        if args.database == "postgresql":
            with throwaway_postgres(args.postgres_url) as url:
                result = run_turns(args, url)
        else:
            result = run_turns(args, None)
    print(f"| measure ({result['database']}, {result['nodes']} node(s), {result['reads']} "
          "reads) | p50 | p95 |")  # fmt: skip
    print("| --- | ---: | ---: |")
    print(f"| a read through the bridge (queued → answer stored) | {result['bridged_p50_ms']} ms"
          f" | {result['bridged_p95_ms']} ms |")  # fmt: skip
    print(f"| the same read in the folder, locally | {result['local_p50_ms']} ms | "
          f"{result['local_p95_ms']} ms |")  # fmt: skip
    print(f"| a brownfield turn beyond the model's time ({args.reads} reads) | "
          f"{result['turn_overhead_ms']} ms ({result['per_read_ms']} ms a read) | |")  # fmt: skip
    print(f"| the model's own time in the turn (loopback) | {result['provider_ms']} ms | |")
