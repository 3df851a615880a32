"""`python -m bench claims`: agents racing for ready tasks with `claim_next_task`.

A real server (bench/server.py) on SQLite or PostgreSQL, with 16 agent tokens on its project
(`--agent-tokens`). Each round the project's person creates 10 tasks ready for an agent
(uncounted), then the 16 agents, each its own `mcp.Client` on the Streamable HTTP transport,
call `claim_next_task` at the same moment: ten take one task each, six are told nothing is
free. Every call is timed on the client, for 20 rounds; before the first, the agents drain the
tasks the new project starts with, so a round's tasks are the only free ones.

The report gives p50/p95/p99 of all calls, and of those that took a task and those that found
none apart, and checks what the claims promise: no task taken twice, every task of a round
taken in that round, no error.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench.measure import ERAS, Target, answer_of, connect, percentile, server_cpu_seconds
from bench.process import ServerProcess, run_workload
from bench.runner import add_database_options, environment

DRAIN_LIMIT = 200  # claim_next_task calls spent taking the tasks a new project starts with


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench claims", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--era", default="legacy", choices=ERAS)
    parser.add_argument("--agents", type=int, default=16, help="agents calling at once")
    parser.add_argument("--tasks", type=int, default=10, help="ready tasks each round")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 4 agents, 3 rounds")
    parser.add_argument("--output", type=Path, default=None, help="JSON results file")
    args = parser.parse_args(argv)
    if args.quick:
        args.agents, args.tasks, args.rounds = 4, 3, 3
    if min(args.agents, args.tasks, args.rounds) < 1:
        parser.error("--agents, --tasks and --rounds must be at least 1")
    return args


def progress(message: str) -> None:
    sys.stderr.write(f"[bench claims] {message}\n")
    sys.stderr.flush()


@dataclass
class Seen:
    """What the timed calls answered."""

    took_ns: list[int] = field(default_factory=list)
    none_ns: list[int] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    taken: Counter[str] = field(default_factory=Counter)  # task id -> times taken
    short_rounds: int = 0  # rounds where a created task was left untaken


@dataclass(frozen=True)
class Row:
    kind: str
    calls: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    errors: int


async def claim_next(client: Client, project: str) -> tuple[int, dict[str, Any] | None, str | None]:
    """One timed call: nanoseconds, the claim taken (None: nothing free), the error if any."""
    started = time.perf_counter_ns()
    try:
        result = await client.call_tool("claim_next_task", {"projectId": project})
    except Exception as error:  # a failed call is a finding, not the end of the run
        return time.perf_counter_ns() - started, None, f"{type(error).__name__}: {error}"[:200]
    spent = time.perf_counter_ns() - started
    body = answer_of(result)
    if result.is_error:
        return spent, None, f"{body.get('code', '?')}: {body.get('message', '')}"[:200]
    return spent, body.get("claim"), None


async def drain(agent: Client, project: str) -> int:
    """Take every task a new project starts ready with; how many there were."""
    for taken in range(DRAIN_LIMIT):
        _, claim, error = await claim_next(agent, project)
        if error is not None:
            raise RuntimeError(f"claim_next_task failed before timing: {error}")
        if claim is None:
            return taken
    raise RuntimeError(f"more than {DRAIN_LIMIT} tasks were free before timing")


async def create_ready(person: Client, project: str, count: int, round_: int) -> set[str]:
    made = set()
    for n in range(count):
        result = await person.call_tool(
            "create_task",
            {
                "projectId": project, "workspaceId": None, "idempotencyKey": uuid.uuid4().hex,
                "title": f"Round {round_} task {n}", "status": "ready_for_ai",
            },
        )  # fmt: skip
        if result.is_error:
            raise RuntimeError(f"create_task failed: {answer_of(result)}")
        made.add(str(answer_of(result)["task"]["id"]))
    return made


async def measure(target: Target, agents: list[str], args: argparse.Namespace) -> Seen:
    seen = Seen()
    async with AsyncExitStack() as stack:
        person = await stack.enter_async_context(connect(target, args.era))
        clients = []
        for secret in agents:
            agent = Target(target.mcp_url, secret, target.project, target.pid)
            client = await stack.enter_async_context(connect(agent, args.era))
            await client.list_tools()  # as a real client does first; also warms the connection
            clients.append(client)
        progress(f"{await drain(clients[0], target.project)} tasks were ready before timing")
        for round_ in range(args.rounds):
            made = await create_ready(person, target.project, args.tasks, round_)
            answers: list[tuple[int, dict[str, Any] | None, str | None]] = []
            start = anyio.Event()

            async def one(
                client: Client, answers: list[Any] = answers, start: anyio.Event = start
            ) -> None:
                await start.wait()
                answers.append(await claim_next(client, target.project))

            async with anyio.create_task_group() as group:
                for client in clients:
                    group.start_soon(one, client)
                start.set()
            taken = set()
            for spent, claim, error in answers:
                if error is not None:
                    seen.errors[error] += 1
                    continue
                (seen.took_ns if claim else seen.none_ns).append(spent)
                if claim:
                    seen.taken[claim["taskId"]] += 1
                    taken.add(claim["taskId"])
            seen.short_rounds += taken != made
    return seen


def row(kind: str, values_ns: list[int], errors: int = 0) -> Row:
    ms = sorted(value / 1e6 for value in values_ns)
    if not ms:
        return Row(kind, 0, 0.0, 0.0, 0.0, 0.0, errors)
    return Row(
        kind,
        len(ms),
        percentile(ms, 0.5),
        percentile(ms, 0.95),
        percentile(ms, 0.99),
        ms[-1],
        errors,
    )


def render(rows: list[dict[str, Any]]) -> str:
    head = f"{'claim_next_task':18} {'calls':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8} {'errors':>6}"
    lines = [head, "-" * len(head)]
    lines += [
        f"{r['kind']:18} {r['calls']:>6} {r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f} "
        f"{r['p99_ms']:>8.2f} {r['max_ms']:>8.2f} {r['errors']:>6}"
        for r in rows
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
    env = environment()
    progress(f"starting the server (load average {env['load_average_at_start'][0]})")
    server = ServerProcess(database_url, server_args=["--agent-tokens", str(args.agents)])
    with server as info:
        target = Target(f"{info.base_url}/mcp", info.token, info.project, info.pid)
        progress(f"{args.rounds} rounds: {args.tasks} ready tasks, {args.agents} agents at once")
        cpu_before = server_cpu_seconds(info.pid)
        seen = anyio.run(measure, target, info.agents, args)
        cpu = server_cpu_seconds(info.pid) - cpu_before
    errors = sum(seen.errors.values())
    rows = [
        row("all", seen.took_ns + seen.none_ns, errors),
        row("took a task", seen.took_ns),
        row("found none", seen.none_ns),
    ]
    twice = sum(1 for n in seen.taken.values() if n > 1)
    expected = args.rounds * args.tasks
    return {
        "workload": "claims",
        "database": info.database,
        "environment": env,
        "settings": {
            "era": args.era,
            "agents": args.agents,
            "tasks_per_round": args.tasks,
            "rounds": args.rounds,
        },
        "server_cpu_seconds": round(cpu, 3),
        "rows": [asdict(r) for r in rows],
        "errors": dict(seen.errors),
        "target_met": {
            f"tasks taken twice: {twice} (target 0)": twice == 0,
            f"tasks taken: {len(seen.taken)} of {expected}": len(seen.taken) == expected,
            f"rounds with a task left untaken: {seen.short_rounds} (target 0)": (
                seen.short_rounds == 0
            ),
            f"errors: {errors} (target 0)": errors == 0,
        },
        "server_exit_code": server.exit_code,
    }


def main(argv: list[str] | None = None) -> None:
    run_workload("claims", parse_args(argv), run, render)
