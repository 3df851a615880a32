"""Backup sets of a live server, and restoring one (`crewboard backup`, `crewboard restore`).

A backup set is one folder, `crewboard-<UTC time>/`, holding the database copy (`crewboard.db`
on SQLite, `crewboard.dump` from `pg_dump --format=custom` on PostgreSQL), `manifest.json`
(what made it, the schema revision, each file's size and sha256) and, when the server keeps
blob bytes in a folder (`CREWBOARD_BLOB_DIR`), `blobs/` with a copy of every blob file the
database copy names. It is written under a hidden temporary name in the target folder and
renamed at the end, so a set under its final name is always whole.

Consistency on a live server:

- SQLite: the online backup API copies the file in steps, inside one read transaction held
  from the first step to the last. WAL lets the server's writers go on meanwhile; the copy is
  the database as of that transaction's first read, and since the reading connection never
  takes a new snapshot, another connection's commit cannot make the copy start over (it
  would, step after step, under steady writes, were the lock released between steps).
- PostgreSQL: a REPEATABLE READ transaction exports its snapshot, `pg_dump --snapshot` dumps
  exactly that, and the blob names are read in the same transaction.

Blob files are content-addressed and never changed, and the collector deletes rows, never
files: every file the snapshot names is still there after it, so they are copied afterwards.

Restoring a set is `storage/restore.py`.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text

from crewboard import __version__
from crewboard.storage import backup_files as set_files
from crewboard.storage import migrate, pg_tools
from crewboard.storage.blobs import IN_FOLDER, file_name
from crewboard.storage.database import SQLITE_BUSY_TIMEOUT_MS, Database
from crewboard.storage.pg_tools import BackupError as BackupError  # noqa: PLC0414 - callers catch it from here
from crewboard.storage.waits import relax_waits

FORMAT = "crewboard-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SQLITE_FILE = "crewboard.db"
POSTGRES_FILE = "crewboard.dump"
BLOB_FOLDER = "blobs"
SET_PREFIX = "crewboard-"
STEP_PAGES = 1024  # pages per online-backup step: 4 MiB at SQLite's default page size
MIB = 1024 * 1024

# Progress steps (labels of the CLI's bars); `advance(step, count)`.
PAGES = "database pages"
TABLES = "database tables"
BLOB_FILES = "blob files"
CHECKSUMS = "checksums (MiB)"
INTEGRITY = "integrity check"
CHECKING = "checking files (MiB)"

Advance = Callable[[str, int], None]

_DUMPED = re.compile(r'dumping contents of table "')


@dataclass(frozen=True)
class BackupSet:
    """What `take_backup` wrote: the set's folder and its manifest."""

    path: Path
    manifest: dict[str, Any]
    seconds: float


@dataclass
class _Snapshot:
    file: str
    revision: str
    blobs: list[str]  # digests of the blobs whose bytes are files in the blob folder
    database: dict[str, Any] = field(default_factory=dict)  # manifest facts of the copy


def ignore_progress(step: str, count: int) -> None:
    """No progress wanted."""


# --- Backup -----------------------------------------------------------------------------------


def backup_totals(db: Database) -> dict[str, int]:
    """How long each backup step is, as far as the live database tells (for progress bars)."""
    if db.dialect == "sqlite":
        path = sqlite_path(db)
        if not path.exists():
            return {}
        with closing(sqlite_reader(path)) as conn:
            pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
        return {PAGES: pages, INTEGRITY: 1, CHECKSUMS: set_files.chunks(path.stat().st_size)}
    with db.engine.connect() as conn:
        tables = conn.execute(text(_PG_TABLE_COUNT)).scalar_one()
    return {TABLES: int(tables)}


def take_backup(
    db: Database, to: Path, *, advance: Advance = ignore_progress, step_pages: int = STEP_PAGES
) -> BackupSet:
    """Write a new backup set of the live database (and its blob files) into `to`.

    Raises:
        BackupError: the database cannot be backed up (none there, no Crewboard schema,
            pg_dump missing, too old or failing, the copy failing its integrity check).
    """
    started = time.monotonic()
    created = db.clock.now()
    name = f"{SET_PREFIX}{created.strftime('%Y%m%dT%H%M%SZ')}"
    to.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".partial", dir=to))
    try:
        snapshot = (
            _sqlite_snapshot(db, work, advance, step_pages)
            if db.dialect == "sqlite"
            else _postgres_snapshot(db, work, advance)
        )
        blob_entries, missing = _copy_blob_files(db.blob_dir, snapshot.blobs, work, advance)
        files = [set_files.measure(work, snapshot.file, CHECKSUMS, advance), *blob_entries]
        manifest = {
            "format": FORMAT,
            "formatVersion": FORMAT_VERSION,
            "crewboardVersion": __version__,
            "schemaRevision": snapshot.revision,
            "dialect": db.dialect,
            "createdAt": iso(created),
            "seconds": round(time.monotonic() - started, 3),
            "database": {"path": snapshot.file, **snapshot.database},
            "blobFolder": db.blob_dir is not None,
            "missingBlobs": missing,
            "files": files,
        }
        set_files.write_json(work / MANIFEST, manifest)
        set_files.fsync_dir(work)
        final = _publish(work, to, name)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return BackupSet(final, manifest, time.monotonic() - started)


def _sqlite_snapshot(db: Database, work: Path, advance: Advance, step_pages: int) -> _Snapshot:
    source_path = sqlite_path(db)
    if not source_path.exists():
        raise BackupError(
            "no_database", f"there is no database at {source_path}: check CREWBOARD_DATA_DIR"
        )
    target = work / SQLITE_FILE
    with closing(sqlite_reader(source_path)) as source, closing(sqlite3.connect(target)) as copy:
        # One read transaction across every step (see the module's docstring).
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()
        done = 0

        def report(_status: int, remaining: int, total: int) -> None:
            nonlocal done
            advance(PAGES, total - remaining - done)
            done = total - remaining

        source.backup(copy, pages=step_pages, progress=report)
        source.execute("COMMIT")
    with closing(sqlite3.connect(target, isolation_level=None)) as copy:
        copy.execute("PRAGMA journal_mode=DELETE")  # one file in the set, no -wal beside it
        advance(INTEGRITY, 0)
        check_sqlite_integrity(copy, "the copy")
        advance(INTEGRITY, 1)
        revision = sqlite_revision(copy)
        if revision is None:
            raise BackupError(
                "no_schema",
                f"the database at {source_path} holds no Crewboard schema: nothing to back up",
            )
        blobs = sqlite_folder_blobs(copy)
        pages = int(copy.execute("PRAGMA page_count").fetchone()[0])
    set_files.fsync(target)
    return _Snapshot(SQLITE_FILE, revision, blobs, {"pages": pages})


def _postgres_snapshot(db: Database, work: Path, advance: Advance) -> _Snapshot:
    pg_dump = pg_tools.tool("pg_dump")
    tool_version, tool_major = pg_tools.tool_version(pg_dump)
    engine = db.engine.execution_options(isolation_level="REPEATABLE READ")
    with engine.connect() as conn, conn.begin():
        conn.execute(text("SET TRANSACTION READ ONLY"))
        # It stays open, idle, while pg_dump runs: no statement or idle timeout for it.
        relax_waits(conn)
        server_major = int(conn.execute(text("SHOW server_version_num")).scalar_one()) // 10000
        if tool_major < server_major:
            raise BackupError(
                "tool_too_old",
                f"{pg_dump} is PostgreSQL {tool_major}'s and the server runs {server_major}: "
                f"install postgresql-client-{server_major} (or newer) and put its pg_dump "
                "first on PATH",
            )
        snapshot = str(conn.execute(text("SELECT pg_export_snapshot()")).scalar_one())
        revision = migrate.revision_of(conn)
        if revision is None:
            raise BackupError(
                "no_schema",
                f"the database {pg_tools.shown(db.url)} holds no Crewboard schema: nothing to back up",
            )
        blobs = [str(row[0]) for row in conn.execute(text(_FOLDER_BLOBS))]
        tables = int(conn.execute(text(_PG_TABLE_COUNT)).scalar_one())
        # The exporting transaction stays open until pg_dump has dumped its snapshot.
        pg_tools.run(
            [
                pg_dump,
                "--format=custom",
                "--no-password",
                "--verbose",
                f"--snapshot={snapshot}",
                f"--file={work / POSTGRES_FILE}",
                f"--dbname={pg_tools.libpq(db.url)}",
            ],
            db.url,
            _DUMPED,
            TABLES,
            advance,
        )
    set_files.fsync(work / POSTGRES_FILE)
    database = {"tables": tables, "pgDump": tool_version, "serverMajor": server_major}
    return _Snapshot(POSTGRES_FILE, str(revision), blobs, database)


_PG_TABLE_COUNT = (
    "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
)
# The blobs whose bytes are files in the blob folder.
_FOLDER_BLOBS = f"SELECT digest FROM blobs WHERE chunk_size = {IN_FOLDER} ORDER BY digest"


def _copy_blob_files(
    folder: Path | None, digests: list[str], work: Path, advance: Advance
) -> tuple[list[dict[str, Any]], list[str]]:
    """Copy the files of these blobs into the set (hashing as it goes); the manifest entries,
    and the digests whose file is missing or does not hold its bytes."""
    entries: list[dict[str, Any]] = []
    missing: list[str] = []
    for digest in digests:
        source = None if folder is None else folder / file_name(digest)
        relative = f"{BLOB_FOLDER}/{file_name(digest)}"
        if source is None or not source.is_file():
            missing.append(digest)
            continue
        target = work / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        size, sha256 = set_files.copy_hashing(source, target)
        if sha256 != digest:
            target.unlink()
            missing.append(digest)
        else:
            entries.append({"path": relative, "size": size, "sha256": sha256})
        advance(BLOB_FILES, 1)
    return entries, missing


def _publish(work: Path, to: Path, name: str) -> Path:
    """Rename the finished set to its final name (another suffix if a set has that name)."""
    for attempt in range(100):
        final = to / (name if attempt == 0 else f"{name}-{attempt}")
        if final.exists():
            continue
        try:
            work.rename(final)
        except OSError:  # made by a backup running at the same moment
            continue
        set_files.fsync_dir(to)
        return final
    raise BackupError("name_taken", f"{to} already holds backup sets named {name}-1..99")


# --- Shared pieces ----------------------------------------------------------------------------


def sqlite_path(db: Database) -> Path:
    database = db.url.database
    if not database or database == ":memory:":
        raise BackupError("unsupported_database", "an in-memory SQLite database has no file")
    return Path(database)


def sqlite_reader(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)


def check_sqlite_integrity(conn: sqlite3.Connection, what: str) -> None:
    problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
    if problems != ["ok"]:
        raise BackupError(
            "integrity", f"{what} fails SQLite's integrity check: {'; '.join(problems[:5])}"
        )


def sqlite_revision(conn: sqlite3.Connection) -> str | None:
    if not sqlite_has_table(conn, "alembic_version"):
        return None
    row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return None if row is None else str(row[0])


def sqlite_folder_blobs(conn: sqlite3.Connection) -> list[str]:
    if not sqlite_has_table(conn, "blobs"):
        return []
    return [str(row[0]) for row in conn.execute(_FOLDER_BLOBS)]


def sqlite_has_table(conn: sqlite3.Connection, name: str) -> bool:
    query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    return conn.execute(query, (name,)).fetchone() is not None


def file_entry(manifest: dict[str, Any], path: str) -> dict[str, Any]:
    for entry in manifest["files"]:
        if entry["path"] == path:
            return dict(entry)
    raise BackupError("damaged", f"the manifest lists no {path}")


def blob_entries(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in manifest["files"] if f["path"].startswith(f"{BLOB_FOLDER}/")]


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
