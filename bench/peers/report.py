"""The peers workload's Markdown: times per step side by side, ratios, CPU, memory, races.

`python -m bench.peers.report FILE` prints an earlier run again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.peers.systems import LABELS

COLUMNS = ("crewboard-stdio", "crewboard-http", "backlog", "taskmaster")


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f}"


def _ratio(top: float | None, bottom: float | None) -> str:
    if top is None or bottom is None or bottom == 0:
        return "–"
    return f"{top / bottom:.2f}×"


def _median(step: dict[str, Any], name: str) -> float | None:
    figures = step["systems"].get(name)
    if figures is None or figures["calls"] == figures["failed"]:
        return None
    value = figures["median_ms"]
    return None if value is None else float(value)


def _failed(step: dict[str, Any], name: str) -> str:
    figures = step["systems"].get(name)
    return f" ({figures['failed']} failed)" if figures and figures["failed"] else ""


def _less_client(step: dict[str, Any], name: str) -> float | None:
    """The median less the client's CPU per call: about what the server and the wire took."""
    median = _median(step, name)
    client = step["systems"][name].get("client_cpu_ms_per_op") if median is not None else None
    return None if median is None or client is None else median - float(client)


def steps_table(results: dict[str, Any]) -> list[str]:
    lines = [
        "| step | N | Crewboard stdio ms | Crewboard HTTP ms | Backlog.md ms | task-master ms "
        "| ratio/Backlog | ratio/task-master | HTTP/stdio | HTTP/stdio less client CPU |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for run in results["sizes"]:
        for step in run["steps"]:
            name = step["step"]
            labels = step.get("labels", {})
            if labels.get("taskmaster", "search") != "search":
                name += " (task-master: get_task by id, no search)"
            cells = [
                _ms(_median(step, column)) + _failed(step, column)
                if column in step["systems"]
                else "–"
                for column in COLUMNS
            ]
            stdio = _median(step, "crewboard-stdio")
            lines.append(
                f"| {name} | {run['size']:,} | {' | '.join(cells)} "
                f"| {_ratio(stdio, _median(step, 'backlog'))} "
                f"| {_ratio(stdio, _median(step, 'taskmaster'))} "
                f"| {_ratio(_median(step, 'crewboard-http'), stdio)} "
                f"| {_ratio(_less_client(step, 'crewboard-http'), _less_client(step, 'crewboard-stdio'))} |"
            )
    return lines


def listing_table(results: dict[str, Any]) -> list[str]:
    lines = [
        "| N | system | calls per listing | characters received | tasks listed |",
        "| ---: | --- | ---: | ---: | ---: |",
    ]
    for run in results["sizes"]:
        step = next(s for s in run["steps"] if s["step"] == "list whole board")
        for name, figures in step["systems"].items():
            chars = figures.get("chars_per_listing")
            lines.append(
                f"| {run['size']:,} | {LABELS[name]} | {figures.get('calls_per_listing')} "
                f"| {chars:,} | {figures.get('tasks_listed')} |"
                if chars is not None
                else f"| {run['size']:,} | {LABELS[name]} | – | – | – |"
            )
    return lines


def resources_table(results: dict[str, Any]) -> list[str]:
    lines = [
        "| N | step | system | server CPU ms per op | client CPU ms per op "
        "| RSS MiB before → after | load 1 min |",
        "| ---: | --- | --- | ---: | ---: | --- | --- |",
    ]
    for run in results["sizes"]:
        for step in run["steps"]:
            for name, figures in step["systems"].items():
                lines.append(
                    f"| {run['size']:,} | {step['step']} | {LABELS[name]} "
                    f"| {_ms(figures['server_cpu_ms_per_op'])} "
                    f"| {_ms(figures.get('client_cpu_ms_per_op'))} "
                    f"| {figures['rss_mib_before']:.0f} → {figures['rss_mib_after']:.0f} "
                    f"| {step['load_start']:.2f} → {step['load_end']:.2f} |"
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


def render(results: dict[str, Any]) -> str:
    machine = results["machine"]
    lines = [
        f"Peers workload, {results['started']} ({results['wall_s']:.0f} s), "
        f"{machine['cpu_model']}, {machine['cores']} cores, load 1 min "
        f"{results['load_start']:.2f} at the start",
        "Crewboard {crewboard}, Backlog.md {backlog}, task-master-ai {taskmaster}; "
        "official mcp SDK {mcp} client for all; ratios are Crewboard stdio median ÷ the "
        "peer's (below 1: Crewboard faster).".format(**results["versions"]),
        "",
        *steps_table(results),
        "",
        *[f"- {note}" for note in results["notes"]],
        "",
        "Whole-board listing (one listing; Crewboard pages of 200):",
        "",
        *listing_table(results),
        "",
        "Servers (CPU of the server's process tree over the step, per operation; resident set):",
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
