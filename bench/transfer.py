"""The export/import workload: `python -m bench transfer [--database postgresql] [--tasks N]`.

A project of `--tasks` tasks (100,000 by default; each with its created event, as the board
workload seeds them: bench/seed.py) is exported to an archive, and the archive imported into a
second, empty database of the same kind, both through the services `crewboard export` and
`crewboard import` call. Reports tasks per second each way (and rows per second: a task is a
task row, its labels and its event), the archive's size, and the peak memory the process held
(`ru_maxrss`, which only grows: the import's figure includes the seeding's and the export's). Then the archive is
exported again from the second database and compared with the first, document by document.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from tests.support.factories import make_user

from bench.process import throwaway_postgres
from bench.runner import add_database_options, progress
from bench.seed import seed_board
from crewboard.cli.progress import bars, wanted
from crewboard.services.identity.users import person_actor
from crewboard.services.transfer import archive
from crewboard.storage import migrate
from crewboard.storage.database import Database


def _documents(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zipped:
        found = {name: zipped.read(name) for name in zipped.namelist()}
    manifest = json.loads(found.pop("manifest.json"))
    manifest.pop("exportedAt")
    return {**found, "manifest.json": json.dumps(manifest, sort_keys=True).encode()}


def _peak_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run(args: argparse.Namespace, source_url: str, target_url: str, folder: Path) -> None:
    source = Database(source_url)
    target = Database(target_url)
    try:
        migrate.upgrade(source)
        migrate.upgrade(target)
        owner = person_actor(make_user(source, "owner@example.com"))
        progress(f"seeding {args.tasks:,} tasks")
        (seeded,) = seed_board(source, owner, [args.tasks])
        first = folder / "first.zip"
        progress("exporting")
        started = time.perf_counter()
        with bars(wanted(False), archive.export_totals(source, [seeded.key])) as advance:
            exported = archive.export_projects(source, [seeded.key], first, advance=advance)
        export_seconds = time.perf_counter() - started
        export_peak = _peak_mib()
        rows = sum(exported["projects"][0]["documents"].values())
        progress("importing")
        started = time.perf_counter()
        with bars(wanted(False), {"rows": rows}) as advance:
            archive.import_archive(target, first, advance=advance)
        import_seconds = time.perf_counter() - started
        import_peak = _peak_mib()
        progress("exporting again to compare")
        second = folder / "second.zip"
        archive.export_projects(target, [seeded.key], second)
        same = _documents(first) == _documents(second)
    finally:
        source.dispose()
        target.dispose()
    report: dict[str, Any] = {
        "database": args.database,
        "tasks": args.tasks,
        "rows": rows,
        "archive_mib": round(first.stat().st_size / 2**20, 1),
        "export_seconds": round(export_seconds, 1),
        "export_tasks_per_second": round(args.tasks / export_seconds),
        "export_rows_per_second": round(rows / export_seconds),
        "export_peak_mib": export_peak,
        "import_seconds": round(import_seconds, 1),
        "import_tasks_per_second": round(args.tasks / import_seconds),
        "import_rows_per_second": round(rows / import_seconds),
        "import_peak_mib": import_peak,
        "round_trip_same_documents": same,
    }
    print("| measure | result |")
    print("| --- | ---: |")
    for name, value in report.items():
        print(f"| {name.replace('_', ' ')} | {value} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench transfer", description=__doc__)
    add_database_options(parser)
    parser.add_argument("--tasks", type=int, default=100_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="crewboard-bench-transfer-") as name:
        folder = Path(name)
        if args.database == "postgresql":
            with (
                throwaway_postgres(args.postgres_url) as source,
                throwaway_postgres(args.postgres_url) as target,
            ):
                run(args, source, target, folder)
        else:
            run(
                args,
                f"sqlite:///{folder / 'source.db'}",
                f"sqlite:///{folder / 'target.db'}",
                folder,
            )
