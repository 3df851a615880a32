"""`python -m bench metrics`: what counting requests for /metrics costs a tool call (issue 39).

Two real servers (bench/server.py) on the same kind of database, each with a fresh one of its
own: one with `CREWBOARD_METRICS=off` (the default), one with `CREWBOARD_METRICS=on`. One
`mcp.Client` per server, both in this process and built the same way, calls `bench_noop`
(the MCP path alone, which is where the MCP door's counting sits). After a warm-up the
servers take turns in blocks, off, on, on, off, … so drift and the machine's other load
fall on both alike. `--pairs` pairs of fresh servers run one after another (every other pair
starts the metrics-on server first) and are pooled.

For each server: the client-observed latency (median, p95) and the server process's own CPU
time per call over its blocks (its CPU clock, every thread, nanoseconds). The client's HTTP
stack is most of a call's wall time and is the same for both, so the CPU ratio is the fair
measure of the server's extra work; the wall ratio is reported beside it.

Target (issue 39): CPU per call with metrics on within 1.03x of off (the wall medians' ratio
when the CPU clock cannot be read). At the end /metrics is scraped once: its status, its size,
and whether it counted every `bench_noop` call the client made. Beside the ratios, what one
count costs in this process (the real recorder), as a share of a call's server CPU.
`--control` starts both servers with metrics off: the spread between two like processes, to
judge the ratio by.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
import timeit
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client

from bench.measure import ERAS, Target, connect, percentile, server_cpu_seconds
from bench.noop import NOOP_NAME
from bench.process import RESULTS, ServerInfo, ServerProcess, throwaway_postgres
from bench.runner import add_database_options, environment
from crewboard.http.metrics import Metrics
from crewboard.services.live import Broker
from crewboard.storage.database import Database

TARGET_RATIO = 1.03
MODES = ("off", "on")
SAMPLE = re.compile(r"^crewboard_requests_total\{(?P<labels>[^}]*)\} (?P<value>\S+)$", re.M)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench metrics", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--era", default="legacy", choices=ERAS)
    parser.add_argument(
        "--pairs", type=int, default=3, help="pairs of fresh servers, one after another"
    )
    parser.add_argument(
        "--calls", type=int, default=1000, help="timed calls on each server of a pair"
    )
    parser.add_argument("--block", type=int, default=50, help="calls per block")
    parser.add_argument("--warmup", type=int, default=200, help="uncounted calls on each")
    parser.add_argument(
        "--control",
        action="store_true",
        help="both servers with metrics off: how far two like processes differ",
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 pair, 200 calls")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--output", type=Path, default=None, help="JSON results file")
    args = parser.parse_args(argv)
    if args.quick:
        args.pairs, args.calls, args.warmup = 1, 200, 20
    if min(args.pairs, args.calls, args.block) < 1 or args.warmup < 0:
        parser.error("--pairs, --calls and --block must be at least 1, --warmup not negative")
    return args


def progress(message: str) -> None:
    sys.stderr.write(f"[bench metrics] {message}\n")
    sys.stderr.flush()


def cpu_clock_ns(pid: int) -> int | None:
    """CPU time process `pid` has used, all its threads (those that ended too), in ns: Linux's
    CPU-time clock of another process (the clock id `clock_getcpuclockid` would give). None
    where it cannot be read."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | 2)
    except (OSError, OverflowError):
        return None


@dataclass
class Side:
    """One server's blocks: latencies and CPU time spent during them."""

    mode: str  # the CREWBOARD_METRICS the server runs with
    pid: int
    latencies_ns: list[int] = field(default_factory=list)
    cpu_ns: int | None = 0  # None once the clock could not be read
    cpu_ticks_seconds: float = 0.0  # the same from /proc/PID/stat (10 ms ticks), to compare
    calls_made: int = 0  # every bench_noop call sent to it, warm-up included

    def row(self, label: str) -> dict[str, Any]:
        ms = sorted(value / 1e6 for value in self.latencies_ns)
        count = len(ms)
        return {
            "server": label,
            "metrics": self.mode,
            "calls": count,
            "median_ms": round(percentile(ms, 0.5), 4),
            "p95_ms": round(percentile(ms, 0.95), 4),
            "mean_ms": round(sum(ms) / count, 4),
            "server_cpu_ms_per_call": (
                None if self.cpu_ns is None else round(self.cpu_ns / 1e6 / count, 4)
            ),
            "server_cpu_ms_per_call_proc_stat": round(self.cpu_ticks_seconds * 1000 / count, 3),
        }


async def _call(client: Client) -> int:
    started = time.perf_counter_ns()
    result = await client.call_tool(NOOP_NAME, {})
    elapsed = time.perf_counter_ns() - started
    if result.is_error:
        raise RuntimeError(f"{NOOP_NAME} failed: {result.content}")
    return elapsed


async def _block(client: Client, side: Side, calls: int) -> None:
    cpu_before, ticks_before = cpu_clock_ns(side.pid), server_cpu_seconds(side.pid)
    for _ in range(calls):
        side.latencies_ns.append(await _call(client))
    cpu_after = cpu_clock_ns(side.pid)
    side.cpu_ticks_seconds += server_cpu_seconds(side.pid) - ticks_before
    if side.cpu_ns is None or cpu_before is None or cpu_after is None:
        side.cpu_ns = None
    else:
        side.cpu_ns += cpu_after - cpu_before
    side.calls_made += calls


async def measure(
    targets: list[Target], sides: list[Side], args: argparse.Namespace, lead: int
) -> None:
    """Warm both up, then blocks lead, other, other, lead, … until each has had `calls`."""
    async with connect(targets[0], args.era) as first, connect(targets[1], args.era) as second:
        clients = [first, second]
        for client in clients:
            await client.list_tools()
        for _ in range(args.warmup):
            for client, side in zip(clients, sides, strict=True):
                await _call(client)
                side.calls_made += 1
        done = 0
        index = 0
        while done < args.calls:
            size = min(args.block, args.calls - done)
            order = (lead, 1 - lead) if index % 2 == 0 else (1 - lead, lead)
            for which in order:
                await _block(clients[which], sides[which], size)
            done += size
            index += 1


def scrape(info: ServerInfo, calls_made: int) -> dict[str, Any]:
    """GET /metrics once: status, size, and the bench_noop calls it counted."""
    started = time.perf_counter()
    response = httpx2.get(f"{info.base_url}/metrics", timeout=10)
    elapsed_ms = (time.perf_counter() - started) * 1000
    counted = 0.0
    for sample in SAMPLE.finditer(response.text):
        labels = sample["labels"]
        if 'door="mcp"' in labels and f'operation="{NOOP_NAME}"' in labels:
            counted += float(sample["value"])
    return {
        "status": response.status_code,
        "bytes": len(response.content),
        "lines": len(response.text.splitlines()),
        "samples": sum(
            1 for line in response.text.splitlines() if line and not line.startswith("#")
        ),
        "elapsed_ms": round(elapsed_ms, 2),
        "noop_calls_counted": int(counted),
        "noop_calls_made": calls_made,
    }


def status_of_metrics(info: ServerInfo) -> int:
    return httpx2.get(f"{info.base_url}/metrics", timeout=10).status_code


@contextmanager
def databases(args: argparse.Namespace) -> Iterator[list[str | None]]:
    """The database URL of each server of a pair: SQLite in each one's folder (None), or two
    fresh throw-away PostgreSQL databases (bench.server wants an empty one)."""
    if args.database != "postgresql":
        yield [None, None]
        return
    with (
        throwaway_postgres(args.postgres_url) as first,
        throwaway_postgres(args.postgres_url) as second,
    ):
        yield [first, second]


@dataclass
class Pair:
    """What one pair of fresh servers gave."""

    sides: list[Side]  # A (metrics off), B (on, or off again under --control)
    scrape: dict[str, Any] | None  # B's /metrics at the end, when it serves it
    exit_codes: list[int | None]
    database: str


def run_pair(args: argparse.Namespace, number: int, modes: list[str]) -> Pair:
    """Start A and B (every other pair B first), measure them side by side, scrape, stop."""
    lead = number % 2  # which server starts first and leads the first block
    with databases(args) as urls, ExitStack() as stack:
        servers = [
            # The same hash seed in both, so the two processes differ in the setting only.
            ServerProcess(url, env={"CREWBOARD_METRICS": mode, "PYTHONHASHSEED": "0"})
            for url, mode in zip(urls, modes, strict=True)
        ]
        entered = {which: stack.enter_context(servers[which]) for which in (lead, 1 - lead)}
        infos = [entered[0], entered[1]]
        statuses = [status_of_metrics(info) for info in infos]
        expected = [200 if mode == "on" else 404 for mode in modes]
        if statuses != expected:
            raise RuntimeError(f"/metrics answered {statuses}, expected {expected}")
        targets = [Target(f"{i.base_url}/mcp", i.token, i.project, i.pid) for i in infos]
        sides = [Side(mode, info.pid) for mode, info in zip(modes, infos, strict=True)]
        anyio.run(measure, targets, sides, args, lead)
        scraped = scrape(infos[1], sides[1].calls_made) if modes[1] == "on" else None
    return Pair(sides, scraped, [server.exit_code for server in servers], infos[0].database)


def pooled(pairs: list[Pair], which: int) -> Side:
    """One server role's blocks over every pair."""
    into = Side(pairs[0].sides[which].mode, 0)
    for pair in pairs:
        side = pair.sides[which]
        into.latencies_ns += side.latencies_ns
        into.cpu_ticks_seconds += side.cpu_ticks_seconds
        into.calls_made += side.calls_made
        into.cpu_ns = (
            None if into.cpu_ns is None or side.cpu_ns is None else into.cpu_ns + side.cpu_ns
        )
    return into


def record_cost_us(calls: int = 100_000) -> float:
    """Microseconds one count of a call takes in this process: the MCP door's recorder of
    the real `Metrics` (a counter increment and a histogram observation), best of three."""
    folder = Path(tempfile.mkdtemp(prefix="crewboard-bench-metrics-"))
    db = Database(f"sqlite:///{folder / 'unused.db'}")  # the gauges' database, never read here
    try:
        record = Metrics(db, Broker(db)).door("mcp")
        best = min(
            timeit.timeit(lambda: record(NOOP_NAME, "ok", 0.002), number=calls) for _ in range(3)
        )
    finally:
        db.dispose()
        shutil.rmtree(folder, ignore_errors=True)
    return best / calls * 1e6


def run(args: argparse.Namespace) -> dict[str, Any]:
    env = environment()
    modes = ["off", "off"] if args.control else list(MODES)
    labels = ["A: off", "B: off"] if args.control else ["A: off", "B: on"]
    pairs = []
    for number in range(args.pairs):
        progress(
            f"pair {number + 1} of {args.pairs}: two fresh servers on {args.database} (load "
            f"average {os.getloadavg()[0]:.1f}); {args.warmup} warm-up calls on each, then "
            f"{args.calls} calls of {NOOP_NAME} on each in alternating blocks of {args.block}"
        )
        pairs.append(run_pair(args, number, modes))
    env["load_average_at_end"] = [round(load, 2) for load in os.getloadavg()]
    record_us = record_cost_us()
    rows = [pooled(pairs, which).row(label) for which, label in enumerate(labels)]
    per_pair = [
        {"pair": n + 1, "first_started": "B" if n % 2 else "A"}
        | ratios([side.row(label) for side, label in zip(pair.sides, labels, strict=True)])
        for n, pair in enumerate(pairs)
    ]
    exits = [code for pair in pairs for code in pair.exit_codes]
    scrapes = [pair.scrape for pair in pairs if pair.scrape is not None]
    return {
        "workload": "metrics",
        "database": pairs[0].database,
        "environment": env,
        "settings": {
            "era": args.era,
            "pairs": args.pairs,
            "calls_per_server": args.calls,
            "block_calls": args.block,
            "warmup_calls_per_server": args.warmup,
            "control": args.control,
            "tool": NOOP_NAME,
            "target_ratio": TARGET_RATIO,
        },
        "rows": rows,
        "ratios": ratios(rows),
        "pairs": per_pair,
        "scrapes": scrapes,
        "record_us": round(record_us, 2),
        "record_share_of_cpu_per_call": (
            None
            if rows[0]["server_cpu_ms_per_call"] is None
            else round(record_us / 1000 / rows[0]["server_cpu_ms_per_call"], 5)
        ),
        "target_met": goals(rows, scrapes, exits),
        "server_exit_codes": exits,
    }


def ratios(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    off, on = rows
    cpu = (
        on["server_cpu_ms_per_call"] / off["server_cpu_ms_per_call"]
        if on["server_cpu_ms_per_call"] and off["server_cpu_ms_per_call"]
        else None
    )
    return {
        "wall_median": round(on["median_ms"] / off["median_ms"], 4),
        "wall_p95": round(on["p95_ms"] / off["p95_ms"], 4),
        "server_cpu_per_call": None if cpu is None else round(cpu, 4),
    }


def goals(
    rows: list[dict[str, Any]], scrapes: list[dict[str, Any]], exits: list[int | None]
) -> dict[str, bool]:
    ratio = ratios(rows)
    cpu, wall = ratio["server_cpu_per_call"], ratio["wall_median"]
    assert wall is not None
    which, value = ("server CPU per call", cpu) if cpu is not None else ("wall median", wall)
    met = {f"{which} B / A {value:.3f}x (target <= {TARGET_RATIO}x)": value <= TARGET_RATIO}
    if scrapes:
        last = scrapes[-1]
        counted = sum(s["noop_calls_counted"] for s in scrapes)
        made = sum(s["noop_calls_made"] for s in scrapes)
        met[
            f"/metrics answered {last['status']} with {last['bytes']:,} bytes ({last['samples']} "
            f"samples); it counted {counted:,} of the {made:,} {NOOP_NAME} calls made"
        ] = all(s["status"] == 200 for s in scrapes) and counted == made
    met[f"every server exited 0 ({exits})"] = all(code == 0 for code in exits)
    return met


def render(results: dict[str, Any]) -> str:
    rows = results["rows"]
    head = (
        f"{'bench_noop':12} {'calls':>6} {'median ms':>10} {'p95 ms':>8} "
        f"{'server CPU ms/call':>19} {'(proc stat)':>12}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        cpu = r["server_cpu_ms_per_call"]
        lines.append(
            f"{r['server']:12} {r['calls']:>6} {r['median_ms']:>10.3f} {r['p95_ms']:>8.3f} "
            f"{'n/a' if cpu is None else f'{cpu:.4f}':>19} "
            f"{r['server_cpu_ms_per_call_proc_stat']:>12.3f}"
        )
    for ratio, label in [(results["ratios"], "B / A")] + [
        (pair, f"  pair {pair['pair']}") for pair in results["pairs"]
    ]:
        cpu_ratio = ratio["server_cpu_per_call"]
        lines.append(
            f"{label:12} {'':>6} {ratio['wall_median']:>9.3f}x {ratio['wall_p95']:>7.3f}x "
            f"{'n/a' if cpu_ratio is None else f'{cpu_ratio:.4f}x':>19}"
        )
    share = results["record_share_of_cpu_per_call"]
    lines.append(
        f"\nOne count of a call (the MCP door's recorder in this process): "
        f"{results['record_us']:.2f} us"
        + ("" if share is None else f", {share:.2%} of A's server CPU per call")
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    results = run(args)
    print(render(results))
    for goal, met in results["target_met"].items():
        print(f"{'met ' if met else 'MISSED'} {goal}")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    output = args.output or RESULTS / f"{stamp}-metrics-{results['database']}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nJSON results: {output}")
    if args.check and not all(results["target_met"].values()):
        sys.exit(1)
