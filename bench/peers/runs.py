"""The peers workload's runs put together: each figure of a step, across the runs of a size.

A board size is measured in several whole runs (every system's run 1, then every system's
run 2, …), each on fresh boards and servers. For each step and system, a figure of one run
(the median latency of its calls, the server's CPU per operation, …) becomes, across the
runs, its median, lowest and highest, and the runs' values in order: the median latency is
therefore the median of the runs' medians. A results file written before there were runs
(one run per size, its steps at the top) reads as one run.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

# Per-run figures of a step and system that become a spread across the runs.
SPREAD = (
    "median_ms",
    "p95_ms",
    "server_cpu_ms_per_op",
    "client_cpu_ms_per_op",
    "rss_mib_before",
    "rss_mib_after",
)
# Counts that add up over the runs.
SUMMED = ("calls", "failed", "chars", "server_cpu_ms")
# Figures of the whole-board listing, the same in every run (the same board, the same pages).
LISTING = ("calls_per_listing", "chars_per_listing", "tasks_listed")


def spread(values: Iterable[float | None]) -> dict[str, Any] | None:
    """Median, lowest and highest of the values that are there, and all of them in order;
    None when there is none."""
    found = [float(value) for value in values if value is not None]
    if not found:
        return None
    return {
        "median": statistics.median(found),
        "min": min(found),
        "max": max(found),
        "runs": found,
    }


def _latency(figures: dict[str, Any]) -> float | None:
    """A run's median latency, or None when every call of the run failed (a median of
    errors is no figure of the system)."""
    if figures["calls"] and figures["calls"] == figures["failed"]:
        return None
    value = figures.get("median_ms")
    return None if value is None else float(value)


def aggregate_system(per_run: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One step of one system across runs: spreads, sums, the listing's shape."""
    out: dict[str, Any] = {"runs": len(per_run)}
    for key in SUMMED:
        out[key] = sum(figures.get(key) or 0 for figures in per_run)
    for key in SPREAD:
        if key == "median_ms":
            out[key] = spread(_latency(figures) for figures in per_run)
        else:
            out[key] = spread(figures.get(key) for figures in per_run)
    for key in LISTING:
        shown = [figures[key] for figures in per_run if figures.get(key) is not None]
        if shown:
            out[key] = shown[0]
    errors = sorted({error for figures in per_run for error in figures.get("first_errors", [])})
    if errors:
        out["first_errors"] = errors[:3]
    return out


def aggregate_steps(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps of a size's runs, each system's figures put together across the runs."""
    if not runs:
        return []
    steps: list[dict[str, Any]] = []
    for index, first in enumerate(runs[0]["steps"]):
        same = [run["steps"][index] for run in runs if len(run["steps"]) > index]
        names = list(first["systems"])
        step: dict[str, Any] = {
            "step": first["step"],
            "operations": first["operations"],
            "systems": {
                name: aggregate_system([s["systems"][name] for s in same if name in s["systems"]])
                for name in names
            },
        }
        if "labels" in first:
            step["labels"] = first["labels"]
        steps.append(step)
    return steps


def run_load(run: dict[str, Any]) -> float | None:
    """The 1-minute load average when the run started (older files: at its first step)."""
    if run.get("load_start") is not None:
        return float(run["load_start"])
    steps = run.get("steps") or [{}]
    value = steps[0].get("load_start")
    return None if value is None else float(value)


def aggregate_size(size: int, names: Sequence[str], runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A board size: its runs as measured, the load at each run's start, the steps across runs."""
    return {
        "size": size,
        "systems": list(names),
        "runs": runs,
        "load_start_runs": [run_load(run) for run in runs],
        "steps": aggregate_steps(runs),
    }


def as_runs(results: dict[str, Any]) -> dict[str, Any]:
    """The results with every size in runs: a size from a file written before runs existed
    (its steps measured once, no "runs") becomes one run of itself."""
    sizes = []
    for entry in results.get("sizes", []):
        if "runs" in entry:
            sizes.append(entry)
        else:
            sizes.append(aggregate_size(entry["size"], entry.get("systems", []), [entry]))
    return {**results, "sizes": sizes}


def run_count(results: dict[str, Any]) -> int:
    """How many runs each size had (the most of any size)."""
    return max((len(entry["runs"]) for entry in results.get("sizes", [])), default=0)
