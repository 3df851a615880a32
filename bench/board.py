"""The `board` workload: board calls on a large and a small project, against the no-op.

One MCP client calls, one call at a time, in blocks that rotate over every (call, project)
pair, so drift and other load on the machine hit all of them alike. Each pair is timed on
the client (latency of `client.call_tool`) and costed on the server (its CPU time from /proc
during that pair's blocks, divided by the calls).

The calls:
- `bench_noop`: the MCP path alone (HTTP, token check, SDK, rendering), the baseline;
- `list_tasks` with a status filter, a tag filter, and `q` of two words (bench/seed.py says
  how many tasks each selects);
- `get_task` of a random task by key, with its context pack (the default);
- `update_task` of one of 200 tasks of the project: a new description and a status move
  (`ready_for_ai` and `backlog` in turn), with the revision the client last saw.
"""

from __future__ import annotations

import math
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp import Client

from bench.measure import Summary, Tally, Target, answer_of, connect, server_cpu_seconds
from bench.noop import NOOP_NAME
from bench.seed import QUERY, STATUS_FILTER, TAG_FILTER

CALLS = (
    "bench_noop",
    "list_tasks status",
    "list_tasks tag",
    "list_tasks q",
    "get_task",
    "update_task",
    "create_task",
)
UPDATE_TARGETS = 200
UPDATE_STATUSES = ("ready_for_ai", "backlog")
FILTERS = {"status": STATUS_FILTER, "tag": TAG_FILTER, "q": QUERY}
# The targets: a call on the largest project within GROWTH × its median on the smallest;
# list_tasks with q under Q_MEDIAN_MS on both databases; the serving peak under PEAK_MB.
GROWTH = 3.0
Q_MEDIAN_MS = 20.0
PEAK_MB = 300.0


@dataclass(frozen=True)
class BoardProject:
    key: str
    id: str
    tasks: int


@dataclass
class ProjectState:
    """What the client keeps per project: a random generator and the revisions it wrote."""

    project: BoardProject
    rng: random.Random
    targets: list[int]
    revisions: dict[int, int] = field(default_factory=dict)
    updates: int = 0
    creates: int = 0


@dataclass(frozen=True)
class BoardRow:
    call: str
    tool: str
    project: str
    tasks: int
    matched: int | None  # the `total` a list call answers: how many tasks the filter selects
    summary: Summary


def _states(projects: list[BoardProject]) -> list[ProjectState]:
    states = []
    for project in projects:
        rng = random.Random(project.key)  # noqa: S311 - which task to read is not a secret
        count = min(UPDATE_TARGETS, project.tasks)
        targets = sorted(rng.sample(range(1, project.tasks + 1), count))
        states.append(ProjectState(project, rng, targets))
    return states


def _list(**filters: Any) -> Callable[[ProjectState], tuple[str, dict[str, Any]]]:
    return lambda state: ("list_tasks", {"projectId": state.project.key, **filters})


def _get(state: ProjectState) -> tuple[str, dict[str, Any]]:
    number = state.rng.randint(1, state.project.tasks)
    return "get_task", {"taskId": f"{state.project.key}-{number}"}


def _update(state: ProjectState) -> tuple[str, dict[str, Any]]:
    number = state.targets[state.updates % len(state.targets)]
    status = UPDATE_STATUSES[(state.updates // len(state.targets)) % len(UPDATE_STATUSES)]
    state.updates += 1
    return "update_task", {
        "projectId": state.project.key,
        "workspaceId": None,
        "idempotencyKey": uuid.uuid4().hex,
        "taskId": f"{state.project.key}-{number}",
        "expectedRevision": state.revisions.get(number, 1),
        "patch": {"status": status, "description": f"Edited by the benchmark ({state.updates})."},
    }


def _create(state: ProjectState) -> tuple[str, dict[str, Any]]:
    state.creates += 1
    return "create_task", {
        "projectId": state.project.key,
        "workspaceId": None,
        "idempotencyKey": uuid.uuid4().hex,
        "title": f"Benchmark task {state.creates}: export the invoice report",
        "description": "Made by the board benchmark, to time a create on a large board.",
    }


ARGUMENTS: dict[str, Callable[[ProjectState], tuple[str, dict[str, Any]]]] = {
    "bench_noop": lambda _state: (NOOP_NAME, {}),
    "list_tasks status": _list(status=STATUS_FILTER),
    "list_tasks tag": _list(tag=TAG_FILTER),
    "list_tasks q": _list(q=QUERY),
    "get_task": _get,
    "update_task": _update,
    "create_task": _create,
}


async def _call(client: Client, call: str, state: ProjectState) -> tuple[int, dict[str, Any]]:
    """One call; its latency in ns and its answer. A failed call ends the run."""
    tool, arguments = ARGUMENTS[call](state)
    started = time.perf_counter_ns()
    result = await client.call_tool(tool, arguments)
    elapsed = time.perf_counter_ns() - started
    if result.is_error:
        raise RuntimeError(f"{call} on {state.project.key} failed: {answer_of(result)}")
    body = answer_of(result)
    if tool == "update_task":
        task = body["task"]
        state.revisions[task["number"]] = task["revision"]
    return elapsed, body


async def run_board(
    target: Target,
    era: str,
    projects: list[BoardProject],
    *,
    calls: int,
    block_calls: int,
    warmup: int,
) -> tuple[str, list[BoardRow]]:
    """`calls` of each call on each project; returns the negotiated version and the rows."""
    states = _states(projects)
    pairs = [(call, state) for state in states for call in CALLS]
    tallies = {(call, state.project.key): Tally() for call, state in pairs}
    matched: dict[tuple[str, str], int | None] = {}
    async with connect(target, era) as client:
        await client.list_tools()
        for _ in range(warmup):
            for call, state in pairs:
                _, body = await _call(client, call, state)
                matched[(call, state.project.key)] = body.get("total")
        rounds = max(1, math.ceil(calls / block_calls))
        for index in range(rounds):
            order = pairs if index % 2 == 0 else pairs[::-1]
            for call, state in order:
                tally = tallies[(call, state.project.key)]
                await _block(client, target.pid, call, state, calls=block_calls, tally=tally)
        version = client.protocol_version
    rows = [
        BoardRow(
            call=call,
            tool=call.split()[0],
            project=state.project.key,
            tasks=state.project.tasks,
            matched=matched.get((call, state.project.key)),
            summary=tallies[(call, state.project.key)].summary(),
        )
        for call, state in pairs
    ]
    return version, rows


async def _block(
    client: Client, pid: int, call: str, state: ProjectState, *, calls: int, tally: Tally
) -> None:
    """`calls` calls one after another; their latencies and the CPU both sides spent."""
    server_before, client_before = server_cpu_seconds(pid), time.process_time()
    started = time.perf_counter()
    for _ in range(calls):
        elapsed, _ = await _call(client, call, state)
        tally.latencies_ns.append(elapsed)
    tally.wall_seconds += time.perf_counter() - started
    tally.server_cpu_seconds += server_cpu_seconds(pid) - server_before
    tally.client_cpu_seconds += time.process_time() - client_before


@dataclass(frozen=True)
class Goal:
    """One target of the board workload and whether this run met it."""

    name: str
    value: float | None
    limit: float
    unit: str
    met: bool


def targets(rows: list[BoardRow], *, era: str, database: str) -> list[Goal]:
    """The board's targets for the calls, checked against one era's rows."""
    largest = max(row.tasks for row in rows)
    smallest = min(row.tasks for row in rows)
    median = {(row.call, row.tasks): row.summary.median_ms for row in rows}
    goals = [
        Goal(
            name=f"{era} {call}: median at {largest:,} tasks within {GROWTH:g}× of {smallest:,}",
            value=median[(call, largest)] / median[(call, smallest)],
            limit=GROWTH,
            unit="×",
            met=median[(call, largest)] <= GROWTH * median[(call, smallest)],
        )
        for call in CALLS
    ]
    del database  # the text search target holds on both databases (issue 13)
    goals += [
        Goal(
            name=f"{era} list_tasks q on {size:,} tasks: median under {Q_MEDIAN_MS:g} ms",
            value=median[("list_tasks q", size)],
            limit=Q_MEDIAN_MS,
            unit="ms",
            met=median[("list_tasks q", size)] < Q_MEDIAN_MS,
        )
        for size in sorted({row.tasks for row in rows}, reverse=True)
    ]
    return goals


def memory_goal(peak_rss_kib: int | None) -> Goal:
    """The serving peak (VmHWM after the start-up peak was reset) against PEAK_MB."""
    peak_mb = None if peak_rss_kib is None else peak_rss_kib * 1024 / 1e6
    return Goal(
        name=f"server peak memory while serving under {PEAK_MB:g} MB",
        value=peak_mb,
        limit=PEAK_MB,
        unit="MB",
        met=peak_mb is not None and peak_mb < PEAK_MB,
    )
