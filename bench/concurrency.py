"""`python -m bench concurrency`: many MCP clients at once on one project, mixed board calls.

A real server (bench/server.py) on SQLite or PostgreSQL. One client first creates a few tasks
(uncounted) so there is something to edit. Then 20 clients (each its own `mcp.Client` on the
Streamable HTTP transport, its own connection pool) start together and make 50 calls each,
drawn from a seeded mix over the one project:

- `create_task` with a fresh idempotency key;
- `get_task` of a task of the board, then `update_task` of it with the revision that read
  answered (`expectedRevision`): two calls, and the update loses to any write in between;
- `list_tasks` of the project;
- `get_task` of a task (with its context pack, the default);
- `set_task_status` of one task to another status (no expected version: a card moved).

Every call is timed on the client. A `REVISION_CONFLICT` answer to `update_task` is the
optimistic lock doing its job and is counted apart; anything else that is not a success (an
error result, a failed outcome of `set_task_status` — a conflict included, since that call
sent no revision to check —, a JSON-RPC or transport error) is an error, listed by code and
message. Target: 0 errors. The report also checks that every task whose creation
was answered is on the board afterwards.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench.measure import ERAS, Target, answer_of, connect, percentile, server_cpu_seconds
from bench.process import ServerProcess, run_workload
from bench.runner import add_database_options, environment

KINDS = ("create_task", "get_task", "update_task", "list_tasks", "set_task_status")
CONFLICT = "REVISION_CONFLICT"
STATUSES = ("backlog", "ready_for_ai", "blocked", "review", "done")  # no assignee or person needed
# The mix: each step and its weight. "update" is two calls (the fresh get, then the update).
STEPS = {"create": 2, "update": 2, "list": 1, "get": 2, "status": 2}


@dataclass
class Board:
    """What the clients share: the project and the ids of its tasks (seeded and created)."""

    project: str
    task_ids: list[str] = field(default_factory=list)


@dataclass
class Calls:
    """Every call made in the timed part: its latency and what came back, per kind."""

    latencies_ns: dict[str, list[int]] = field(default_factory=lambda: {k: [] for k in KINDS})
    conflicts: Counter[str] = field(default_factory=Counter)
    errors: dict[str, Counter[str]] = field(default_factory=lambda: {k: Counter() for k in KINDS})
    created: int = 0


@dataclass(frozen=True)
class KindRow:
    """One call kind (or "all"): client-observed latency in ms, conflicts and errors."""

    kind: str
    calls: int
    calls_per_second: float  # this kind's calls over the wall time of the whole run
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    conflicts: int
    errors: dict[str, int]  # "CODE: message" -> how many times


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench concurrency", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--era", default="legacy", choices=ERAS)
    parser.add_argument("--clients", type=int, default=20, help="clients calling at once")
    parser.add_argument("--calls", type=int, default=50, help="calls each client makes")
    parser.add_argument("--tasks", type=int, default=20, help="tasks created before timing")
    parser.add_argument("--seed", default="crewboard", help="seed of the calls' random mix")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 5 clients x 10 calls")
    parser.add_argument("--output", type=Path, default=None, help="JSON results file")
    args = parser.parse_args(argv)
    if args.quick:
        args.clients, args.calls, args.tasks = 5, 10, 5
    if min(args.clients, args.calls, args.tasks) < 1:
        parser.error("--clients, --calls and --tasks must be at least 1")
    return args


def progress(message: str) -> None:
    sys.stderr.write(f"[bench concurrency] {message}\n")
    sys.stderr.flush()


# --- one client's calls ----------------------------------------------------------------------


@dataclass
class Caller:
    """One client: it times each call and files what came back."""

    client: Client
    name: str
    board: Board
    calls: Calls
    rng: random.Random
    made: int = 0

    async def call(
        self, kind: str, arguments: dict[str, Any], *, checks_revision: bool = False
    ) -> dict[str, Any] | None:
        """The structured answer of a success; None (filed) for a conflict or an error.

        A REVISION_CONFLICT is a conflict only for a call that sent a revision to check
        (`checks_revision`); refusing a call that sent none is an error.
        """
        started = time.perf_counter_ns()
        try:
            result = await self.client.call_tool(kind, arguments)
        except Exception as error:  # a failed call is a finding, not the end of the run
            self.calls.latencies_ns[kind].append(time.perf_counter_ns() - started)
            self.calls.errors[kind][f"{type(error).__name__}: {str(error)[:200]}"] += 1
            return None
        self.calls.latencies_ns[kind].append(time.perf_counter_ns() - started)
        body = answer_of(result)
        if result.is_error:
            self._refused(kind, body, checks_revision)
            return None
        for outcome in body.get("outcomes", []):  # set_task_status: each task by itself
            if not outcome["ok"]:
                self._refused(kind, outcome["error"], checks_revision)
                return None
        return body

    def _refused(self, kind: str, error: dict[str, Any], checks_revision: bool) -> None:
        code = error.get("code", "?")
        if code == CONFLICT and checks_revision:
            self.calls.conflicts[kind] += 1
            return
        unasked = " (the call sent no revision to check)" if code == CONFLICT else ""
        self.calls.errors[kind][f"{code}{unasked}: {error.get('message', '')}"] += 1

    def _task(self) -> str:
        return self.rng.choice(self.board.task_ids)

    def _keyed(self) -> dict[str, Any]:
        return {
            "projectId": self.board.project,
            "workspaceId": None,
            "idempotencyKey": uuid.uuid4().hex,
        }

    async def create(self) -> None:
        self.made += 1
        body = await self.call(
            "create_task",
            {
                **self._keyed(),
                "title": f"Concurrent task {self.name}.{self.made}",
                "description": "Made by the concurrency benchmark.",
            },
        )
        if body is not None:
            self.board.task_ids.append(body["task"]["id"])
            self.calls.created += 1

    async def update(self) -> None:
        task_id = self._task()
        read = await self.call("get_task", {"taskId": task_id})
        if read is None:
            return
        await self.call(
            "update_task",
            {
                **self._keyed(),
                "taskId": task_id,
                "expectedRevision": read["task"]["revision"],
                "patch": {"description": f"Edited by {self.name} at {time.time_ns()}."},
            },
            checks_revision=True,
        )

    async def list_tasks(self) -> None:
        await self.call("list_tasks", {"projectId": self.board.project})

    async def get(self) -> None:
        await self.call("get_task", {"taskId": self._task()})

    async def status(self) -> None:
        change = {"taskId": self._task(), "status": self.rng.choice(STATUSES)}
        await self.call("set_task_status", {**self._keyed(), "changes": [change]})

    def plan(self, calls: int) -> list[Callable[[], Awaitable[None]]]:
        """`calls` calls' worth of steps from the weighted mix (an update is two calls)."""
        steps: list[Callable[[], Awaitable[None]]] = []
        left = calls
        names, weights = list(STEPS), list(STEPS.values())
        while left > 0:
            name = self.rng.choices(names, weights)[0]
            if name == "update" and left < 2:
                continue
            steps.append(
                {
                    "create": self.create,
                    "update": self.update,
                    "list": self.list_tasks,
                    "get": self.get,
                    "status": self.status,
                }[name]
            )
            left -= 2 if name == "update" else 1
        return steps


# --- the run ---------------------------------------------------------------------------------


async def seed_tasks(target: Target, era: str, board: Board, count: int) -> None:
    """`count` tasks to edit, made one after another before the timed part."""
    async with connect(target, era) as client:
        seeder = Caller(client, "seed", board, Calls(), random.Random(0))  # noqa: S311
        for _ in range(count):
            await seeder.create()
        if seeder.calls.created != count:
            failed = dict(seeder.calls.errors["create_task"])
            raise RuntimeError(f"creating the tasks to start with failed: {failed}")


@dataclass(frozen=True)
class Measured:
    calls: Calls
    wall_seconds: float
    server_cpu_seconds: float
    on_board: int | None  # list_tasks' total after the run (None: that call failed)


async def measure(target: Target, args: argparse.Namespace) -> Measured:
    """All clients at once: what they saw, how long it took, and the board afterwards."""
    board = Board(target.project)
    await seed_tasks(target, args.era, board, args.tasks)
    calls = Calls()
    async with AsyncExitStack() as stack:
        callers = []
        for index in range(args.clients):
            client = await stack.enter_async_context(connect(target, args.era))
            await client.list_tools()  # as a real client does first; also warms the connection
            rng = random.Random(f"{args.seed}-{index}")  # noqa: S311 - a workload, not a secret
            callers.append(Caller(client, f"c{index:02d}", board, calls, rng))
        plans = [caller.plan(args.calls) for caller in callers]
        start = anyio.Event()

        async def work(steps: list[Callable[[], Awaitable[None]]]) -> None:
            await start.wait()
            for step in steps:
                await step()

        cpu_before = server_cpu_seconds(target.pid)
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for steps in plans:
                group.start_soon(work, steps)
            start.set()
        wall = time.perf_counter() - started
        cpu = server_cpu_seconds(target.pid) - cpu_before
        checker = Caller(callers[0].client, "check", board, Calls(), random.Random(0))  # noqa: S311
        listed = await checker.call("list_tasks", {"projectId": board.project, "limit": 1})
    return Measured(calls, wall, cpu, None if listed is None else int(listed["total"]))


def kind_row(
    kind: str, latencies_ns: list[int], wall: float, conflicts: int, errors: Mapping[str, int]
) -> KindRow:
    ms = sorted(value / 1e6 for value in latencies_ns)
    empty = not ms
    return KindRow(
        kind=kind,
        calls=len(ms),
        calls_per_second=len(ms) / wall,
        p50_ms=0.0 if empty else percentile(ms, 0.5),
        p95_ms=0.0 if empty else percentile(ms, 0.95),
        p99_ms=0.0 if empty else percentile(ms, 0.99),
        max_ms=0.0 if empty else ms[-1],
        conflicts=conflicts,
        errors=dict(errors),
    )


def rows_of(calls: Calls, wall: float) -> list[KindRow]:
    rows = [
        kind_row(k, calls.latencies_ns[k], wall, calls.conflicts[k], calls.errors[k]) for k in KINDS
    ]
    every: Counter[str] = Counter()
    for kind in KINDS:
        every.update({f"{kind} {what}": n for what, n in calls.errors[kind].items()})
    all_ns = [value for kind in KINDS for value in calls.latencies_ns[kind]]
    return [*rows, kind_row("all", all_ns, wall, sum(calls.conflicts.values()), every)]


def render(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'call':16} {'calls':>6} {'calls/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
        f"{'max ms':>8} {'conflicts':>9} {'errors':>6}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['kind']:16} {r['calls']:>6} {r['calls_per_second']:>8.1f} {r['p50_ms']:>8.2f} "
            f"{r['p95_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['max_ms']:>8.2f} {r['conflicts']:>9} "
            f"{sum(r['errors'].values()):>6}"
        )
    listed = rows[-1]["errors"]
    lines.append("errors other than REVISION_CONFLICT:" + ("" if listed else " none"))
    lines += [f"  {n:>5} x {what}" for what, n in sorted(listed.items(), key=lambda i: -i[1])]
    return "\n".join(lines)


def run(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
    env = environment()
    progress(f"starting the server (load average {env['load_average_at_start'][0]})")
    server = ServerProcess(database_url)
    with server as info:
        target = Target(
            mcp_url=f"{info.base_url}/mcp", token=info.token, project=info.project, pid=info.pid
        )
        progress(
            f"{args.era}: {args.tasks} tasks to start with, then {args.clients} clients x "
            f"{args.calls} mixed calls at once"
        )
        measured = anyio.run(measure, target, args)
    calls = measured.calls
    rows = rows_of(calls, measured.wall_seconds)
    every = rows[-1]
    answered = args.tasks + calls.created
    return {
        "workload": "concurrency",
        "database": info.database,
        "environment": env,
        "settings": {
            "era": args.era,
            "clients": args.clients,
            "calls_per_client": args.calls,
            "tasks_at_start": args.tasks,
            "seed": args.seed,
            "mix": STEPS,
        },
        "wall_seconds": round(measured.wall_seconds, 3),
        "server_cpu_ms_per_call": round(measured.server_cpu_seconds * 1000 / every.calls, 3),
        "tasks_created": calls.created,
        "tasks_on_board": measured.on_board,
        "rows": [asdict(row) for row in rows],
        "target_met": {
            f"errors other than {CONFLICT}: {sum(every.errors.values())} (target 0)": (
                not every.errors
            ),
            f"answered creations on the board: {measured.on_board} of {answered}": (
                measured.on_board == answered
            ),
        },
        "server_exit_code": server.exit_code,
    }


def main(argv: list[str] | None = None) -> None:
    run_workload("concurrency", parse_args(argv), run, render)
