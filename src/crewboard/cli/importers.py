"""`crewboard import` for the tools a team used before: recognising what PATH is, reading its
files, and printing the report of `services/board/imports.py`.

PATH is a task-master `tasks.json`, a Backlog.md folder (the project folder holding
`backlog/`, the `backlog/` folder, or its `tasks/` folder), a JSON array of GitHub issues as the
REST API lists them, or a Linear CSV export. A Crewboard archive is a `.zip`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from crewboard.cli.common import State, acting_person, emit, open_database, run_guarded
from crewboard.cli.progress import bars, wanted
from crewboard.domain.board.imports import BacklogFile, SourceFiles, sniff
from crewboard.services.board import imports

ACCEPTED = (
    "a Crewboard export (.zip), a task-master tasks.json, a Backlog.md folder (backlog/tasks/*.md), "
    "a JSON array of GitHub issues (REST API), or a Linear CSV export"
)
MAX_FILE = 64 * 1024 * 1024  # bytes of one file read for an import


def detect(path: Path) -> str:
    """The source PATH holds, by its contents (see the module's docstring)."""
    if path.is_file() and path.suffix.lower() == ".zip":
        return "crewboard"
    if path.is_dir():
        if _backlog_root(path) is not None:
            return "backlog"
        raise click.ClickException(f"{path} holds no Backlog.md tasks; PATH may be {ACCEPTED}.")
    found = sniff(_read(path))
    if found is None:
        raise click.ClickException(f"cannot tell what {path} is; PATH may be {ACCEPTED}.")
    return found


def import_from_tool(
    state: State,
    *,
    path: Path,
    source: str,
    project: str | None,
    user_map: tuple[str, ...],
    as_email: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Import another tool's tasks into `--project` and print the report."""
    if project is None:
        raise click.ClickException(
            f"--project KEY is required to import from {imports.source_name(source)}: "
            "name the project the tasks go into."
        )
    people = _user_map(user_map)
    files = _backlog_files(path) if source == "backlog" else _one_file(path)
    with open_database(state.settings()) as db:

        def act() -> None:
            actor = acting_person(db, as_email)
            with bars(wanted(as_json)) as advance:
                report = imports.import_tasks(
                    db,
                    actor,
                    project=project,
                    source=source,
                    files=files,
                    user_map=people,
                    dry_run=dry_run,
                    advance=advance,
                )
            body = report.as_dict()
            emit(as_json, body, lambda: _text(body))

        run_guarded(act, as_json)


def _user_map(entries: tuple[str, ...]) -> dict[str, str]:
    people: dict[str, str] = {}
    for entry in entries:
        login, sep, email = entry.partition("=")
        if not sep or not login.strip() or not email.strip():
            raise click.ClickException(f"--map-user {entry!r}: write LOGIN=EMAIL.")
        people[login.strip()] = email.strip()
    return people


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_FILE:
        raise click.ClickException(f"{path} is over {MAX_FILE // (1024 * 1024)} MiB.")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise click.ClickException(f"{path} is not UTF-8 text ({error.reason}).") from None


def _one_file(path: Path) -> SourceFiles:
    if path.is_dir():
        raise click.ClickException(f"{path} is a folder; this source is one file.")
    return SourceFiles.one(path.name, _read(path))


def _backlog_root(path: Path) -> tuple[Path, Path] | None:
    """(the backlog folder, its tasks folder) for a project folder, the backlog folder or the
    tasks folder; None when PATH holds no task files."""
    for root in (path / "backlog", path):
        if any((root / "tasks").glob("*.md")):
            return root, root / "tasks"
    if any(path.glob("*.md")):
        return path.parent, path
    return None


def _backlog_files(path: Path) -> SourceFiles:
    found = _backlog_root(path) if path.is_dir() else None
    if found is None:
        raise click.ClickException(f"{path} holds no Backlog.md tasks (backlog/tasks/*.md).")
    root, tasks = found
    base = path.parent

    def read(file: Path) -> BacklogFile:
        return BacklogFile(str(file.relative_to(base)), _read(file))

    files = [read(f) for f in sorted(tasks.glob("*.md"))]
    files += [read(f) for f in sorted((root / "completed").glob("*.md"))]
    config = root / "config.yml"
    return SourceFiles(
        files,
        config=read(config) if config.is_file() else None,
        milestones=[read(f) for f in sorted((root / "milestones").glob("*.md"))],
    )


def _text(report: dict[str, Any]) -> str:
    counts = report["counts"]
    verb = "would import" if report["dryRun"] else "imported"
    lines = [
        f"{imports.source_name(report['source'])} → {report['project']}: {verb} "
        f"{counts['created']} new, {counts['updated']} updated, {counts['unchanged']} unchanged, "
        f"{counts['skipped']} skipped"
        + (" (dry run: nothing was written)" if report["dryRun"] else "")
    ]
    for what in ("created", "updated"):
        for row in report[what]:
            changed = f" ({', '.join(row['changed'])})" if row.get("changed") else ""
            lines.append(
                f"  {what:<8} {row['key']:<10} {row['externalId']}  {row['title']}{changed}"
            )
    lines += [f"  skipped  {row['ref']}: {row['reason']}" for row in report["skipped"]]
    lines += [
        f"  missing  {row['externalId']} {row['field']} {row['ref']} (not in the file or the project)"
        for row in report["missingReferences"]
    ]
    if report["unmappedPeople"]:
        lines.append(
            "  people not mapped (kept as assignee:… labels; --map-user LOGIN=EMAIL): "
            + ", ".join(report["unmappedPeople"])
        )
    if report["ownedByImporter"]:
        lines.append(
            "  in progress with nobody mapped, so you are their human owner: "
            + ", ".join(report["ownedByImporter"])
        )
    return "\n".join(lines)
