"""The readable report of a run (either workload), from its JSON results.

`python -m bench.report bench/results/FILE.json` prints an earlier run again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REAL = "get_project_state"
BUSY_LOAD = 0.5  # a load average over this at the start means something else was running


def _mib(kib: int | None) -> str:
    return "n/a" if kib is None else f"{kib / 1024:.1f} MiB"


def _listing_table(eras: list[dict[str, Any]]) -> list[str]:
    names = [era["era"] for era in eras]
    width = max(12, *(len(name) + 4 for name in names))
    lines = [
        "tools/list: bytes of the JSON-RPC result as the server sent it "
        "(production catalogue: bench_noop hidden)",
        f"  {'toolset':<12}{'tools':>6}" + "".join(f"{name + ' B':>{width}}" for name in names),
    ]
    for index, first in enumerate(eras[0]["listings"]):
        sizes = "".join(f"{era['listings'][index]['result_bytes']:>{width},}" for era in eras)
        lines.append(f"  {first['toolset']:<12}{first['tools']:>6}{sizes}")
    extra = ", ".join(
        f"{era['listing_as_served']['result_bytes'] - era['listings'][0]['result_bytes']:,} B "
        f"({era['era']})"
        for era in eras
    )
    lines.append(f"  (on this server bench_noop adds {extra} to 'all' and 'board')")
    return lines


def _calls_table(eras: list[dict[str, Any]], target: float) -> list[str]:
    lines = [
        "get_project_state (real) vs bench_noop (no-op): client-observed latency in ms, "
        "calls per second, CPU ms per call",
        f"  {'era':<12}{'run':<11}{'tool':<19}{'calls':>6}{'calls/s':>9}"
        f"{'median':>8}{'p95':>8}{'p99':>8}{'server CPU':>12}{'client CPU':>12}",
    ]
    for era in eras:
        for index, c in enumerate(era["comparisons"]):
            run = "1 client" if c["clients"] == 1 else f"{c['clients']} clients"
            for label, key, first in (("bench_noop", "noop", True), (REAL, "real", False)):
                row = c[key]
                lead = f"{era['era'] if index == 0 and first else '':<12}{run if first else '':<11}"
                lines.append(
                    f"  {lead}{label:<19}{row['calls']:>6}{row['calls_per_second']:>9.0f}"
                    f"{row['median_ms']:>8.2f}{row['p95_ms']:>8.2f}{row['p99_ms']:>8.2f}"
                    f"{row['server_cpu_ms_per_call']:>12.2f}{row['client_cpu_ms_per_call']:>12.2f}"
                )
            verdict = "met" if c["median_ratio"] <= target else "MISSED"
            lines.append(
                f"  {'':<23}{'real ÷ no-op':<25}"
                f"{_times(c['throughput_ratio']):>9}{_times(c['median_ratio']):>8}"
                f"{_times(c['p95_ratio']):>8}{'':>8}{_times(c['server_cpu_ratio']):>12}"
                f"   median within {target}×: {verdict}"
            )
    lines.append(
        "  (calls/s ratio: no-op calls/s ÷ real calls/s, i.e. how many times slower the real read is)"
    )
    return lines


def _times(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}×"


def _memory(server: dict[str, Any]) -> list[str]:
    if server["peak_rss_reset_after_startup"]:
        peak = f"server peak RSS while serving the benchmark (VmHWM at the end): {_mib(server['peak_rss_kib'])}"
    else:
        peak = (
            f"server peak RSS (VmHWM at the end, start-up included): {_mib(server['peak_rss_kib'])}"
        )
    return [
        peak,
        f"  start-up peak {_mib(server['startup_peak_rss_kib'])} (argon2 hashes the owner's "
        f"password with 64 MiB), RSS after start-up {_mib(server['rss_after_startup_kib'])}, "
        f"at the end {_mib(server['rss_at_end_kib'])}; the server stopped with exit code "
        f"{server['exit_code']}",
    ]


def _board_table(run: dict[str, Any]) -> list[str]:
    rows = run["rows"]
    lines = [
        f"board calls ({run['era']} → {run['protocol_version']}), one client: client-observed "
        "latency in ms, calls per second, CPU ms per call",
        f"  {'call':<19}{'tasks':>9}{'matched':>9}{'calls':>7}{'calls/s':>9}"
        f"{'median':>9}{'p95':>9}{'p99':>9}{'server CPU':>12}{'client CPU':>12}",
    ]
    for row in rows:
        s = row["summary"]
        matched = "" if row["matched"] is None else f"{row['matched']:,}"
        lines.append(
            f"  {row['call']:<19}{row['tasks']:>9,}{matched:>9}{s['calls']:>7}"
            f"{s['calls_per_second']:>9.0f}{s['median_ms']:>9.2f}{s['p95_ms']:>9.2f}"
            f"{s['p99_ms']:>9.2f}{s['server_cpu_ms_per_call']:>12.2f}"
            f"{s['client_cpu_ms_per_call']:>12.2f}"
        )
    sizes = sorted({row["tasks"] for row in rows}, reverse=True)
    by = {(row["call"], row["tasks"]): row["summary"] for row in rows}
    calls = list(dict.fromkeys(row["call"] for row in rows))
    large, small = sizes[0], sizes[-1]
    lines.append(f"  growth from {small:,} to {large:,} tasks (largest ÷ smallest):")
    lines.append(f"  {'call':<19}{'median':>9}{'p95':>9}{'server CPU':>12}")
    for call in calls:
        big, little = by[(call, large)], by[(call, small)]
        cpu = (
            big["server_cpu_ms_per_call"] / little["server_cpu_ms_per_call"]
            if little["server_cpu_ms_per_call"]
            else None
        )
        lines.append(
            f"  {call:<19}{_times(big['median_ms'] / little['median_ms']):>9}"
            f"{_times(big['p95_ms'] / little['p95_ms']):>9}{_times(cpu):>12}"
        )
    return lines


def _targets(targets: list[dict[str, Any]]) -> list[str]:
    lines = ["targets:"]
    for goal in targets:
        value = "n/a" if goal["value"] is None else f"{goal['value']:.2f} {goal['unit']}"
        lines.append(f"  {'met   ' if goal['met'] else 'MISSED'}  {goal['name']}: {value}")
    return lines


def render_board(results: dict[str, Any]) -> str:
    env = results["environment"]
    settings = results["settings"]
    filters = settings["filters"]
    lines = [
        f"Crewboard benchmark, board workload — {results['database']}, {env['cpus']} CPUs, "
        f"Python {env['python']}, mcp {env['mcp']}, commit {env['commit'] or 'unknown'}",
        f"  {results['started_at']}, {results['duration_seconds']} s; projects of "
        f"{', '.join(f'{size:,}' for size in settings['sizes'])} tasks; filters: status="
        f"{filters['status']}, tag={filters['tag']}, q={filters['q']!r}; update_task moves a "
        f"task to {' / '.join(settings['update_statuses'])} and rewrites its description",
        "  planner statistics: "
        + (
            "VACUUM ANALYZE after seeding, as autovacuum leaves the tables"
            if settings.get("database") == "postgresql"
            else "full ANALYZE after seeding"
            if settings.get("analyzed")
            else "as `crewboard serve` gives them at start (sampled ANALYZE on SQLite)"
        ),
    ]
    for run in results["board"]:
        lines += ["", *_board_table(run)]
    lines += ["", *_targets(results["targets"]), "", *_memory(results["server"])]
    lines += _load_warning(env)
    return "\n".join(lines)


def _load_warning(env: dict[str, Any]) -> list[str]:
    load = env["load_average_at_start"][0]
    if load <= BUSY_LOAD:
        return []
    return [
        f"warning: the 1-minute load average was {load:.2f} at the start: the CPUs were busy "
        "(a test suite, an earlier run), so absolute figures may be low; ratios suffer less"
    ]


def render(results: dict[str, Any]) -> str:
    if results.get("workload", "mcp") == "board":
        return render_board(results)
    env = results["environment"]
    settings = results["settings"]
    server = results["server"]
    eras = results["eras"]
    versions = ", ".join(f"{era['era']} → {era['protocol_version']}" for era in eras)
    lines = [
        f"Crewboard benchmark — {results['database']}, {env['cpus']} CPUs, "
        f"Python {env['python']}, mcp {env['mcp']}, commit {env['commit'] or 'unknown'}",
        f"  {results['started_at']}, {results['duration_seconds']} s; "
        f"negotiated protocol versions: {versions}",
        "",
        *_listing_table(eras),
        "",
        *_calls_table(eras, settings["target_ratio"]),
        "",
        *_memory(server),
        *_load_warning(env),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    paths = argv if argv is not None else sys.argv[1:]
    if not paths:
        sys.exit("usage: python -m bench.report bench/results/FILE.json ...")
    for path in paths:
        print(render(json.loads(Path(path).read_text(encoding="utf-8"))))


if __name__ == "__main__":
    main()
