"""Restoring a backup set (`crewboard restore`; the sets are described in `storage/backup.py`).

Restore is an offline operation (the server stopped): it refuses a set of the other database
kind, of a schema newer than this version knows, or with a file whose checksum differs, and a
database that already holds projects unless forced; then it replaces the database (SQLite: a
checked copy renamed over the file; PostgreSQL: `pg_restore --single-transaction`) and
migrates it to this version's head.
"""

from __future__ import annotations

import re
import sqlite3
import time
import uuid
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic import ValidationError as ModelError
from sqlalchemy import text

from crewboard import __version__
from crewboard.jsonbody import BadJson, first_problem, parse_json
from crewboard.storage import backup_files as set_files
from crewboard.storage import migrate, pg_tools
from crewboard.storage.backup import (
    BLOB_FILES,
    BLOB_FOLDER,
    CHECKING,
    FORMAT,
    FORMAT_VERSION,
    INTEGRITY,
    MANIFEST,
    POSTGRES_FILE,
    SQLITE_FILE,
    TABLES,
    Advance,
    blob_entries,
    check_sqlite_integrity,
    file_entry,
    ignore_progress,
    sqlite_path,
    sqlite_revision,
)
from crewboard.storage.database import Database
from crewboard.storage.pg_tools import BackupError

IN_USE_WAIT_S = 2.0  # how long restore waits for another connection's lock before refusing

_BLOB_PATH = re.compile(rf"{BLOB_FOLDER}/[0-9a-f]{{2}}/[0-9a-f]{{62}}")
_RESTORED = re.compile(r'processing data for table "')


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
    db: Database, source: Path, *, force: bool = False, advance: Advance = ignore_progress
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
        path = sqlite_path(db)
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
    if db.dialect == "sqlite" and not sqlite_path(db).exists():
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
    target = sqlite_path(db)
    entry = file_entry(manifest, SQLITE_FILE)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.restore-{uuid.uuid4().hex[:8]}")
    try:
        # Copying checks the database file's sha256; the blob files are checked in place.
        _size, sha256 = set_files.copy_hashing(source / SQLITE_FILE, temporary, CHECKING, advance)
        set_files.expect(entry, sha256)
        set_files.verify(source, CHECKING, blob_entries(manifest), advance)
        with closing(sqlite3.connect(temporary, isolation_level=None)) as copy:
            advance(INTEGRITY, 0)
            check_sqlite_integrity(copy, str(source / SQLITE_FILE))
            advance(INTEGRITY, 1)
            found = sqlite_revision(copy)
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
    entries = blob_entries(manifest)
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
