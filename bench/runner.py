"""`python -m bench`: start a real server, drive it with the MCP SDK client, report.

Per protocol era ("legacy" and "2026-07-28"):
  1. the size of `tools/list` for the whole catalogue and for each toolset;
  2. `get_project_state` against the no-op tool, sequentially from one client and from
     several clients at once: calls per second, median and p95 latency, and their ratio.
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

from bench import measure
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
from crewboard.domain.access import Toolset

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
TARGET_RATIO = 1.5


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description="Crewboard MCP benchmark (see bench/README.md)."
    )
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
    parser.add_argument(
        "--eras",
        default=",".join(ERAS),
        help=f"comma-separated client modes (default: {','.join(ERAS)})",
    )
    parser.add_argument(
        "--calls", type=int, default=2000, help="sequential calls of each tool per era"
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
        default=20,
        help="calls per block in the sequential run (blocks of the two tools alternate)",
    )
    parser.add_argument(
        "--concurrent-block",
        type=int,
        default=400,
        help="calls per block in the concurrent run, spread over the clients",
    )
    parser.add_argument(
        "--warmup", type=int, default=100, help="warm-up calls of each tool per era, not counted"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 200 calls of each tool per workload, 20 warm-up (figures are noisy)",
    )
    parser.add_argument("--target-ratio", type=float, default=TARGET_RATIO)
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a median ratio is over --target-ratio",
    )
    parser.add_argument("--output", type=Path, default=None, help="JSON results file")
    parser.add_argument(
        "--keep-data", action="store_true", help="keep the server's temp folder and log"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.concurrent_calls, args.warmup, args.concurrent_block = 200, 200, 20, 200
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
        await measure.measure_listing(target, era, label="all", headers={"X-MCP-Tools": real_tools})
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
            eras, server = run_with_server(args, url)
    else:
        eras, server = run_with_server(args, None)
    env["load_average_at_end"] = [round(load, 2) for load in os.getloadavg()]
    return {
        "started_at": started.isoformat(timespec="seconds"),
        "duration_seconds": round(time.monotonic() - clock, 1),
        "database": args.database,
        "environment": env,
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


def run_with_server(
    args: argparse.Namespace, database_url: str | None
) -> tuple[list[EraResult], dict[str, Any]]:
    server = ServerProcess(database_url, keep_data=args.keep_data)
    progress("starting the server")
    with server as info:
        # Start-up peaks on the argon2 hash of the owner's password (64 MiB of work memory):
        # note that peak, then reset VmHWM so the one read at the end is the serving peak.
        peak_at_start = proc_status_kib(info.pid, "VmHWM")
        rss_at_start = proc_status_kib(info.pid, "VmRSS")
        peak_was_reset = reset_peak_rss(info.pid)
        try:
            eras = anyio.run(run_all, _target(info), args)
        except Exception:
            progress(f"the run failed; the server's log ends:\n{server.log_tail()}")
            raise
        peak = proc_status_kib(info.pid, "VmHWM")
        rss_at_end = proc_status_kib(info.pid, "VmRSS")
        progress("stopping the server")
    if args.keep_data:
        progress(f"server data and log kept in {server.folder}")
    return eras, {
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
        output = RESULTS / f"{stamp}-{results['database']}.json"
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
