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

Restore is an offline operation (the server stopped): it refuses a set of the other database
kind, of a schema newer than this version knows, or with a file whose checksum differs, and a
database that already holds projects unless forced; then it replaces the database (SQLite: a
checked copy renamed over the file; PostgreSQL: `pg_restore --single-transaction`) and
migrates it to this version's head.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic import ValidationError as ModelError
from sqlalchemy import text

from crewboard import __version__
from crewboard.jsonbody import BadJson, first_problem, parse_json
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
IN_USE_WAIT_S = 2.0  # how long restore waits for another connection's lock before refusing

# Progress steps (labels of the CLI's bars); `advance(step, count)`.
PAGES = "database pages"
TABLES = "database tables"
BLOB_FILES = "blob files"
CHECKSUMS = "checksums (MiB)"
INTEGRITY = "integrity check"
CHECKING = "checking files (MiB)"

Advance = Callable[[str, int], None]

_BLOB_PATH = re.compile(rf"{BLOB_FOLDER}/[0-9a-f]{{2}}/[0-9a-f]{{62}}")
_DUMPED = re.compile(r'dumping contents of table "')
_RESTORED = re.compile(r'processing data for table "')


@dataclass(frozen=True)
class BackupSet:
    """What `take_backup` wrote: the set's folder and its manifest."""

    path: Path
    manifest: dict[str, Any]
    seconds: float


@dataclass(frozen=True)
class Restored:
    """What `restore_backup` did."""

    source: Path
    manifest: dict[str, Any]
    replaced: bool  # the database held projects and was replaced (--force)
    migrated_to: str | None
    blob_files_copied: int
    blob_files_present: int
    search_index_rebuilt: bool
    seconds: float


@dataclass
class _Snapshot:
    file: str
    revision: str
    blobs: list[str]  # digests of the blobs whose bytes are files in the blob folder
    database: dict[str, Any] = field(default_factory=dict)  # manifest facts of the copy


def _ignore(step: str, count: int) -> None:
    """No progress wanted."""


# --- Backup -----------------------------------------------------------------------------------


def backup_totals(db: Database) -> dict[str, int]:
    """How long each backup step is, as far as the live database tells (for progress bars)."""
    if db.dialect == "sqlite":
        path = _sqlite_path(db)
        if not path.exists():
            return {}
        with closing(_sqlite_reader(path)) as conn:
            pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
        return {PAGES: pages, INTEGRITY: 1, CHECKSUMS: set_files.chunks(path.stat().st_size)}
    with db.engine.connect() as conn:
        tables = conn.execute(text(_PG_TABLE_COUNT)).scalar_one()
    return {TABLES: int(tables)}


def take_backup(
    db: Database, to: Path, *, advance: Advance = _ignore, step_pages: int = STEP_PAGES
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
            "createdAt": _iso(created),
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
    source_path = _sqlite_path(db)
    if not source_path.exists():
        raise BackupError(
            "no_database", f"there is no database at {source_path}: check CREWBOARD_DATA_DIR"
        )
    target = work / SQLITE_FILE
    with closing(_sqlite_reader(source_path)) as source, closing(sqlite3.connect(target)) as copy:
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
        _check_sqlite_integrity(copy, "the copy")
        advance(INTEGRITY, 1)
        revision = _sqlite_revision(copy)
        if revision is None:
            raise BackupError(
                "no_schema",
                f"the database at {source_path} holds no Crewboard schema: nothing to back up",
            )
        blobs = _sqlite_folder_blobs(copy)
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


# --- Restore ----------------------------------------------------------------------------------


Whole = Annotated[StrictInt, Field(ge=0, le=2**63 - 1)]


class _File(BaseModel):
    """One file of the set as the manifest lists it."""

    model_config = ConfigDict(extra="forbid")

    path: StrictStr
    size: Whole
    sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]


class _DatabaseFacts(BaseModel):
    """What the manifest says of the database copy (the facts differ by database kind)."""

    model_config = ConfigDict(extra="allow")

    path: StrictStr
    tables: Annotated[StrictInt, Field(ge=0, le=2**31 - 1)] | None = None
    pages: Whole | None = None
    pgDump: StrictStr | None = None  # noqa: N815 - the manifest's own name
    serverMajor: StrictInt | None = None  # noqa: N815


class _Manifest(BaseModel):
    """A backup set's manifest, typed: a value of another type is refused before it is used."""

    model_config = ConfigDict(extra="allow")

    format: StrictStr
    formatVersion: StrictInt  # noqa: N815 - the manifest's own names
    crewboardVersion: StrictStr  # noqa: N815
    schemaRevision: StrictStr  # noqa: N815
    dialect: StrictStr
    createdAt: StrictStr  # noqa: N815
    database: _DatabaseFacts
    blobFolder: StrictBool = False  # noqa: N815
    missingBlobs: list[StrictStr] = Field(default_factory=list)  # noqa: N815
    files: list[_File]


def read_manifest(source: Path) -> dict[str, Any]:
    """The set's manifest, its shape and every value's type checked.

    Raises:
        BackupError: `source` is not a Crewboard backup set this version can read.
    """
    path = source / MANIFEST
    try:
        manifest = parse_json(path.read_bytes())
    except (OSError, BadJson, UnicodeDecodeError) as error:
        reason = error.message if isinstance(error, BadJson) else str(error)
        raise BackupError(
            "not_a_backup", f"{source} is not a backup set: cannot read {MANIFEST} ({reason})"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError("not_a_backup", f"{path} is not a Crewboard backup manifest")
    if manifest.get("formatVersion") != FORMAT_VERSION:
        raise BackupError(
            "format_too_new",
            f"{source} is in backup format {manifest.get('formatVersion')!r}; this version reads "
            f"format {FORMAT_VERSION}: restore it with the Crewboard version that made it "
            f"({manifest.get('crewboardVersion')!r}) or newer",
        )
    try:
        typed = _Manifest.model_validate(manifest)
    except ModelError as error:
        place, problem = first_problem(error)
        raise BackupError("not_a_backup", f"{path} is damaged: {place}: {problem}") from None
    for entry in typed.files:
        if entry.path not in (SQLITE_FILE, POSTGRES_FILE) and not _BLOB_PATH.fullmatch(entry.path):
            raise BackupError("not_a_backup", f"{path} names an unexpected file {entry.path!r}")
    if typed.database.path not in (SQLITE_FILE, POSTGRES_FILE):
        raise BackupError(
            "not_a_backup", f"{path} names an unexpected database file {typed.database.path!r}"
        )
    return typed.model_dump(exclude_none=True)


def restore_totals(source: Path) -> dict[str, int]:
    """How long each restore step is (for progress bars); empty when the set is unreadable."""
    try:
        manifest = read_manifest(source)
    except BackupError:
        return {}
    files = manifest["files"]
    totals = {CHECKING: sum(set_files.chunks(int(f["size"])) for f in files)}
    blobs = sum(1 for f in files if f["path"].startswith(f"{BLOB_FOLDER}/"))
    if blobs:
        totals[BLOB_FILES] = blobs
    if "tables" in manifest["database"]:
        totals[TABLES] = manifest["database"]["tables"]
    else:
        totals[INTEGRITY] = 1
    return totals


def restore_backup(
    db: Database, source: Path, *, force: bool = False, advance: Advance = _ignore
) -> Restored:
    """Restore the backup set at `source` into `db` (the server stopped), then migrate it.

    Raises:
        BackupError: the set does not fit this server (another database kind, a newer schema,
            blob files and no blob folder), a file's checksum differs, the database is in use
            or holds projects (without `force`), or the database tool failed.
    """
    started = time.monotonic()
    manifest = read_manifest(source)
    _check_fits(db, manifest)
    db.dispose()  # this process's own idle connections would count as "in use"
    _check_not_in_use(db)
    replaced = _project_count(db) > 0
    if replaced and not force:
        raise BackupError(
            "not_empty",
            f"the database {pg_tools.shown(db.url)} already holds projects: restoring replaces "
            "everything in it; pass --force to do so (take a backup of it first)",
        )
    if db.dialect == "sqlite":
        copied, present = _restore_sqlite(db, source, manifest, advance)
    else:
        copied, present = _restore_postgres(db, source, manifest, advance)
    db.dispose()
    _before, after = migrate.upgrade(db)
    rebuilt = migrate.repair_search_index(db)
    db.dispose()
    return Restored(
        source, manifest, replaced, after, copied, present, rebuilt, time.monotonic() - started
    )


def _check_fits(db: Database, manifest: dict[str, Any]) -> None:
    dialect = manifest.get("dialect")
    if dialect != db.dialect:
        raise BackupError(
            "dialect_mismatch",
            f"this backup is of a {dialect} database and the server is configured for "
            f"{db.dialect}: restore it on a {dialect} server, and move projects between "
            "databases with `crewboard export` and `crewboard import`",
        )
    revision = manifest.get("schemaRevision")
    if revision not in migrate.known_revisions():
        raise BackupError(
            "schema_too_new",
            f"this backup's schema revision {revision} is newer than this version of "
            f"Crewboard ({__version__}, schema {migrate.head_revision()}) knows: restore it "
            f"with Crewboard {manifest.get('crewboardVersion')} or newer",
        )
    blob_files = any(f["path"].startswith(f"{BLOB_FOLDER}/") for f in manifest["files"])
    if blob_files and db.blob_dir is None:
        raise BackupError(
            "no_blob_folder",
            "this backup holds blob files (the server it came from kept them in "
            "CREWBOARD_BLOB_DIR): set CREWBOARD_BLOB_DIR to the folder they should go to",
        )


def _check_not_in_use(db: Database) -> None:
    if db.dialect == "sqlite":
        path = _sqlite_path(db)
        if path.exists():
            _checkpoint_alone(path)
        return
    with db.engine.connect() as conn:
        others = conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ).scalar_one()
    db.dispose()
    if others:
        raise BackupError(
            "in_use",
            f"{others} other connection(s) are open to {pg_tools.shown(db.url)}: restore is offline; "
            "stop every `crewboard serve` node (and anything else connected) first",
        )


def _checkpoint_alone(path: Path) -> None:
    """Take the SQLite database's exclusive lock, fold its WAL into the file, and let go: the
    last connection closing removes the WAL. Refuses when another connection has it open."""
    in_use = BackupError(
        "in_use",
        f"the database {path} is open in another process: restore is offline; stop "
        "`crewboard serve` first",
    )
    conn = sqlite3.connect(path, isolation_level=None, timeout=IN_USE_WAIT_S)
    try:
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("COMMIT")
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    except sqlite3.OperationalError as error:
        raise in_use from error
    finally:
        conn.close()
    wal = path.with_name(path.name + "-wal")
    if busy or (wal.exists() and wal.stat().st_size > 0):
        raise in_use


def _project_count(db: Database) -> int:
    if db.dialect == "sqlite" and not _sqlite_path(db).exists():
        return 0
    with db.engine.connect() as conn:
        if db.dialect == "sqlite":
            exists = conn.execute(
                text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'projects'")
            ).first()
        else:
            exists = conn.execute(text("SELECT to_regclass('projects')")).scalar()
        count = conn.execute(text("SELECT count(*) FROM projects")).scalar_one() if exists else 0
    db.dispose()
    return int(count)


def _restore_sqlite(
    db: Database, source: Path, manifest: dict[str, Any], advance: Advance
) -> tuple[int, int]:
    target = _sqlite_path(db)
    entry = _file_entry(manifest, SQLITE_FILE)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.restore-{uuid.uuid4().hex[:8]}")
    try:
        # Copying checks the database file's sha256; the blob files are checked in place.
        _size, sha256 = set_files.copy_hashing(source / SQLITE_FILE, temporary, CHECKING, advance)
        set_files.expect(entry, sha256)
        set_files.verify(source, CHECKING, _blob_entries(manifest), advance)
        with closing(sqlite3.connect(temporary, isolation_level=None)) as copy:
            advance(INTEGRITY, 0)
            _check_sqlite_integrity(copy, str(source / SQLITE_FILE))
            advance(INTEGRITY, 1)
            found = _sqlite_revision(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
        if found != manifest["schemaRevision"]:
            raise BackupError(
                "damaged",
                f"{source / SQLITE_FILE} is at schema {found}, its manifest says "
                f"{manifest['schemaRevision']}: the set is damaged",
            )
        copied, present = _restore_blob_files(db.blob_dir, source, manifest, advance)
        set_files.fsync(temporary)
        if target.exists():
            _checkpoint_alone(target)  # again, right before the swap
        for stale in (target.name + "-wal", target.name + "-shm", target.name + "-journal"):
            target.with_name(stale).unlink(missing_ok=True)
        temporary.replace(target)
        set_files.fsync_dir(target.parent)
    finally:
        temporary.unlink(missing_ok=True)
    return copied, present


def _restore_postgres(
    db: Database, source: Path, manifest: dict[str, Any], advance: Advance
) -> tuple[int, int]:
    pg_restore = pg_tools.tool("pg_restore")
    _version, major = pg_tools.tool_version(pg_restore)
    dumped = str(manifest["database"].get("pgDump", ""))
    dumped_major = pg_tools.major_of(dumped)
    if major < dumped_major:
        raise BackupError(
            "tool_too_old",
            f"this backup was made by {dumped}, and {pg_restore} is PostgreSQL {major}'s: "
            f"install postgresql-client-{dumped_major} (or newer) and put its pg_restore "
            "first on PATH",
        )
    set_files.verify(source, CHECKING, manifest["files"], advance)
    copied, present = _restore_blob_files(db.blob_dir, source, manifest, advance)
    current = migrate.current_revision(db)
    if current not in (None, manifest["schemaRevision"]) or (current is None and _has_tables(db)):
        # `pg_restore --clean` drops only what the dump holds; tables of another schema
        # revision would stay and trip the migrations, so clear the schema first.
        _clear_postgres(db)
    db.dispose()
    pg_tools.run(
        [
            pg_restore,
            "--clean",
            "--if-exists",
            "--no-owner",
            "--no-privileges",
            "--single-transaction",
            "--no-password",
            "--verbose",
            f"--dbname={pg_tools.libpq(db.url)}",
            str(source / POSTGRES_FILE),
        ],
        db.url,
        _RESTORED,
        TABLES,
        advance,
    )
    return copied, present


def _has_tables(db: Database) -> bool:
    with db.engine.connect() as conn:
        found = conn.execute(
            text("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()")
        ).scalar_one()
    return bool(found)


def _clear_postgres(db: Database) -> None:
    """Drop every table, view, sequence and function of the current schema, in one go."""
    queries = {
        "TABLE": "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema()",
        "VIEW": "SELECT quote_ident(viewname) FROM pg_views WHERE schemaname = current_schema()",
        "SEQUENCE": "SELECT quote_ident(sequencename) FROM pg_sequences "
        "WHERE schemaname = current_schema()",
        "FUNCTION": "SELECT p.oid::regprocedure::text FROM pg_proc p "
        "WHERE p.pronamespace = current_schema()::regnamespace",
    }
    with db.engine.connect() as conn, conn.begin():
        for kind in ("VIEW", "TABLE", "SEQUENCE", "FUNCTION"):
            for (name,) in conn.execute(text(queries[kind])).all():
                conn.execute(text(f"DROP {kind} IF EXISTS {name} CASCADE"))


def _restore_blob_files(
    folder: Path | None, source: Path, manifest: dict[str, Any], advance: Advance
) -> tuple[int, int]:
    """Copy the set's blob files into the blob folder; a file already there stays as it is
    (it holds the same bytes: its name is their digest). Counts copied and already there."""
    copied = present = 0
    entries = _blob_entries(manifest)
    if folder is None:  # _check_fits refused a set with blob files and no folder
        return copied, present
    for entry in entries:
        target = folder / entry["path"].removeprefix(f"{BLOB_FOLDER}/")
        if target.exists():
            present += 1
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            incoming = target.with_name(f".incoming-{uuid.uuid4().hex[:8]}")
            try:
                set_files.copy_hashing(source / entry["path"], incoming)
                set_files.fsync(incoming)
                incoming.replace(target)
            finally:
                incoming.unlink(missing_ok=True)
            copied += 1
        advance(BLOB_FILES, 1)
    return copied, present


# --- Shared pieces ----------------------------------------------------------------------------


def _sqlite_path(db: Database) -> Path:
    database = db.url.database
    if not database or database == ":memory:":
        raise BackupError("unsupported_database", "an in-memory SQLite database has no file")
    return Path(database)


def _sqlite_reader(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)


def _check_sqlite_integrity(conn: sqlite3.Connection, what: str) -> None:
    problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
    if problems != ["ok"]:
        raise BackupError(
            "integrity", f"{what} fails SQLite's integrity check: {'; '.join(problems[:5])}"
        )


def _sqlite_revision(conn: sqlite3.Connection) -> str | None:
    if not _sqlite_has_table(conn, "alembic_version"):
        return None
    row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return None if row is None else str(row[0])


def _sqlite_folder_blobs(conn: sqlite3.Connection) -> list[str]:
    if not _sqlite_has_table(conn, "blobs"):
        return []
    return [str(row[0]) for row in conn.execute(_FOLDER_BLOBS)]


def _sqlite_has_table(conn: sqlite3.Connection, name: str) -> bool:
    query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    return conn.execute(query, (name,)).fetchone() is not None


def _file_entry(manifest: dict[str, Any], path: str) -> dict[str, Any]:
    for entry in manifest["files"]:
        if entry["path"] == path:
            return dict(entry)
    raise BackupError("damaged", f"the manifest lists no {path}")


def _blob_entries(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in manifest["files"] if f["path"].startswith(f"{BLOB_FOLDER}/")]


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
