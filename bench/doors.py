"""`python -m bench doors`: what one MCP call costs the server over Streamable HTTP and over stdio.

Two real servers, each on a fresh database of the same kind (two SQLite files, or two
throw-away PostgreSQL databases), each initialised as a first start does: `crewboard serve`
(HTTP, as an operator runs it, with its default logging) and `crewboard mcp --toolsets all`
(stdio, as an MCP client on the same machine starts it). Both are driven by the official MCP
SDK client (`mcp.Client`, legacy handshake), the same calls in the same order, in blocks that
alternate between the doors (HTTP first in one round, stdio first in the next), so drift and
the machine's other load hit both alike.

The figure is the server process's own CPU time (user + system from /proc) over each block,
per call: not wall time, which the client's HTTP stack dominates. /proc counts in 10 ms
ticks, so each tool gets several hundred calls per door. Reported per tool and door, with the
HTTP/stdio ratio against the target (1.15×), and the client-observed median for context.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from bench.measure import answer_of, percentile, server_cpu_seconds
from bench.peers.systems import children_of
from bench.process import REPO, first_start, free_port, run_workload, throwaway_postgres
from bench.runner import add_database_options, environment
from crewboard.services.projects.bootstrap import DEMO_PROJECT_KEY

DOORS = ("http", "stdio")
TOOLS = ("create_task", "update_task", "get_task", "list_tasks", "search")
TARGET_RATIO = 1.15
CALL_TIMEOUT = 60.0
START_TIMEOUT = 60.0
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench doors", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--calls", type=int, default=400, help="timed calls of each tool a door")
    parser.add_argument("--block", type=int, default=25, help="calls a block (one tool, one door)")
    parser.add_argument("--warmup", type=int, default=30, help="uncounted calls of each tool")
    parser.add_argument("--tasks", type=int, default=200, help="tasks made before timing")
    parser.add_argument(
        "--serve-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for the HTTP server only (e.g. CREWBOARD_ACCESS_LOG=off); repeatable",
    )
    parser.add_argument(
        "--tools",
        default=",".join(TOOLS),
        help=f"which of {', '.join(TOOLS)} to time, comma-separated (default: all)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        metavar="DIR",
        help="run both servers under cProfile (bench/profiled.py), writing DIR/http.prof and "
        "DIR/stdio.prof; the CPU figures then include the profiler's cost",
    )
    parser.add_argument("--target-ratio", type=float, default=TARGET_RATIO)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 60 calls, 5 warm-up")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--output", type=Path, default=None, help="JSON results file")
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.warmup, args.tasks, args.block = 60, 5, 40, 20
    if min(args.calls, args.block, args.tasks) < 1 or args.warmup < 0:
        parser.error("--calls, --block and --tasks must be at least 1, --warmup at least 0")
    args.tools = tuple(tool.strip() for tool in args.tools.split(",") if tool.strip())
    if not args.tools or set(args.tools) - set(TOOLS):
        parser.error(f"--tools takes {', '.join(TOOLS)}")
    for item in args.serve_env:
        if "=" not in item:
            parser.error("--serve-env takes NAME=VALUE")
    return args


def progress(message: str) -> None:
    sys.stderr.write(f"[bench doors] {message}\n")
    sys.stderr.flush()


def _clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without its CREWBOARD_* settings (the instances are the
    run's own), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREWBOARD_")}
    env["PYTHONPATH"] = os.pathsep.join((str(REPO / "src"), str(REPO)))
    return env | extra


@dataclass
class Door:
    """One server and the client driving it."""

    name: str
    pid: int
    client: Client
    refs: list[list[Any]] = field(default_factory=list)  # [task id, revision]
    made: int = 0


def crewboard_command(profile: Path | None, door: str) -> list[str]:
    """How to start `crewboard` (under bench/profiled.py with --profile)."""
    if profile is None:
        return [sys.executable, "-m", "crewboard"]
    return [sys.executable, "-m", "bench.profiled", str(profile.resolve() / f"{door}.prof")]


def _settings_env(data_dir: Path, database_url: str | None) -> dict[str, str]:
    env = {"CREWBOARD_DATA_DIR": str(data_dir)}
    if database_url:
        env["CREWBOARD_DATABASE_URL"] = database_url
    return env


@contextmanager
def serve_http(
    data_dir: Path, database_url: str | None, log: TextIO, extra: dict[str, str], start: list[str]
) -> Iterator[tuple[int, str]]:
    """`crewboard serve` on a free port until the block ends: (pid, base URL)."""
    port = free_port()
    env = _clean_env(**_settings_env(data_dir, database_url), **extra)
    command = [*start, "serve", "--port", str(port)]
    process = subprocess.Popen(
        command, cwd=data_dir.parent, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"crewboard serve exited with {process.returncode}")
            try:
                if httpx2.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("crewboard serve did not answer /healthz in time")
            time.sleep(0.1)
        yield process.pid, base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@asynccontextmanager
async def open_doors(
    folder: Path,
    urls: tuple[str | None, str | None],
    log: TextIO,
    extra: dict[str, str],
    profile: Path | None,
) -> AsyncIterator[list[Door]]:
    """Both servers, prepared, started and connected."""
    tokens = [first_start(folder / door, url) for door, url in zip(DOORS, urls, strict=True)]
    async with AsyncExitStack() as stack:
        pid, base = stack.enter_context(
            serve_http(folder / "http", urls[0], log, extra, crewboard_command(profile, "http"))
        )
        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {tokens[0]}", "X-MCP-Toolsets": "all"},
                timeout=CALL_TIMEOUT,
            )
        )
        transport = streamable_http_client(f"{base}/mcp", http_client=http)
        client = await stack.enter_async_context(
            Client(transport, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)
        )
        doors = [Door("http", pid, client)]
        stdio = crewboard_command(profile, "stdio")
        params = StdioServerParameters(
            command=stdio[0],
            args=[*stdio[1:], "mcp", "--toolsets", "all"],
            cwd=str(folder / "stdio"),
            env=_clean_env(**_settings_env(folder / "stdio", urls[1]), CREWBOARD_TOKEN=tokens[1]),
        )
        before = children_of(os.getpid())
        client = await stack.enter_async_context(
            Client(
                stdio_client(params, errlog=log), mode="legacy", read_timeout_seconds=CALL_TIMEOUT
            )
        )
        started = sorted(children_of(os.getpid()) - before)
        if len(started) != 1:
            raise RuntimeError(f"expected one stdio server process, found {started}")
        doors.append(Door("stdio", started[0], client))
        for door in doors:
            await door.client.list_tools()
        yield doors


async def _call(door: Door, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await door.client.call_tool(tool, arguments)
    body = answer_of(result)
    if result.is_error:
        raise RuntimeError(f"{door.name} {tool} failed: {body}")
    return body


async def one_call(door: Door, tool: str, n: int) -> None:
    """Call `tool` once on `door` (the n-th call of it), the same arguments on either door."""
    project = DEMO_PROJECT_KEY
    word = WORDS[n % len(WORDS)]
    if tool == "create_task":
        door.made += 1
        body = await _call(
            door,
            "create_task",
            {
                "projectId": project, "workspaceId": None, "idempotencyKey": uuid.uuid4().hex,
                "title": f"Doors task {door.made} {word}",
                "description": f"Made by the doors benchmark; the word is {word}.",
            },
        )  # fmt: skip
        door.refs.append([body["task"]["id"], body["task"]["revision"]])
    elif tool == "update_task":
        ref = door.refs[n % len(door.refs)]
        body = await _call(
            door,
            "update_task",
            {
                "projectId": project, "workspaceId": None, "idempotencyKey": uuid.uuid4().hex,
                "taskId": ref[0], "expectedRevision": ref[1],
                "patch": {"title": f"Doors task {n} {word} (edited)"},
            },
        )  # fmt: skip
        ref[1] = body["task"]["revision"]
    elif tool == "get_task":
        await _call(door, "get_task", {"taskId": door.refs[n % len(door.refs)][0]})
    elif tool == "list_tasks":
        await _call(door, "list_tasks", {"projectId": project, "limit": 50})
    else:
        await _call(door, "list_tasks", {"projectId": project, "q": word, "limit": 50})


@dataclass
class Tally:
    calls: int = 0
    cpu_seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)


async def block(door: Door, tool: str, start: int, calls: int, tally: Tally) -> None:
    cpu_before = server_cpu_seconds(door.pid)
    for n in range(start, start + calls):
        began = time.perf_counter()
        await one_call(door, tool, n)
        tally.latencies_ms.append((time.perf_counter() - began) * 1000)
    tally.cpu_seconds += server_cpu_seconds(door.pid) - cpu_before
    tally.calls += calls


async def drive(args: argparse.Namespace, doors: list[Door]) -> dict[tuple[str, str], Tally]:
    """Seed both boards, warm up, then the timed blocks, alternating which door goes first."""
    progress(f"making {args.tasks} tasks on each door")
    for n in range(args.tasks):
        for door in doors:
            await one_call(door, "create_task", n)
    for tool in args.tools:
        for door in doors:
            for n in range(args.warmup):
                await one_call(door, tool, n)
    tallies = {(tool, door.name): Tally() for tool in args.tools for door in doors}
    rounds = -(-args.calls // args.block)
    progress(f"{rounds} rounds of {args.block} calls of each tool on each door")
    for index in range(rounds):
        calls = min(args.block, args.calls - index * args.block)
        order = doors if index % 2 == 0 else doors[::-1]
        for tool in args.tools:
            for door in order:
                await block(door, tool, index * args.block, calls, tallies[(tool, door.name)])
    return tallies


@dataclass(frozen=True)
class Row:
    tool: str
    http_cpu_ms: float
    stdio_cpu_ms: float
    ratio: float
    http_median_ms: float
    stdio_median_ms: float
    calls: int


def rows_of(tallies: dict[tuple[str, str], Tally]) -> list[Row]:
    rows = []
    for tool in (*(t for t in TOOLS if any(name == t for name, _ in tallies)), "all"):
        picked = {
            door: [t for (name, d), t in tallies.items() if d == door and tool in (name, "all")]
            for door in DOORS
        }
        cpu = {
            d: sum(t.cpu_seconds for t in ts) * 1000 / sum(t.calls for t in ts)
            for d, ts in picked.items()
        }
        median = {
            d: percentile(sorted(x for t in ts for x in t.latencies_ms), 0.5)
            for d, ts in picked.items()
        }
        rows.append(
            Row(
                tool=tool,
                http_cpu_ms=round(cpu["http"], 3),
                stdio_cpu_ms=round(cpu["stdio"], 3),
                ratio=round(cpu["http"] / cpu["stdio"], 3) if cpu["stdio"] else float("nan"),
                http_median_ms=round(median["http"], 3),
                stdio_median_ms=round(median["stdio"], 3),
                calls=sum(t.calls for t in picked["http"]),
            )
        )  # fmt: skip
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| tool | calls a door | HTTP server CPU ms/call | stdio server CPU ms/call "
        "| HTTP/stdio | HTTP median ms | stdio median ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['tool']} | {row['calls']} | {row['http_cpu_ms']:.2f} | "
            f"{row['stdio_cpu_ms']:.2f} | {row['ratio']:.2f}× | {row['http_median_ms']:.2f} | "
            f"{row['stdio_median_ms']:.2f} |"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
    """Both doors on their own fresh databases (a second throw-away one on PostgreSQL)."""
    env = environment()
    started = datetime.now(UTC)
    extra = dict(item.split("=", 1) for item in args.serve_env)
    folder = Path(tempfile.mkdtemp(prefix="crewboard-doors-"))
    log_path = folder / "servers.log"
    try:
        with log_path.open("w", encoding="utf-8") as log, _second(args, database_url) as other:

            async def main() -> dict[tuple[str, str], Tally]:
                async with open_doors(
                    folder, (database_url, other), log, extra, args.profile
                ) as doors:
                    return await drive(args, doors)

            tallies = anyio.run(main)
    except BaseException:
        sys.stderr.write(log_path.read_text(encoding="utf-8", errors="replace")[-4000:])
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = [asdict(row) for row in rows_of(tallies)]
    return {
        "workload": "doors",
        "database": "postgresql" if database_url else "sqlite",
        "started": started.isoformat(timespec="seconds"),
        "environment": env,
        "settings": {
            "calls": args.calls,
            "block": args.block,
            "warmup": args.warmup,
            "tasks": args.tasks,
            "serve_env": sorted(extra),
        },
        "tools": list(args.tools),
        "rows": rows,
        "target_met": {
            f"{row['tool']}: HTTP server CPU a call within {args.target_ratio}× of stdio": bool(
                row["ratio"] <= args.target_ratio
            )
            for row in rows
        },
    }


@contextmanager
def _second(args: argparse.Namespace, database_url: str | None) -> Iterator[str | None]:
    if database_url is None:
        yield None
        return
    with throwaway_postgres(args.postgres_url) as url:
        yield url


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    missed: list[bool] = []

    def run_and_note(parsed: argparse.Namespace, url: str | None) -> dict[str, Any]:
        results = run(parsed, url)
        missed.extend(not met for met in results["target_met"].values())
        return results

    run_workload("doors", args, run_and_note, table)
    if args.check and any(missed):
        sys.exit(1)
