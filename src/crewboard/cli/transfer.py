"""`crewboard export`, `crewboard import`: a project moved between servers as one archive, and
tasks brought in from the tools a team used before (task-master, Backlog.md, GitHub issues,
a Linear CSV export)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from crewboard.cli import importers
from crewboard.cli.common import (
    State,
    as_option,
    emit,
    json_option,
    open_database,
    pass_state,
    run_guarded,
)
from crewboard.cli.progress import bars, wanted
from crewboard.services.transfer import archive

SOURCES = ("auto", "crewboard", "taskmaster", "backlog", "github", "linear")


@click.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--from",
    "source",
    type=click.Choice(SOURCES),
    default="auto",
    show_default=True,
    help="What PATH is: a Crewboard export archive, or another tool's tasks (auto: recognised "
    "by its contents).",
)
@click.option(
    "--project",
    default=None,
    metavar="KEY",
    help="The project tasks go into (another tool's tasks).",
)
@click.option(
    "--map-user",
    "user_map",
    multiple=True,
    metavar="LOGIN=EMAIL",
    help="Whose account an assignee of the other tool is (repeatable).",
)
@click.option(
    "--new-ids",
    is_flag=True,
    help="Archive: give every row a new id (a copy beside the original) instead of keeping them.",
)
@click.option("--key", default=None, help="Archive: land the project under this key instead.")
@click.option(
    "--workspace",
    default=None,
    metavar="ID",
    help="Archive: the workspace the projects join (default: their owner's own space).",
)
@click.option(
    "--match-people",
    is_flag=True,
    help="Archive: let the archive's people who already have an account here (same email) be "
    "those accounts; without it, such an archive is refused, listing them.",
)
@click.option("--dry-run", is_flag=True, help="Report what would happen and change nothing.")
@as_option
@json_option
@pass_state
def import_command(
    state: State,
    path: Path,
    source: str,
    project: str | None,
    user_map: tuple[str, ...],
    new_ids: bool,
    key: str | None,
    workspace: str | None,
    match_people: bool,
    dry_run: bool,
    as_email: str | None,
    as_json: bool,
) -> None:
    """Import a Crewboard export archive, or tasks from task-master, Backlog.md, GitHub or Linear."""
    if source == "auto":
        source = importers.detect(path)
    if source != "crewboard":
        importers.import_from_tool(
            state,
            path=path,
            source=source,
            project=project,
            user_map=user_map,
            as_email=as_email,
            dry_run=dry_run,
            as_json=as_json,
        )
        return
    if project is not None or user_map:
        raise click.UsageError(
            "--project and --map-user are for another tool's tasks; a Crewboard archive "
            "names its own projects and people (use --key to land one under another key)."
        )
    settings = state.settings()
    with open_database(settings) as db:

        def act() -> None:
            manifest = archive.read_manifest(path)
            totals = {
                "rows": sum(sum(p.get("documents", {}).values()) for p in manifest["projects"])
            }
            with bars(wanted(as_json), totals) as advance:
                report = archive.import_archive(
                    db,
                    path,
                    new_ids=new_ids,
                    key=key,
                    workspace_id=workspace,
                    dry_run=dry_run,
                    match_people=match_people,
                    advance=advance,
                )
            emit(as_json, report, lambda: _import_text(report))

        run_guarded(act, as_json)


def _import_text(report: dict[str, Any]) -> str:
    verb = "would import" if report["dryRun"] else "imported"
    lines = []
    for project in report["projects"]:
        rows = sum(project["documents"].values())
        tasks = project["documents"].get("tasks", 0)
        lines.append(
            f"{verb} {project['key']} ({project['name']}): {tasks} tasks, {rows} rows in all"
        )
    people = report["people"]
    if people["matched"]:
        lines.append(f"people matched by email: {', '.join(people['matched'])}")
    if people["created"]:
        lines.append(
            f"accounts {'to create' if report['dryRun'] else 'created'} without a password "
            f"(set one with `crewboard user set-password EMAIL`): {', '.join(people['created'])}"
        )
    blobs = report["blobs"]
    lines.append(f"files: {blobs['count']} ({blobs['bytes']} bytes)")
    if report["dryRun"]:
        lines.append("dry run: nothing was changed")
    return "\n".join(lines)


@click.command("export")
@click.argument("projects", nargs=-1, required=True, metavar="PROJECT...")
@click.option(
    "--to",
    "to",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The archive to write (a .zip; replaced if it exists).",
)
@json_option
@pass_state
def export_command(state: State, projects: tuple[str, ...], to: Path, as_json: bool) -> None:
    """Write whole projects (by key or id) to an archive another server imports."""
    settings = state.settings()
    with open_database(settings) as db:

        def act() -> None:
            shown = wanted(as_json)
            totals = archive.export_totals(db, projects) if shown else None
            with bars(shown, totals) as advance:
                report = archive.export_projects(db, projects, to, advance=advance)
            emit(as_json, report, lambda: _export_text(report))

        run_guarded(act, as_json)


def _export_text(report: dict[str, Any]) -> str:
    lines = [f"wrote {report['path']} ({report['bytes']} bytes, {report['seconds']} s)"]
    for project in report["projects"]:
        docs = project["documents"]
        lines.append(
            f"  {project['key']} ({project['name']}): {docs.get('tasks', 0)} tasks, "
            f"{sum(docs.values())} rows in all"
        )
    lines.append(f"  people: {report['people']}, files: {report['blobs']['count']}")
    return "\n".join(lines)


def register(cli: click.Group) -> None:
    cli.add_command(export_command)
    cli.add_command(import_command)
