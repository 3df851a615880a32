"""`python -m bench peers` (or `python -m bench.peers`): Crewboard beside Backlog.md and
task-master-ai, the same workload over MCP on every system (bench/README.md, "The peers
workload")."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import os
import shutil
import signal
import tempfile
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import anyio

from bench.peers import report
from bench.peers.install import BACKLOG, TASKMASTER, PeerMissing, require
from bench.peers.runs import aggregate_size
from bench.peers.systems import EVERY_SYSTEM, SYSTEMS
from bench.peers.workload import (
    BACKLOG_MAX,
    kill_leftovers,
    load_1min,
    progress,
    run_races,
    run_size,
)
from bench.process import RESULTS


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench peers", description=__doc__)
    parser.add_argument(
        "--sizes", default="1000,5000", help="board sizes N, comma-separated (default 1000,5000)"
    )
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help=f"which to measure, comma-separated (default all: {','.join(SYSTEMS)})",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: N=50, small samples, small races (still --runs runs)",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=3,
        help="whole runs per board size, each on fresh boards and servers (default 3); the "
        "table gives the median of the runs and their lowest and highest",
    )
    parser.add_argument("--sample", type=int, default=200, help="tasks edited and read per N")
    parser.add_argument("--list-repeats", type=int, default=5, help="whole-board listings per N")
    parser.add_argument("--searches", type=int, default=40, help="searches per N")
    parser.add_argument(
        "--backlog-max",
        type=int,
        default=BACKLOG_MAX,
        help="largest N Backlog.md runs at (default 1000; 5000 would take about 40 minutes)",
    )
    parser.add_argument("--writers", type=int, default=4, help="clients at once in the races")
    parser.add_argument("--race-creates", type=int, default=30, help="creates per writer")
    parser.add_argument("--race-edits", type=int, default=30, help="tasks edited at once")
    parser.add_argument("--retries", type=int, default=10, help="creates sent twice")
    parser.add_argument("--no-races", action="store_true", help="skip the races")
    parser.add_argument("--output", type=Path, default=None, help="JSON file to write")
    parser.add_argument(
        "--keep-data", action="store_true", help="keep the run's temp folder (boards, logs)"
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be 1 or more, not {args.runs}")
    if args.quick:
        args.sizes = "50"
        args.sample = min(args.sample, 20)
        args.list_repeats = min(args.list_repeats, 3)
        args.searches = min(args.searches, 10)
        args.race_creates = min(args.race_creates, 5)
        args.race_edits = min(args.race_edits, 8)
        args.retries = min(args.retries, 3)
    return args


def machine() -> dict[str, Any]:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    return {"cpu_model": model, "cores": os.cpu_count()}


def versions() -> dict[str, str]:
    return {
        "crewboard": importlib.metadata.version("crewboard"),
        "mcp": importlib.metadata.version("mcp"),
        "backlog": BACKLOG.installed_version() or "not installed",
        "taskmaster": TASKMASTER.installed_version() or "not installed",
    }


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> None:
    try:
        run(argv)
    except KeyboardInterrupt:
        progress("interrupted; every server was stopped")
        raise SystemExit(130) from None


def measure_sizes(
    args: argparse.Namespace,
    names: list[str],
    folder: Path,
    log: TextIO,
    results: dict[str, Any],
) -> None:
    """Every board size in `args.runs` whole runs, into results["sizes"]."""
    for size in (int(size) for size in args.sizes.split(",") if size.strip()):
        here = list(names)
        if "backlog" in here and size > args.backlog_max:
            here.remove("backlog")
            results["notes"].append(
                f"Backlog.md not run at N={size:,} (--backlog-max {args.backlog_max:,}): "
                "its creates slow as the board grows (23 → 195 ms over the first "
                "1,000), so 5,000 would take about 40 minutes."
            )
        # Whole runs one after the other, every system in each, so a slow drift of the
        # machine falls on every system alike.
        runs = [
            anyio.run(
                partial(
                    run_size,
                    here,
                    size,
                    folder,
                    log,
                    sample=args.sample,
                    list_repeats=args.list_repeats,
                    searches=args.searches,
                    run=number,
                )
            )
            for number in range(1, args.runs + 1)
        ]
        results["sizes"].append(aggregate_size(size, here, runs))


def run(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    names = [name.strip() for name in args.systems.split(",") if name.strip()]
    unknown = sorted(set(names) - set(SYSTEMS))
    if unknown or not names:
        raise SystemExit(f"bench peers: unknown systems {unknown}; choose from {SYSTEMS}")
    try:
        for name, peer in (("backlog", BACKLOG), ("taskmaster", TASKMASTER)):
            if name in names:
                require(peer)
    except PeerMissing as missing:
        raise SystemExit(f"bench peers: {missing}") from None
    folder = Path(tempfile.mkdtemp(prefix="crewboard-peers-"))
    log_path = folder / "servers.log"
    started = datetime.now(UTC)
    results: dict[str, Any] = {
        "started": started.strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "versions": versions(),
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "load_start": load_1min(),
        "runs": args.runs,
        "sizes": [],
        "notes": [],
    }
    # SIGTERM and SIGINT end the run through the clean-up below: asyncio's own SIGINT handling
    # cancels the run's task, which the SDK's client may absorb and carry on.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _interrupt)
    wall = time.monotonic()
    progress(f"servers' stderr and setup output: {log_path}")
    with log_path.open("w", encoding="utf-8") as log:
        # The SDK logs what it cannot parse (task-master's telemetry notice on stdout) there too.
        handler = logging.StreamHandler(log)
        sdk_logger = logging.getLogger("mcp")
        sdk_logger.addHandler(handler)
        sdk_logger.propagate = False
        try:
            measure_sizes(args, names, folder, log, results)
            if not args.no_races:
                results["races"] = anyio.run(
                    partial(
                        run_races,
                        names,
                        folder,
                        log,
                        writers=args.writers,
                        creates=args.race_creates,
                        edits=args.race_edits,
                        retries=args.retries,
                    )
                )
        finally:
            # Whatever ended the run, no server of ours outlives it.
            for system in EVERY_SYSTEM:
                system.close()
            kill_leftovers(EVERY_SYSTEM, log)
            sdk_logger.removeHandler(handler)
            if args.keep_data:
                progress(f"kept {folder}")
            else:
                shutil.rmtree(folder, ignore_errors=True)
    if not args.no_races:
        results["notes"].append("The races ran once, after the sizes' runs.")
    results["notes"] += [
        "task-master has no text search: its search row is get_task by id.",
        "Backlog.md's whole board is one task_list call (limit 1000, its maximum); "
        "task-master's get_tasks answers the whole board in one reply.",
        "Crewboard's get_task includes the task's context pack (its default).",
    ]
    results["wall_s"] = time.monotonic() - wall
    print(report.render(results))
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    output = args.output or RESULTS / f"{stamp}-peers.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nJSON results: {output}")


if __name__ == "__main__":
    main()
