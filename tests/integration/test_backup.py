"""Backup sets of a live database and their restore, on SQLite and PostgreSQL.

The main test takes a backup while four writers create tasks through the real service and
restores it into a fresh database: it must pass the integrity checks and hold every task
whose creation was acknowledged before the backup began. The others are one per refusal.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import URL

from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage import backup, migrate, restore
from crewboard.storage.database import Database
from tests.conftest import ONLY_POSTGRESQL
from tests.support.databases import PostgresDatabases, SqliteDatabases
from tests.support.factories import count_rows, make_project, make_user

WRITERS = 4
WAIT_S = 30  # bound on every wait for the writers


@pytest.fixture
def source(database_url: URL, tmp_path: Path) -> Iterator[Database]:
    """The live database: migrated, blob bytes in a folder, one project."""
    db = Database(database_url, blob_dir=tmp_path / "blobs")
    make_project(db, make_user(db, "owner@example.com"), "CRW")
    yield db
    db.dispose()


@pytest.fixture
def target(empty_database_url: URL, tmp_path: Path) -> Iterator[Database]:
    """A fresh, empty database of the same kind to restore into."""
    db = Database(empty_database_url, blob_dir=tmp_path / "restored-blobs")
    yield db
    db.dispose()


class Writers:
    """Threads creating tasks until stopped; which creations were acknowledged, in order."""

    def __init__(self, db: Database) -> None:
        owner = db.read(lambda uow: uow.users.get_by_email("owner@example.com"))
        assert owner is not None
        self.db, self.actor = db, person_actor(owner)
        self.acknowledged: list[tuple[int, str]] = []  # (number, id)
        self.failures: list[BaseException] = []
        self.changed = threading.Condition()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._write, args=(i,)) for i in range(WRITERS)]

    def _write(self, index: int) -> None:
        count = 0
        while not self.stop.is_set():
            count += 1
            try:
                task = tasks.create_task(
                    self.db,
                    self.actor,
                    project="CRW",
                    workspace_id=None,
                    idempotency_key=f"writer-{index}-{count}",
                    title=f"Written by {index}, number {count}",
                    description="words " * 200,
                ).body["task"]
            except BaseException as error:
                self.failures.append(error)
                return
            with self.changed:
                self.acknowledged.append((int(task["number"]), str(task["id"])))
                self.changed.notify_all()

    def wait_for(self, count: int) -> None:
        with self.changed:
            reached = self.changed.wait_for(
                lambda: len(self.acknowledged) >= count or bool(self.failures), timeout=WAIT_S
            )
        assert reached, f"the writers acknowledged {len(self.acknowledged)} of {count} writes"
        assert not self.failures, self.failures

    def so_far(self) -> list[tuple[int, str]]:
        with self.changed:
            return list(self.acknowledged)

    def __enter__(self) -> Writers:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=WAIT_S)


def test_backup_under_four_writers_restores_every_write_acknowledged_before_it(
    source: Database, target: Database, tmp_path: Path
) -> None:
    blobs = [f"attachment {n}".encode() * 100 for n in range(3)]
    digests = [source.write(lambda uow, data=data: uow.blobs.put(data)) for data in blobs]
    during: list[int] = []

    with Writers(source) as writers:
        writers.wait_for(40)
        before = writers.so_far()

        def advance(_step: str, _count: int) -> None:
            if not during:  # the first step is copied: let the writers go on meanwhile
                writers.wait_for(len(before) + 12)
                during.append(len(writers.so_far()))

        made = backup.take_backup(source, tmp_path / "sets", advance=advance, step_pages=8)
        after = writers.so_far()
    assert not writers.failures, writers.failures
    assert during, "the backup reported no progress"
    assert len(after) > len(before) + 10  # the writers kept writing while it was taken

    restored = restore.restore_backup(target, made.path)

    assert restored.migrated_to == migrate.head_revision()
    assert restored.blob_files_copied == len(blobs)
    _assert_integrity(target)
    with target.engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT id, number FROM tasks").all()
    ids = {row.id for row in rows}
    missing = [task_id for _number, task_id in before if task_id not in ids]
    assert missing == [], f"{len(missing)} acknowledged tasks are not in the restored database"
    numbers = [row.number for row in rows]
    assert len(numbers) == len(set(numbers))
    assert set(numbers) == set(range(1, len(numbers) + 1))  # a snapshot: no gaps, no strays
    assert len(rows) < len(after)  # and not the writes that came after it
    for digest, data in zip(digests, blobs, strict=True):
        assert target.read(lambda uow, d=digest: uow.blobs.read(d)) == data
    manifest = json.loads((made.path / backup.MANIFEST).read_text())
    assert manifest["dialect"] == source.dialect
    assert manifest["schemaRevision"] == migrate.head_revision()
    assert len(manifest["files"]) == 1 + len(blobs)


def _assert_integrity(db: Database) -> None:
    with db.engine.connect() as conn:
        if db.dialect == "sqlite":
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalars().all() == ["ok"]
            assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
            return
        orphans = {
            name: conn.exec_driver_sql(_orphan_count(child, parent, columns, keys)).scalar_one()
            for name, child, parent, columns, keys in conn.exec_driver_sql(_FOREIGN_KEYS)
        }
    assert len(orphans) > 10  # the main tables' keys were there to check
    assert {name: n for name, n in orphans.items() if n} == {}


_FOREIGN_KEYS = """
SELECT c.conname, c.conrelid::regclass::text, c.confrelid::regclass::text,
  array(SELECT quote_ident(a.attname) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
  array(SELECT quote_ident(a.attname) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint c
WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
"""


def _orphan_count(child: str, parent: str, columns: list[str], keys: list[str]) -> str:
    present = " AND ".join(f"x.{c} IS NOT NULL" for c in columns)
    match = " AND ".join(f"p.{k} = x.{c}" for c, k in zip(columns, keys, strict=True))
    return (
        f"SELECT count(*) FROM {child} x WHERE {present} "
        f"AND NOT EXISTS (SELECT 1 FROM {parent} p WHERE {match})"
    )


def _refusal(db: Database, source_set: Path, reason: str, **options: Any) -> None:
    with pytest.raises(backup.BackupError) as refused:
        restore.restore_backup(db, source_set, **options)
    assert refused.value.reason == reason
    assert refused.value.message


@pytest.mark.parametrize("damaged", ["database", "blob"])
def test_restore_refuses_a_file_that_differs_from_its_checksum_and_changes_nothing(
    source: Database, target: Database, tmp_path: Path, damaged: str
) -> None:
    source.write(lambda uow: uow.blobs.put(b"the bytes of an attachment"))
    made = backup.take_backup(source, tmp_path / "sets")
    manifest = json.loads((made.path / backup.MANIFEST).read_text())
    blob = next(f["path"] for f in manifest["files"] if f["path"].startswith("blobs/"))
    path = made.path / (manifest["database"]["path"] if damaged == "database" else blob)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))

    _refusal(target, made.path, "damaged")

    assert migrate.current_revision(target) is None
    assert not (tmp_path / "restored-blobs").exists()


def test_restore_refuses_a_database_holding_projects_unless_forced(
    source: Database, tmp_path: Path
) -> None:
    made = backup.take_backup(source, tmp_path / "sets")
    owner = source.read(lambda uow: uow.users.get_by_email("owner@example.com"))
    assert owner is not None
    make_project(source, owner, "NEW")  # made after the backup

    _refusal(source, made.path, "not_empty")
    assert count_rows(source, "projects") == 2

    restored = restore.restore_backup(source, made.path, force=True)
    assert restored.replaced is True
    assert count_rows(source, "projects") == 1


def test_restore_refuses_a_schema_newer_than_this_version(
    source: Database, target: Database, tmp_path: Path
) -> None:
    with source.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    made = backup.take_backup(source, tmp_path / "sets")
    assert made.manifest["schemaRevision"] == "9999_from_the_future"

    _refusal(target, made.path, "schema_too_new")
    assert migrate.current_revision(target) is None


def test_restore_refuses_a_set_with_blob_files_when_the_server_has_no_blob_folder(
    source: Database, empty_database_url: URL, tmp_path: Path
) -> None:
    source.write(lambda uow: uow.blobs.put(b"kept in the folder"))
    made = backup.take_backup(source, tmp_path / "sets")
    without_folder = Database(empty_database_url)
    try:
        _refusal(without_folder, made.path, "no_blob_folder")
    finally:
        without_folder.dispose()


def test_backup_lists_a_blob_whose_file_is_gone_and_keeps_the_rest(
    source: Database, tmp_path: Path
) -> None:
    kept = source.write(lambda uow: uow.blobs.put(b"still there"))
    lost = source.write(lambda uow: uow.blobs.put(b"deleted by hand"))
    (tmp_path / "blobs" / lost[:2] / lost[2:]).unlink()

    made = backup.take_backup(source, tmp_path / "sets")

    assert made.manifest["missingBlobs"] == [lost]
    assert (made.path / "blobs" / kept[:2] / kept[2:]).read_bytes() == b"still there"


def test_restore_refuses_while_another_connection_has_the_database_open(
    source: Database, tmp_path: Path, database_url: URL
) -> None:
    made = backup.take_backup(source, tmp_path / "sets")
    if source.dialect == "sqlite":
        assert database_url.database is not None
        other: Any = sqlite3.connect(database_url.database)
        other.execute("SELECT count(*) FROM projects").fetchone()
    else:
        libpq = database_url.set(drivername="postgresql").render_as_string(hide_password=False)
        other = psycopg.connect(libpq)
    try:
        _refusal(source, made.path, "in_use", force=True)
    finally:
        other.close()


def test_backup_refuses_a_database_with_no_schema(target: Database, tmp_path: Path) -> None:
    if target.dialect == "sqlite":  # an empty file: a database, but not Crewboard's
        assert target.url.database is not None
        sqlite3.connect(target.url.database).close()
    with pytest.raises(backup.BackupError) as refused:
        backup.take_backup(target, tmp_path / "sets")
    assert refused.value.reason == "no_schema"
    assert list((tmp_path / "sets").iterdir()) == []  # no half-written set left behind


@ONLY_POSTGRESQL
def test_restore_refuses_a_set_of_the_other_database_kind(
    source: Database, tmp_path: Path, sqlite_databases: SqliteDatabases
) -> None:
    postgres_set = backup.take_backup(source, tmp_path / "pg").path
    sqlite_db = Database(sqlite_databases.new_migrated())
    try:
        make_project(sqlite_db, make_user(sqlite_db, "owner@example.com"), "CRW")
        sqlite_set = backup.take_backup(sqlite_db, tmp_path / "sqlite").path
        _refusal(sqlite_db, postgres_set, "dialect_mismatch", force=True)
    finally:
        sqlite_db.dispose()
    _refusal(source, sqlite_set, "dialect_mismatch", force=True)
    assert count_rows(source, "projects") == 1


@ONLY_POSTGRESQL
def test_restore_over_another_schema_revision_clears_the_database_first(
    source: Database, tmp_path: Path, postgres_databases: PostgresDatabases
) -> None:
    made = backup.take_backup(source, tmp_path / "sets")
    url = postgres_databases.new_migrated()
    other = Database(url)
    try:
        with other.engine.begin() as conn:  # a database left at another revision, no projects
            conn.exec_driver_sql("CREATE TABLE left_behind (id integer)")
            conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0021_oauth'")

        restore.restore_backup(other, made.path)

        assert count_rows(other, "projects") == 1
        assert migrate.current_revision(other) == migrate.head_revision()
        with other.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT to_regclass('left_behind')").scalar() is None
        assert migrate.schema_differences(other) == []
    finally:
        other.dispose()
        postgres_databases.drop(url)
