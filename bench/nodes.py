"""Node CPU per call, one node against three: `python -m bench nodes [--calls N] [--clients N]`.

Issue 42: three nodes on one PostgreSQL database spent about 45 % more CPU per call, summed
over the nodes, than one node alone. Each run starts a cluster (bench/cluster.py: `crewboard
serve` processes behind HAProxy) on a fresh PostgreSQL database, makes a project with a few
tasks, and has `--clients` MCP clients (the 2026-07-28 era: no session to keep on one node)
make `--calls` calls each through HAProxy, round robin over the nodes: a mix of writes and
reads (create_task, get_task, list_tasks, set_task_status). Node CPU per call is the user +
system CPU every node process used over the timed part (from /proc), divided by the calls.

Each cluster size runs with no live stream open, and with one stream open on node 1 (an SSE
reader following the project, which makes node 1 read the log for its stream). A third case
sends every call of three nodes to node 1 alone, past HAProxy: what the other two nodes cost
while they serve nothing, apart from what spreading the calls over three processes costs. Every client
first makes `--warm-up` untimed calls, so that each node has run each tool before the timed
part. One node and three run in turn, `--rounds` times; the medians are compared. Target:
three nodes within 1.15x of one node's CPU per call.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
import uuid
from dataclasses import dataclass
from typing import Any

import anyio
from tests.support.factories import make_project, make_task, make_user
from tests.support.sse import Reader

from bench.cluster import Cluster
from bench.measure import Target, answer_of, connect, server_cpu_seconds
from bench.process import throwaway_postgres
from crewboard.services.identity import stream_tokens, tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database

ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"  # may CREATE DATABASE
ERA = "2026-07-28"
PROJECT = "LOAD"
STATUSES = ("backlog", "ready_for_ai", "review", "done")
TARGET_RATIO = 1.15


@dataclass(frozen=True)
class Figures:
    nodes: int
    direct: bool  # every call to node 1, not through HAProxy
    stream: bool
    calls: int
    errors: int
    seconds: float
    cpu_seconds: float

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_seconds / self.calls


class World:
    """The project, its tasks and the token the clients call with."""

    def __init__(self, url: str, tasks: int) -> None:
        self.db = Database(url)
        owner = make_user(self.db, "bench@example.com")
        make_project(self.db, owner, PROJECT)
        self.me = person_actor(owner)
        self.task_ids = [make_task(self.db, owner, PROJECT, f"Task {n}") for n in range(tasks)]
        self.secret = tokens.issue_token(
            self.db, self.me, kind="personal", scopes=["read", "tasks.manage"]
        ).secret

    def stream_secret(self) -> str:
        made = stream_tokens.create_stream_token(self.db, self.me, projects=[PROJECT])
        return str(made["secret"])


def _arguments(tool: str, number: int, n: int, task: str) -> dict[str, Any]:
    keyed = {"projectId": PROJECT, "workspaceId": None, "idempotencyKey": uuid.uuid4().hex}
    if tool == "create_task":
        return {**keyed, "title": f"Made {number}.{n}"}
    if tool == "set_task_status":
        return {**keyed, "changes": [{"taskId": task, "status": STATUSES[n % len(STATUSES)]}]}
    if tool == "get_task":
        return {"taskId": task}
    return {"projectId": PROJECT}


async def _client(target: Target, world: World, number: int, calls: int) -> int:
    """One client's calls (create, get, list, status, in turn); how many failed."""
    errors = 0
    steps = itertools.cycle(("create_task", "get_task", "list_tasks", "set_task_status"))
    async with connect(target, ERA) as client:
        for n, tool in zip(range(calls), steps, strict=False):
            task = world.task_ids[(number * 7 + n) % len(world.task_ids)]
            result = await client.call_tool(tool, _arguments(tool, number, n, task))
            body = answer_of(result)
            failed = result.is_error or any(not o["ok"] for o in body.get("outcomes", []))
            errors += int(failed)
    return errors


async def _workload(target: Target, world: World, clients: int, calls: int) -> int:
    errors = [0] * clients

    async def one(number: int) -> None:
        errors[number] = await _client(target, world, number, calls)

    async with anyio.create_task_group() as group:
        for number in range(clients):
            group.start_soon(one, number)
    return sum(errors)


def measure(
    admin_url: str,
    nodes: int,
    clients: int,
    calls: int,
    *,
    stream: bool,
    warm_up: int,
    direct: bool = False,
) -> Figures:
    with throwaway_postgres(admin_url) as url, Cluster(url, nodes=nodes) as cluster:
        world = World(url, tasks=20)
        door = cluster.running[0].url if direct else cluster.url
        target = Target(f"{door}/mcp", world.secret, PROJECT, pid=0)
        reader = None
        if stream:
            first = cluster.running[0]
            reader = Reader(f"{first.url}/api/v1/projects/{PROJECT}/events", world.stream_secret())
            assert reader.ready.wait(10)
        # Warm every node (imports, pools, caches) before the timed part.
        anyio.run(_workload, target, world, clients, warm_up)
        time.sleep(1.5)  # the warm-up's webhooks and stream passes settle
        pids = [node.process.pid for node in cluster.running]
        cpu = sum(server_cpu_seconds(pid) for pid in pids)
        started = time.perf_counter()
        errors = anyio.run(_workload, target, world, clients, calls)
        seconds = time.perf_counter() - started
        cpu = sum(server_cpu_seconds(pid) for pid in pids) - cpu
        if reader is not None:
            reader.until = 0
            assert not reader.dropped, reader.dropped
        world.db.dispose()
    return Figures(nodes, direct, stream, clients * calls, errors, seconds, cpu)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench nodes", description=__doc__)
    parser.add_argument("--admin-url", default=ADMIN_URL)
    parser.add_argument("--clients", type=int, default=4, help="MCP clients calling at once")
    parser.add_argument("--calls", type=int, default=200, help="calls each client makes")
    parser.add_argument("--warm-up", type=int, default=40, help="untimed calls per client first")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each case (the median)")
    parser.add_argument("--no-stream", action="store_true", help="skip the one-stream variant")
    options = parser.parse_args(argv)
    variants = [False] if options.no_stream else [False, True]
    cases = [(nodes, False, stream) for stream in variants for nodes in (1, 3)]
    cases.append((3, True, False))
    print(f"{options.clients} MCP clients x {options.calls} calls, {ERA} era")
    print("nodes  calls to  stream  calls  errors  wall s  node CPU s  CPU ms/call")
    rows: dict[tuple[int, bool, bool], list[float]] = {}
    # The cases in turn, round after round, so that a spell of load from elsewhere on the
    # machine falls on all of them.
    for _ in range(options.rounds):
        for nodes, direct, stream in cases:
            got = measure(options.admin_url, nodes, options.clients, options.calls,
                          stream=stream, warm_up=options.warm_up, direct=direct)  # fmt: skip
            rows.setdefault((nodes, direct, stream), []).append(got.cpu_ms_per_call)
            print(f"{got.nodes:5}  {'node 1' if direct else 'HAProxy':>8}  "
                  f"{'one' if stream else 'none':>6}  {got.calls:5}  {got.errors:6}  "
                  f"{got.seconds:6.1f}  {got.cpu_seconds:10.2f}  {got.cpu_ms_per_call:11.2f}",
                  flush=True)  # fmt: skip
    medians = {case: statistics.median(values) for case, values in rows.items()}
    for stream in variants:
        one, three = medians[1, False, stream], medians[3, False, stream]
        met = "met" if three / one <= TARGET_RATIO else "NOT met"
        print(f"{'one stream' if stream else 'no stream'}: median {one:.2f} ms/call on 1 node, "
              f"{three:.2f} on 3: {three / one:.2f}x (target <= {TARGET_RATIO}x: {met})")  # fmt: skip
    alone = medians[3, True, False]
    print(f"3 nodes, every call to node 1: {alone:.2f} ms/call, "
          f"{alone / medians[1, False, False]:.2f}x one node's")  # fmt: skip


if __name__ == "__main__":
    main()
