"""The peers benchmark's runs put together (bench/peers/runs.py) and its report."""

from __future__ import annotations

from typing import Any

from bench.peers import report
from bench.peers.runs import aggregate_size, as_runs, spread


def _figures(median: float, cpu: float, *, failed: int = 0) -> dict[str, Any]:
    return {
        "calls": 10,
        "failed": failed,
        "median_ms": median,
        "p95_ms": median * 2,
        "chars": 100,
        "server_cpu_ms": cpu * 10,
        "server_cpu_ms_per_op": cpu,
        "client_cpu_ms_per_op": 0.5,
        "rss_mib_before": 60.0,
        "rss_mib_after": 64.0,
    }


def _run(load: float, stdio: float, http: float, *, failed: int = 0) -> dict[str, Any]:
    """One run at N=50 as bench/peers/workload.py's run_size records it."""
    listing = {"calls_per_listing": 1, "chars_per_listing": 5000, "tasks_listed": 50}
    return {
        "size": 50,
        "load_start": load,
        "systems": ["crewboard-stdio", "crewboard-http"],
        "steps": [
            {
                "step": "create_task",
                "operations": 50,
                "wall_s": 1.0,
                "load_start": load,
                "load_end": load,
                "systems": {
                    "crewboard-stdio": _figures(stdio, stdio / 2),
                    "crewboard-http": _figures(http, http / 2, failed=failed),
                },
            },
            {
                "step": "list whole board",
                "operations": 3,
                "wall_s": 1.0,
                "load_start": load,
                "load_end": load,
                "systems": {
                    "crewboard-stdio": {**_figures(stdio, 1.0), **listing},
                    "crewboard-http": {**_figures(http, 2.0), **listing},
                },
            },
        ],
    }


def _results(sizes: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "started": "2026-12-07 21:00 UTC",
        "machine": {"cpu_model": "test CPU", "cores": 2},
        "versions": {"crewboard": "0", "mcp": "1", "backlog": "-", "taskmaster": "-"},
        "load_start": 0.5,
        "sizes": sizes,
        "notes": [],
        "wall_s": 3.0,
    }


def test_spread_gives_the_median_lowest_and_highest_and_skips_missing_values() -> None:
    assert spread([3.0, None, 1.0, 2.0]) == {
        "median": 2.0,
        "min": 1.0,
        "max": 3.0,
        "runs": [3.0, 1.0, 2.0],
    }
    assert spread([None]) is None


def test_a_size_of_three_runs_gives_the_median_of_the_runs_medians_and_their_spread() -> None:
    runs = [_run(0.4, 2.0, 3.0), _run(0.9, 2.6, 3.9), _run(1.3, 2.2, 3.3)]

    size = aggregate_size(50, ["crewboard-stdio", "crewboard-http"], runs)

    assert size["runs"] == runs
    assert size["load_start_runs"] == [0.4, 0.9, 1.3]
    create = size["steps"][0]
    stdio = create["systems"]["crewboard-stdio"]
    assert stdio["median_ms"] == {"median": 2.2, "min": 2.0, "max": 2.6, "runs": [2.0, 2.6, 2.2]}
    assert stdio["server_cpu_ms_per_op"]["median"] == 1.1
    assert stdio["calls"] == 30
    listing = size["steps"][1]["systems"]["crewboard-http"]
    assert listing["tasks_listed"] == 50


def test_a_run_whose_every_call_failed_gives_no_latency_for_that_run() -> None:
    runs = [_run(0.4, 2.0, 3.0, failed=10), _run(0.9, 2.6, 4.0)]

    size = aggregate_size(50, ["crewboard-stdio", "crewboard-http"], runs)

    http = size["steps"][0]["systems"]["crewboard-http"]
    assert http["median_ms"]["runs"] == [4.0]
    assert http["failed"] == 10


def test_the_report_shows_medians_with_spread_ratios_of_medians_and_the_load_of_each_run() -> None:
    runs = [_run(0.4, 2.0, 3.0), _run(0.9, 2.6, 3.9), _run(1.3, 2.2, 3.3)]
    results = _results([aggregate_size(50, ["crewboard-stdio", "crewboard-http"], runs)])

    text = report.render(results)

    assert "| create_task | 50 | 2.20 (2.00–2.60) | 3.30 (3.00–3.90) | – | – " in text
    assert "| 1.50× |" in text  # HTTP ÷ stdio of the medians: 3.3 / 2.2
    assert "N=50: 0.40, 0.90, 1.30" in text
    # Server CPU per call by door: stdio 1.10, HTTP 1.65, their ratio.
    assert "| create_task | 50 | 1.10 (1.00–1.30) | 1.65 (1.50–1.95) | 1.50× | – | – |" in text


def test_the_report_reads_a_file_from_before_runs_as_one_run() -> None:
    old = _run(0.7, 2.0, 3.0)
    del old["load_start"]  # the old files had the load per step only
    results = _results([old])

    text = report.render(results)

    assert as_runs(results)["sizes"][0]["load_start_runs"] == [0.7]
    assert "One run per size" in text
    assert "| create_task | 50 | 2.00 | 3.00 | – | – | – | – | 1.50× |" in text
    assert "| list whole board | 50 | 1.00 | 2.00 | 2.00× | – | – |" in text
