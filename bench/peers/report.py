"""The peers workload's Markdown: times per step side by side, ratios, CPU by door, memory,
races. Each figure is the median of the size's runs with, in brackets, the lowest and highest
run (bench/peers/runs.py).

`python -m bench.peers.report FILE` prints an earlier run again (a file from before there were
runs reads as one run).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.peers.runs import as_runs, run_count
from bench.peers.systems import LABELS

COLUMNS = ("crewboard-stdio", "crewboard-http", "backlog", "taskmaster")
PEERS = ("backlog", "taskmaster")


def _ms(value: float | None) -> str:
    if value is None:
        return "–"
    # Two decimals below 10 ms (rounded first, so 9.999 shows as 10.0, not 10.00).
    return f"{value:,.2f}" if abs(round(value, 2)) < 10 else f"{value:,.1f}"


def _ratio(top: float | None, bottom: float | None) -> str:
    if top is None or bottom is None or bottom == 0:
        return "–"
    return f"{top / bottom:.2f}×"


def _figure(step: dict[str, Any], name: str, key: str) -> dict[str, Any] | None:
    figures = step["systems"].get(name)
    found = None if figures is None else figures.get(key)
    return found if isinstance(found, dict) else None


def _median(step: dict[str, Any], name: str, key: str = "median_ms") -> float | None:
    """The median of the runs' figure (for latency, of the runs' medians)."""
    found = _figure(step, name, key)
    return None if found is None else float(found["median"])


def _spread(step: dict[str, Any], name: str, key: str = "median_ms") -> str:
    """`2.31 (2.20–2.45)`: the median of the runs, then the lowest and highest run."""
    found = _figure(step, name, key)
    if found is None:
        return "–"
    text = _ms(found["median"])
    if len(found["runs"]) > 1:
        text += f" ({_ms(found['min'])}–{_ms(found['max'])})"
    return text


def _failed(step: dict[str, Any], name: str) -> str:
    figures = step["systems"].get(name)
    return f" ({figures['failed']} failed)" if figures and figures["failed"] else ""


def _less_client(step: dict[str, Any], name: str) -> float | None:
    """The median less the client's CPU per call (medians of the runs): about what the server
    and the wire took."""
    median = _median(step, name)
    client = _median(step, name, "client_cpu_ms_per_op")
    return None if median is None or client is None else median - client


def _step_name(step: dict[str, Any]) -> str:
    name = str(step["step"])
    if step.get("labels", {}).get("taskmaster", "search") != "search":
        name += " (task-master: get_task by id, no search)"
    return name


def steps_table(results: dict[str, Any]) -> list[str]:
    lines = [
        "| step | N | Crewboard stdio ms | Crewboard HTTP ms | Backlog.md ms | task-master ms "
        "| ratio/Backlog | ratio/task-master | HTTP/stdio | HTTP/stdio less client CPU |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for size in results["sizes"]:
        for step in size["steps"]:
            cells = [
                _spread(step, column) + _failed(step, column) if column in step["systems"] else "–"
                for column in COLUMNS
            ]
            stdio = _median(step, "crewboard-stdio")
            lines.append(
                f"| {_step_name(step)} | {size['size']:,} | {' | '.join(cells)} "
                f"| {_ratio(stdio, _median(step, 'backlog'))} "
                f"| {_ratio(stdio, _median(step, 'taskmaster'))} "
                f"| {_ratio(_median(step, 'crewboard-http'), stdio)} "
                f"| {_ratio(_less_client(step, 'crewboard-http'), _less_client(step, 'crewboard-stdio'))} |"
            )
    return lines


def load_line(results: dict[str, Any]) -> str:
    """The 1-minute load average at the start of each run, per size."""
    parts = []
    for size in results["sizes"]:
        loads = ", ".join(
            "–" if load is None else f"{load:.2f}" for load in size["load_start_runs"]
        )
        parts.append(f"N={size['size']:,}: {loads}")
    return "Load average (1 min) at the start of each run: " + "; ".join(parts) + "."


def listing_table(results: dict[str, Any]) -> list[str]:
    lines = [
        "| N | system | calls per listing | characters received | tasks listed |",
        "| ---: | --- | ---: | ---: | ---: |",
    ]
    for size in results["sizes"]:
        step = next(s for s in size["steps"] if s["step"] == "list whole board")
        for name, figures in step["systems"].items():
            chars = figures.get("chars_per_listing")
            lines.append(
                f"| {size['size']:,} | {LABELS[name]} | {figures.get('calls_per_listing')} "
                f"| {chars:,} | {figures.get('tasks_listed')} |"
                if chars is not None
                else f"| {size['size']:,} | {LABELS[name]} | – | – | – |"
            )
    return lines


def cpu_table(results: dict[str, Any]) -> list[str]:
    """The server's own CPU per call by door: Crewboard over stdio and over HTTP, the peers."""
    key = "server_cpu_ms_per_op"
    lines = [
        "| step | N | Crewboard stdio | Crewboard HTTP | HTTP/stdio | Backlog.md | task-master |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for size in results["sizes"]:
        for step in size["steps"]:
            stdio = _median(step, "crewboard-stdio", key)
            http = _median(step, "crewboard-http", key)
            peers = " | ".join(_spread(step, name, key) for name in PEERS)
            lines.append(
                f"| {step['step']} | {size['size']:,} | {_spread(step, 'crewboard-stdio', key)} "
                f"| {_spread(step, 'crewboard-http', key)} | {_ratio(http, stdio)} | {peers} |"
            )
    return lines


def resources_table(results: dict[str, Any]) -> list[str]:
    lines = [
        "| N | step | system | client CPU ms per op | RSS MiB before → after |",
        "| ---: | --- | --- | ---: | --- |",
    ]
    for size in results["sizes"]:
        for step in size["steps"]:
            for name in step["systems"]:
                before = _median(step, name, "rss_mib_before")
                after = _median(step, name, "rss_mib_after")
                rss = "–" if before is None or after is None else f"{before:.0f} → {after:.0f}"
                lines.append(
                    f"| {size['size']:,} | {step['step']} | {LABELS[name]} "
                    f"| {_spread(step, name, 'client_cpu_ms_per_op')} | {rss} |"
                )
    return lines


def races_table(races: dict[str, Any]) -> list[str]:
    lines = [
        f"Races ({races['writers']} clients at once; for stdio each client is its own server "
        "process on the one board):",
        "",
        "| system | creates answered (distinct ids) / on board / lost | edits of different tasks answered "
        "/ lost / refused | edits of one task answered / refused | retried creates: "
        "duplicates |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, found in races["systems"].items():
        creates = found["concurrent_creates"]
        edits = found["edits_of_different_tasks"]
        one = found["edits_of_one_task"]
        retried = found["retried_creates"]
        lines.append(
            f"| {LABELS[name]} | {creates['answered']} ({creates.get('ids_answered', '–')}) "
            f"/ {creates['on_board']} / "
            f"**{creates['lost']}** (of {creates['sent']} sent) "
            f"| {edits['answered']} / **{edits['lost']}** / {edits['refused']} "
            f"(of {edits['tasks']}) | {one['answered']} / {one['refused']} "
            f"| **{retried['duplicates']}** of {retried['creates']} |"
        )
    return lines


def _how(runs: int) -> str:
    if runs == 1:
        return "One run per size; figures are the median of a step's calls."
    return (
        f"Figures are medians of {runs} runs per size (every system in each run, on fresh "
        "boards and servers, the systems taking turns call by call), latency the median of the "
        "runs' medians; in brackets the lowest and highest run. Ratios are of those medians."
    )


def render(results: dict[str, Any]) -> str:
    results = as_runs(results)
    machine = results["machine"]
    lines = [
        f"Peers workload, {results['started']} ({results['wall_s']:.0f} s), "
        f"{machine['cpu_model']}, {machine['cores']} cores, load 1 min "
        f"{results['load_start']:.2f} at the start",
        "Crewboard {crewboard}, Backlog.md {backlog}, task-master-ai {taskmaster}; "
        "official mcp SDK {mcp} client for all; ratios are Crewboard stdio median ÷ the "
        "peer's (below 1: Crewboard faster).".format(**results["versions"]),
        _how(run_count(results)),
        load_line(results),
        "",
        *steps_table(results),
        "",
        *[f"- {note}" for note in results["notes"]],
        "",
        "Server CPU per call by door, ms (utime + stime of the server's process tree over "
        "the step, per operation; HTTP/stdio of the medians):",
        "",
        *cpu_table(results),
        "",
        "Whole-board listing (one listing; Crewboard: the board projection, pages of up to 500):",
        "",
        *listing_table(results),
        "",
        "Client CPU per operation (this process during the system's calls) and the server's "
        "resident set (medians of the runs):",
        "",
        *resources_table(results),
    ]
    if results.get("races"):
        lines += ["", *races_table(results["races"])]
    return "\n".join(lines)


def main() -> None:
    for name in sys.argv[1:]:
        print(render(json.loads(Path(name).read_text(encoding="utf-8"))))


if __name__ == "__main__":
    main()
