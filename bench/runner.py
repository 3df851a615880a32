"""`python -m bench [mcp|board]`: start a real server, drive it with the MCP SDK client, report.

The `mcp` workload (the default), per protocol era ("legacy" and "2026-07-28"):
  1. the size of `tools/list` for the whole catalogue and for each toolset;
  2. `get_project_state` against the no-op tool, sequentially from one client and from
     several clients at once: calls per second, median and p95 latency, and their ratio.
The `board` workload (bench/board.py): board calls on a project of 100,000 tasks and one of
1,000, against the no-op, with the targets for how they scale.
Then the server's peak resident memory. A table goes to stdout, JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio

from bench import board, measure
from bench.measure import ERAS, Comparison, Listing, Target
from bench.noop import NOOP_NAME, production_tool_names
from bench.process import (
    REPO,
    ServerInfo,
    ServerProcess,
    hide_password,
    proc_status_kib,
    reset_peak_rss,
    throwaway_postgres,
)
from bench.report import render
from crewboard.domain.identity.access import Toolset

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
TARGET_RATIO = 1.5
WORKLOADS = ("mcp", "board")
# Defaults that differ per workload: (mcp, board). The board's calls are per call and project.
DEFAULTS = {
    "eras": (",".join(ERAS), "legacy"),
    "calls": (2000, 300),
    "warmup": (100, 20),
    "sequential_block": (20, 10),
}
QUICK = {"mcp": {"calls": 200, "warmup": 20}, "board": {"calls": 40, "warmup": 3}}
BOARD_START_TIMEOUT = 900.0  # seeding 100,000 tasks on a slow disk


def add_database_options(parser: argparse.ArgumentParser) -> None:
    """--database and --postgres-url, the same for every workload."""
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("CREWBOARD_BENCH_POSTGRES_URL")
        or os.environ.get("CREWBOARD_TEST_DATABASE_URL")
        or DEFAULT_POSTGRES,
        help="a PostgreSQL server where this user may CREATE DATABASE; a throw-away database "
        "is made there and dropped after (default: $CREWBOARD_BENCH_POSTGRES_URL, "
        f"$CREWBOARD_TEST_DATABASE_URL, else {DEFAULT_POSTGRES})",
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description="Crewboard MCP benchmark (see bench/README.md)."
    )
    parser.add_argument(
        "workload",
        nargs="?",
        choices=WORKLOADS,
        default=None,
        help="mcp (default): tools/list sizes and get_project_state against the no-op; "
        "board: board calls on a 100,000-task and a 1,000-task project",
    )
    parser.add_argument("--workload", dest="workload_option", choices=WORKLOADS, default=None)
    parser.add_argument(
        "--board-sizes",
        default="100000,1000",
        help="board workload: task counts of the seeded projects, largest first (default "
        "100000,1000); the targets compare the first with the last",
    )
    parser.add_argument(
        "--analyze",
        action="store_true",
        help="board workload on SQLite: run ANALYZE after seeding, to see the plans with "
        "statistics (Crewboard never runs it; PostgreSQL is always analysed)",
    )
    add_database_options(parser)
    parser.add_argument(
        "--eras",
        default=None,
        help=f"comma-separated client modes (default: {','.join(ERAS)}; board: legacy)",
    )
    parser.add_argument(
        "--calls",
        type=int,
        default=None,
        help="sequential calls of each tool per era (default 2000; board: of each call on "
        "each project, default 300)",
    )
    parser.add_argument(
        "--concurrent-calls", type=int, default=2000, help="concurrent calls of each tool per era"
    )
    parser.add_argument(
        "--clients", type=int, default=8, help="clients at once in the concurrent run (0: skip)"
    )
    parser.add_argument(
        "--sequential-block",
        type=int,
        default=None,
        help="calls per block in the sequential run (blocks of the two tools alternate; "
        "default 20, board 10)",
    )
    parser.add_argument(
        "--concurrent-block",
        type=int,
        default=400,
        help="calls per block in the concurrent run, spread over the clients",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=None,
        help="warm-up calls of each tool per era, not counted (default 100; board 20)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 200 calls of each tool per workload, 20 warm-up (board: 40 and 3; "
        "figures are noisy)",
    )
    parser.add_argument("--target-ratio", type=float, default=TARGET_RATIO)
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a target is missed (mcp: a median ratio over --target-ratio)",
    )
    parser.add_argument("--output", type=Path, default=None, help="JSON results file")
    parser.add_argument(
        "--keep-data", action="store_true", help="keep the server's temp folder and log"
    )
    args = parser.parse_args(argv)
    if args.workload and args.workload_option and args.workload != args.workload_option:
        parser.error("name the workload once")
    args.workload = args.workload or args.workload_option or "mcp"
    _apply_defaults(args)
    if args.quick:
        args.concurrent_calls, args.concurrent_block = 200, 200
    try:
        args.board_sizes = [int(size) for size in args.board_sizes.split(",")]
    except ValueError:
        parser.error("--board-sizes takes task counts, e.g. 100000,1000")
    if len(args.board_sizes) < 2 or min(args.board_sizes) < 1:
        parser.error("--board-sizes needs at least two counts of 1 or more")
    eras = [era.strip() for era in args.eras.split(",") if era.strip()]
    unknown = [era for era in eras if era not in ERAS]
    if unknown or not eras:
        parser.error(f"--eras takes {', '.join(ERAS)}")
    args.eras = eras
    for name in ("calls", "concurrent_calls", "sequential_block", "concurrent_block"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.clients < 0 or args.warmup < 0:
        parser.error("--clients and --warmup cannot be negative")
    return args


def _apply_defaults(args: argparse.Namespace) -> None:
    """Fill the options left out with the workload's defaults (and --quick's)."""
    which = WORKLOADS.index(args.workload)
    for name, values in DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, values[which])
    if args.quick:
        for name, value in QUICK[args.workload].items():
            setattr(args, name, value)


@dataclass(frozen=True)
class EraResult:
    era: str
    protocol_version: str
    listings: list[Listing]  # the production catalogue (bench_noop hidden), "all" first
    listing_as_served: Listing  # everything the bench server serves, bench_noop included
    comparisons: list[Comparison]


def progress(message: str) -> None:
    sys.stderr.write(f"[bench] {message}\n")
    sys.stderr.flush()


async def run_era(target: Target, era: str, args: argparse.Namespace) -> EraResult:
    real_tools = ",".join(production_tool_names())
    progress(f"{era}: tools/list for the catalogue and each toolset")
    listings = [
        await measure.measure_listing(
            target, era, label="all", headers={"X-MCP-Toolsets": "all", "X-MCP-Tools": real_tools}
        ),
        # What a token that names no toolset is shown: the agent's loop (board and review).
        await measure.measure_listing(
            target, era, label="default", headers={"X-MCP-Tools": real_tools}
        ),
    ]
    for toolset in Toolset:
        listings.append(
            await measure.measure_listing(
                target,
                era,
                label=toolset.value,
                headers={"X-MCP-Toolsets": toolset.value, "X-MCP-Tools": real_tools},
            )
        )
    as_served = await measure.measure_listing(target, era, label="all (as served)", headers={})
    progress(f"{era}: warm-up, {args.warmup} calls of each tool")
    version = await measure.warm_up(target, era, args.warmup)
    progress(
        f"{era}: one client, {args.calls} calls of each tool in alternating blocks of "
        f"{args.sequential_block}"
    )
    comparisons = [
        await measure.compare(
            target,
            era,
            workload="sequential",
            calls=args.calls,
            clients=1,
            block_calls=args.sequential_block,
        )
    ]
    if args.clients:
        progress(
            f"{era}: {args.clients} clients at once, {args.concurrent_calls} calls of each "
            f"tool in alternating blocks of {args.concurrent_block}"
        )
        comparisons.append(
            await measure.compare(
                target,
                era,
                workload="concurrent",
                calls=args.concurrent_calls,
                clients=args.clients,
                block_calls=args.concurrent_block,
            )
        )
    return EraResult(era, version, listings, as_served, comparisons)


async def run_all(target: Target, args: argparse.Namespace) -> list[EraResult]:
    return [await run_era(target, era, args) for era in args.eras]


def environment() -> dict[str, Any]:
    def git(*command: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(REPO), *command],
                capture_output=True,
                text=True,
                check=True,
                timeout=10,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip()

    return {
        "commit": git("describe", "--always", "--dirty", "--abbrev=12"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "mcp": metadata.version("mcp"),
        "crewboard": metadata.version("crewboard"),
        "load_average_at_start": [round(load, 2) for load in os.getloadavg()],
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    started = datetime.now(UTC)
    clock = time.monotonic()
    env = environment()
    if args.database == "postgresql":
        progress(f"creating a throw-away database on {hide_password(args.postgres_url)}")
        with throwaway_postgres(args.postgres_url) as url:
            measured, server = run_with_server(args, url)
    else:
        measured, server = run_with_server(args, None)
    env["load_average_at_end"] = [round(load, 2) for load in os.getloadavg()]
    head = {
        "workload": args.workload,
        "started_at": started.isoformat(timespec="seconds"),
        "duration_seconds": round(time.monotonic() - clock, 1),
        "database": args.database,
        "environment": env,
    }
    if args.workload == "board":
        return head | board_results(args, measured, server)
    return head | mcp_results(args, measured, server)


def mcp_results(
    args: argparse.Namespace, eras: list[EraResult], server: dict[str, Any]
) -> dict[str, Any]:
    return {
        "settings": {
            "eras": args.eras,
            "sequential_calls_per_tool": args.calls,
            "concurrent_calls_per_tool": args.concurrent_calls if args.clients else 0,
            "clients": args.clients,
            "sequential_block_calls": args.sequential_block,
            "concurrent_block_calls": args.concurrent_block,
            "warmup_calls_per_tool": args.warmup,
            "real_tool": measure.REAL_TOOL,
            "noop_tool": NOOP_NAME,
            "target_ratio": args.target_ratio,
        },
        "server": server,
        "eras": [asdict(era) for era in eras],
        "target_met": {
            f"{era.era} {c.workload}": c.median_ratio <= args.target_ratio
            for era in eras
            for c in era.comparisons
        },
    }


def board_results(
    args: argparse.Namespace,
    measured: list[tuple[str, str, list[board.BoardRow]]],
    server: dict[str, Any],
) -> dict[str, Any]:
    runs = [
        {"era": era, "protocol_version": version, "rows": [asdict(row) for row in rows]}
        for era, version, rows in measured
    ]
    goals = [
        goal
        for era, _, rows in measured
        for goal in board.targets(rows, era=era, database=args.database)
    ]
    targets = [asdict(goal) for goal in [*goals, board.memory_goal(server["peak_rss_kib"])]]
    return {
        "settings": {
            "eras": args.eras,
            "sizes": args.board_sizes,
            "calls_per_call_and_project": args.calls,
            "block_calls": args.sequential_block,
            "warmup_calls_per_call_and_project": args.warmup,
            "filters": board.FILTERS,
            "update_statuses": list(board.UPDATE_STATUSES),
            "analyzed": args.analyze or args.database == "postgresql",
            "database": args.database,
        },
        "server": server,
        "board": runs,
        "targets": targets,
        "target_met": {target["name"]: target["met"] for target in targets},
    }


async def run_board(info: ServerInfo, args: argparse.Namespace) -> list[tuple[str, str, Any]]:
    projects = [board.BoardProject(**project) for project in info.board]
    measured = []
    for era in args.eras:
        progress(
            f"{era}: board calls, {args.calls} of each call on each project "
            f"({', '.join(f'{p.key}: {p.tasks:,} tasks' for p in projects)}), in blocks of "
            f"{args.sequential_block}, after {args.warmup} warm-up calls of each"
        )
        version, rows = await board.run_board(
            _target(info),
            era,
            projects,
            calls=args.calls,
            block_calls=args.sequential_block,
            warmup=args.warmup,
        )
        measured.append((era, version, rows))
    return measured


async def run_mcp(info: ServerInfo, args: argparse.Namespace) -> list[EraResult]:
    return await run_all(_target(info), args)


def run_with_server(
    args: argparse.Namespace, database_url: str | None
) -> tuple[Any, dict[str, Any]]:
    if args.workload == "board":
        sizes = ",".join(str(size) for size in args.board_sizes)
        server = ServerProcess(
            database_url,
            keep_data=args.keep_data,
            server_args=["--seed-board", sizes] + (["--analyze"] if args.analyze else []),
            start_timeout=BOARD_START_TIMEOUT,
        )
        progress(f"starting the server and seeding projects of {sizes} tasks (a minute or more)")
    else:
        server = ServerProcess(database_url, keep_data=args.keep_data)
        progress("starting the server")
    work = run_board if args.workload == "board" else run_mcp
    with server as info:
        # Start-up peaks on the argon2 hash of the owner's password (64 MiB of work memory)
        # and, for the board, on seeding: note that peak, then reset VmHWM so the one read at
        # the end is the serving peak.
        peak_at_start = proc_status_kib(info.pid, "VmHWM")
        rss_at_start = proc_status_kib(info.pid, "VmRSS")
        peak_was_reset = reset_peak_rss(info.pid)
        try:
            measured = anyio.run(work, info, args)
        except Exception:
            progress(f"the run failed; the server's log ends:\n{server.log_tail()}")
            raise
        peak = proc_status_kib(info.pid, "VmHWM")
        rss_at_end = proc_status_kib(info.pid, "VmRSS")
        progress("stopping the server")
    if args.keep_data:
        progress(f"server data and log kept in {server.folder}")
    return measured, {
        "database": info.database,
        "startup_peak_rss_kib": peak_at_start,
        "rss_after_startup_kib": rss_at_start,
        "peak_rss_kib": peak,  # VmHWM at the end: the serving peak when the reset worked
        "peak_rss_reset_after_startup": peak_was_reset,
        "rss_at_end_kib": rss_at_end,
        "exit_code": server.exit_code,
    }


def _target(info: ServerInfo) -> Target:
    return Target(
        mcp_url=f"{info.base_url}/mcp", token=info.token, project=info.project, pid=info.pid
    )


def write_results(results: dict[str, Any], output: Path | None) -> Path:
    if output is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        kind = "" if results["workload"] == "mcp" else f"{results['workload']}-"
        output = RESULTS / f"{stamp}-{kind}{results['database']}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return output


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    results = run(args)
    path = write_results(results, args.output)
    print(render(results))
    try:
        shown = path.relative_to(Path.cwd())
    except ValueError:
        shown = path
    print(f"\nJSON results: {shown}")
    if results["server"]["exit_code"] != 0:
        progress(f"the server did not stop cleanly (exit code {results['server']['exit_code']})")
        sys.exit(1)
    if args.check and not all(results["target_met"].values()):
        sys.exit(1)
