"""`crewboard backup`, `crewboard restore`: a consistent copy of a live server's database (and
blob files), and putting one back on a stopped server. The work is `storage/backup.py` and
`storage/restore.py`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from crewboard.cli.common import State, echo_error, emit, json_option, open_database, pass_state
from crewboard.cli.progress import bars, wanted
from crewboard.storage import backup as engine
from crewboard.storage import restore as restoring


@click.command("backup")
@click.option(
    "--to",
    "to",
    required=True,
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the new backup set into (made if needed).",
)
@json_option
@pass_state
def backup_command(state: State, to: Path, as_json: bool) -> None:
    """Write a backup set of the database (and blob files) into DIR/crewboard-<UTC time>/.

    Safe while the server runs, on SQLite and PostgreSQL: the copy is one consistent
    snapshot. PostgreSQL needs pg_dump of the server's major version (or newer) on PATH.
    """
    settings = state.settings()
    with open_database(settings, require_current=False) as db:
        totals = engine.backup_totals(db)
        try:
            with bars(wanted(as_json), totals) as advance:
                made = engine.take_backup(db, to.resolve(), advance=advance)
        except engine.BackupError as error:
            _fail(error, as_json)
    manifest = made.manifest
    for digest in manifest["missingBlobs"]:
        click.echo(
            f"warning: blob {digest} is named by the database but its file is missing or "
            "damaged in the blob folder; the set holds the rest",
            err=True,
        )
    summary = _backup_summary(made)
    emit(as_json, summary, lambda: _backup_text(summary))


@click.command("restore")
@click.argument(
    "source",
    metavar="FROM",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace a database that already holds projects (everything in it is lost).",
)
@json_option
@pass_state
def restore_command(state: State, source: Path, force: bool, as_json: bool) -> None:
    """Restore the backup set FROM (its folder) into the configured database, then migrate it.

    Offline: stop the server first (every node). Checks every file's checksum before
    changing anything; refuses a set of the other database kind or of a newer schema.
    PostgreSQL needs pg_restore on PATH.
    """
    settings = state.settings()
    with open_database(settings, require_current=False) as db:
        totals = restoring.restore_totals(source)
        try:
            with bars(wanted(as_json), totals) as advance:
                done = restoring.restore_backup(db, source.resolve(), force=force, advance=advance)
        except engine.BackupError as error:
            _fail(error, as_json)
    summary = _restore_summary(done)
    emit(as_json, summary, lambda: _restore_text(summary))


def _fail(error: engine.BackupError, as_json: bool) -> NoReturn:
    """Exit 1 with the reason: JSON on stderr for `--json`, a sentence otherwise."""
    if as_json:
        echo_error(error.reason.upper(), error.message)
        sys.exit(1)
    raise click.ClickException(error.message)


def _backup_summary(made: engine.BackupSet) -> dict[str, Any]:
    manifest = made.manifest
    files = manifest["files"]
    database = next(f for f in files if f["path"] == manifest["database"]["path"])
    blobs = [f for f in files if f is not database]
    return {
        "path": str(made.path),
        "dialect": manifest["dialect"],
        "schemaRevision": manifest["schemaRevision"],
        "crewboardVersion": manifest["crewboardVersion"],
        "createdAt": manifest["createdAt"],
        "seconds": round(made.seconds, 3),
        "files": len(files),
        "bytes": sum(f["size"] for f in files),
        "database": database,
        "blobFiles": len(blobs),
        "blobBytes": sum(f["size"] for f in blobs),
        "missingBlobs": manifest["missingBlobs"],
    }


def _restore_summary(done: restoring.Restored) -> dict[str, Any]:
    files = done.manifest["files"]
    return {
        "from": str(done.source),
        "dialect": done.manifest["dialect"],
        "schemaRevision": done.manifest["schemaRevision"],
        "migratedTo": done.migrated_to,
        "createdAt": done.manifest["createdAt"],
        "files": len(files),
        "bytes": sum(f["size"] for f in files),
        "blobFilesCopied": done.blob_files_copied,
        "blobFilesPresent": done.blob_files_present,
        "replaced": done.replaced,
        "searchIndexRebuilt": done.search_index_rebuilt,
        "seconds": round(done.seconds, 3),
    }


def _backup_text(summary: dict[str, Any]) -> str:
    blobs = f", {summary['blobFiles']} blob files" if summary["blobFiles"] else ""
    return (
        f"Backed up {summary['dialect']} (schema {summary['schemaRevision']}) to "
        f"{summary['path']}: {_size(summary['bytes'])}{blobs} in {summary['seconds']:.1f} s."
    )


def _restore_text(summary: dict[str, Any]) -> str:
    blobs = (
        f" {summary['blobFilesCopied']} blob files copied, {summary['blobFilesPresent']} "
        "already there."
        if summary["blobFilesCopied"] or summary["blobFilesPresent"]
        else ""
    )
    return (
        f"Restored the backup of {summary['createdAt']} from {summary['from']} "
        f"(schema {summary['schemaRevision']}, now {summary['migratedTo']}) in "
        f"{summary['seconds']:.1f} s.{blobs} Start the server again."
    )


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    size = float(count)
    for unit in ("KiB", "MiB"):
        size /= 1024
        if size < 1024:
            return f"{size:.1f} {unit}"
    return f"{size / 1024:.1f} GiB"


def register(cli: click.Group) -> None:
    cli.add_command(backup_command)
    cli.add_command(restore_command)
