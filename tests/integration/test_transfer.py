"""Export archives: a project holding one of everything goes out and comes back whole, on each
database and from SQLite to PostgreSQL and back; damaged and clashing archives are refused
naming what is wrong, and a refused or dry-run import leaves the server as it was."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import URL

from crewboard.contract.specs import present as spec_files
from crewboard.errors import AlreadyExists, NotFound, ValidationFailed
from crewboard.services.identity import users
from crewboard.services.specs.file_lookup import FileRef
from crewboard.services.transfer import archive, reading
from crewboard.storage import transfer
from crewboard.storage.database import Database
from tests.conftest import BACKENDS
from tests.support import task_reads as queries
from tests.support.databases import PostgresDatabases, SqliteDatabases
from tests.support.factories import count_rows, make_project, make_task, make_user
from tests.support.transfer_world import Everything, furnish_everything


def documents(path: Path) -> dict[str, bytes]:
    """Every document of an archive; the manifest without the moment it was written."""
    with zipfile.ZipFile(path) as zipped:
        found = {name: zipped.read(name) for name in zipped.namelist()}
    manifest = json.loads(found.pop("manifest.json"))
    manifest.pop("exportedAt")
    found["manifest.json"] = json.dumps(manifest, sort_keys=True).encode()
    return found


class Servers:
    """Fresh migrated databases of either backend, closed at the end of the module."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.request = request
        self.opened: list[Database] = []

    def new(self, backend: str) -> Database:
        if backend == "sqlite":
            sqlite: SqliteDatabases = self.request.getfixturevalue("sqlite_databases")
            url: URL = sqlite.new_migrated()
        else:
            pg: PostgresDatabases = self.request.getfixturevalue("postgres_databases")
            url = pg.new_migrated()
        db = Database(url)
        self.opened.append(db)
        return db

    def close(self) -> None:
        for db in self.opened:
            db.dispose()


@pytest.fixture(scope="module")
def servers(request: pytest.FixtureRequest) -> Iterator[Servers]:
    made = Servers(request)
    yield made
    made.close()


@pytest.fixture(scope="module", params=BACKENDS)
def source(
    request: pytest.FixtureRequest, servers: Servers, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Database, Everything, Path]:
    """A server of the backend holding one project with one of everything, and its export."""
    backend = str(request.param)
    db = servers.new(backend)
    world = furnish_everything(db)
    path = tmp_path_factory.mktemp(f"export-{backend}") / "move.zip"
    archive.export_projects(db, [world.key], path)
    return backend, db, world, path


def test_every_table_is_carried_or_left_behind_with_a_reason() -> None:
    assert transfer.unclassified_tables() == []


def test_the_archive_holds_one_of_everything(
    source: tuple[str, Database, Everything, Path],
) -> None:
    _, _, world, path = source
    manifest = json.loads(documents(path)["manifest.json"])
    counts = manifest["projects"][0]["documents"]
    for table in (
        "tasks", "task_events", "task_comments", "task_outputs", "task_questions", "task_links",
        "task_labels", "drafts", "memory_records", "memory_record_versions",
        "project_state_versions", "project_document_versions", "team_roles", "project_members",
        "spec_files", "spec_file_revisions", "spec_comment_threads", "spec_comments",
        "attachments", "artifacts", "artifact_revisions", "artifact_files", "handoffs",
        "handoff_action_items", "handoff_recipients", "spec_sessions", "inbox_messages",
        "repos", "task_repo_links", "task_repo_reports", "events",
    ):  # fmt: skip
        assert counts.get(table, 0) >= 1, table
    assert counts["spec_file_revisions"] == 2
    assert manifest["people"] == 2  # the owner and the member; never a password
    with zipfile.ZipFile(path) as zipped:
        people = json.loads(zipped.read("people.json"))
        assert {p["email"] for p in people} == {world.owner_email, world.member_email}
        assert all(set(p) == {"id", "email", "display_name", "created_at"} for p in people)
        blobs = [n for n in zipped.namelist() if n.startswith("blobs/")]
        assert len(blobs) == manifest["blobs"]["count"] >= 5
        assert not any("api_tokens" in n or "idempotency" in n for n in zipped.namelist())


@pytest.mark.parametrize("target", BACKENDS)
def test_a_round_trip_gives_the_same_documents(
    source: tuple[str, Database, Everything, Path],
    target: str,
    servers: Servers,
    tmp_path: Path,
) -> None:
    """export → import on an empty server → export: the same documents, byte for byte, on the
    same database and across (SQLite → PostgreSQL, PostgreSQL → SQLite)."""
    _, origin, world, path = source
    db = servers.new(target)
    report = archive.import_archive(db, path)
    assert report["projects"][0]["key"] == world.key
    assert sorted(report["people"]["created"]) == sorted([world.owner_email, world.member_email])
    again = tmp_path / "again.zip"
    archive.export_projects(db, [world.key], again)
    assert documents(again) == documents(path)
    # The project works on its new server: its tasks, the search index, its files' bytes,
    # the task counter the triggers keep.
    owner = users.person_actor(users.get_user_by_email(db, world.owner_email))
    found = queries.get_task(db, owner, task=world.task_id, include_context_pack=False, budget=None)
    assert isinstance(found, dict)
    assert found["task"]["blockedByTaskIds"] == [world.subtask_id]
    listed = queries.list_tasks(db, owner, project=world.key, workspace_id=None, q="Main")
    there = users.person_actor(users.get_user_by_email(origin, world.owner_email))
    before = queries.list_tasks(origin, there, project=world.key, workspace_id=None, q="Main")
    assert world.task_id in [t["id"] for t in listed.rows]
    assert listed.rows == before.rows
    _, content = spec_files.read_file_bytes(
        db, owner, project=world.key, ref=FileRef(file_id=world.file_id)
    )
    assert content.decode() == world.file_text
    with db.engine.connect() as conn:
        counted = conn.exec_driver_sql(
            "SELECT value FROM project_sequences WHERE name = 'task_count'"
        ).scalar_one()
    assert counted == count_rows(db, "tasks")


def test_a_round_trip_to_the_other_database_and_back(
    source: tuple[str, Database, Everything, Path], servers: Servers, tmp_path: Path
) -> None:
    """SQLite → PostgreSQL → SQLite, and PostgreSQL → SQLite → PostgreSQL."""
    backend, _, world, path = source
    other = "postgresql" if backend == "sqlite" else "sqlite"
    there = servers.new(other)
    archive.import_archive(there, path)
    middle = tmp_path / "middle.zip"
    archive.export_projects(there, [world.key], middle)
    back = servers.new(backend)
    archive.import_archive(back, middle)
    last = tmp_path / "last.zip"
    archive.export_projects(back, [world.key], last)
    assert documents(middle) == documents(path)
    assert documents(last) == documents(path)


def test_several_projects_travel_in_one_archive(
    source: tuple[str, Database, Everything, Path], servers: Servers, tmp_path: Path
) -> None:
    """Two projects of different owners in one archive land together; `--key` is refused
    for more than one; a project named twice is written once."""
    backend, origin, world, _ = source
    other = make_user(origin, f"other.{backend}@example.com")
    key = f"TWO{backend[:2].upper()}"
    make_project(origin, other, key)
    make_task(origin, other, key, "Second project's task")
    both = tmp_path / "both.zip"
    written = archive.export_projects(origin, [world.key, key, key.lower()], both)
    assert [p["key"] for p in written["projects"]] == [world.key, key]
    db = servers.new(backend)
    with pytest.raises(ValidationFailed, match="renames one project"):
        archive.import_archive(db, both, key="SOLO")
    landed = archive.import_archive(db, both)
    assert [p["key"] for p in landed["projects"]] == [world.key, key]
    assert other.email in landed["people"]["created"]
    again = tmp_path / "again.zip"
    archive.export_projects(db, [world.key, key], again)
    assert documents(again) == documents(both)


def test_a_second_import_is_refused_and_a_copy_takes_new_ids_and_a_key(
    source: tuple[str, Database, Everything, Path], tmp_path: Path
) -> None:
    """Into the server it came from: the same ids clash; with new ids and a key it lands as a
    copy beside the original, sharing its people, with task keys and links rewritten."""
    _, db, world, path = source
    before = count_rows(db, "tasks")
    with pytest.raises(AlreadyExists, match="already on this server"):
        archive.import_archive(db, path)
    with pytest.raises(AlreadyExists, match=f"key {world.key}"):
        archive.import_archive(db, path, new_ids=True)
    key = f"{world.key[:6]}C"
    with pytest.raises(ValidationFailed, match="already have an account") as refused:
        archive.import_archive(db, path, new_ids=True, key=key)
    assert sorted(refused.value.details["wouldMatch"]) == [world.member_email, world.owner_email]
    report = archive.import_archive(db, path, new_ids=True, key=key, match_people=True)
    copy = report["projects"][0]
    assert copy["key"] == key
    assert copy["id"] != world.project_id
    assert report["people"]["matched"]
    assert not report["people"]["created"]
    assert count_rows(db, "tasks") == before + copy["documents"]["tasks"]
    out = tmp_path / "copy.zip"
    archive.export_projects(db, [key], out)
    texts = b"".join(v for k, v in documents(out).items() if k.endswith(".jsonl"))
    assert world.task_id.encode() not in texts  # every id is new
    assert f'"{world.key}-'.encode() not in texts  # every task key is the new one
    assert f"/p/{world.key}/".encode() not in texts


def test_a_dry_run_reports_and_changes_nothing(
    source: tuple[str, Database, Everything, Path], servers: Servers
) -> None:
    backend, _, _, path = source
    db = servers.new(backend)
    report = archive.import_archive(db, path, dry_run=True)
    assert report["dryRun"] is True
    assert report["projects"][0]["documents"]["tasks"] >= 2
    assert count_rows(db, "projects") == 0
    assert count_rows(db, "users") == 0
    assert count_rows(db, "blobs") == 0


def test_people_are_matched_by_email_whatever_the_case(
    source: tuple[str, Database, Everything, Path], servers: Servers, tmp_path: Path
) -> None:
    backend, _, world, path = source
    db = servers.new(backend)
    here = make_user(db, world.owner_email)
    _, people = _entry(path, "people.json")
    shouting = people.replace(world.owner_email.encode(), world.owner_email.upper().encode())
    report = archive.import_archive(
        db, _rewrite(path, tmp_path / "a.zip", {"people.json": shouting}), match_people=True
    )
    assert report["people"]["matched"] == [world.owner_email]
    assert list(report["people"]["mapped"].values()) == [here.id]  # the old id names it now
    owner = users.person_actor(here)
    found = queries.get_task(db, owner, task=world.task_id, include_context_pack=False, budget=None)
    assert isinstance(found, dict)
    with db.engine.connect() as conn:
        stamps = conn.exec_driver_sql(
            f"SELECT created_by FROM tasks WHERE id = '{world.task_id}'"
        ).scalar_one()
    assert here.id in str(stamps)
    with pytest.raises(Exception, match="email or password"):
        users.authenticate_password(db, email=world.member_email, password="anything at all")


def _rewrite(path: Path, out: Path, change: dict[str, bytes | None]) -> Path:
    with zipfile.ZipFile(path) as zipped, zipfile.ZipFile(out, "w") as written:
        for name in zipped.namelist():
            data = change.get(name, zipped.read(name))
            if data is not None:
                written.writestr(name, data)
        for name, data in change.items():
            if name not in zipped.namelist() and data is not None:
                written.writestr(name, data)
    return out


def _entry(path: Path, suffix: str) -> tuple[str, bytes]:
    with zipfile.ZipFile(path) as zipped:
        name = next(n for n in zipped.namelist() if n.endswith(suffix))
        return name, zipped.read(name)


def test_damaged_archives_are_refused_naming_the_document(
    source: tuple[str, Database, Everything, Path], servers: Servers, tmp_path: Path
) -> None:
    backend, _, _, path = source
    db = servers.new(backend)
    tasks_name, tasks_doc = _entry(path, "/tasks.jsonl")
    blob_name, blob = _entry(path, next(iter(_blob_names(path))))
    manifest_name, manifest = "manifest.json", json.loads(_entry(path, "manifest.json")[1])
    lines = tasks_doc.splitlines(keepends=True)
    cases: list[tuple[dict[str, bytes | None], str]] = [
        ({tasks_name: b"".join(lines[:-1])}, f"{tasks_name}: holds {len(lines) - 1} rows"),
        ({tasks_name: lines[0] + b"{not json\n" + b"".join(lines[2:])}, f"{tasks_name} line 2"),
        ({tasks_name: b'{"id": "tsk_x", "secret": 1}\n' + b"".join(lines[1:])}, "secret"),
        ({tasks_name: b"[1, 2]\n" + b"".join(lines[1:])}, "must be a JSON object"),
        ({blob_name: blob + b"!"}, f"{blob_name}: does not match its name"),
        ({blob_name: None}, f"{blob_name}: missing"),
        ({manifest_name: json.dumps({**manifest, "version": 9}).encode()}, "version"),
        ({manifest_name: json.dumps({**manifest, "format": "zip"}).encode()}, "format"),
        ({manifest_name: json.dumps({**manifest, "schemaRevision": "0001"}).encode()}, "schema"),
        ({"people.json": b'[{"id": "usr_1"}]'}, r"people.json\[0\]"),
        ({manifest_name: None}, "manifest.json: missing"),
    ]
    for number, (change, message) in enumerate(cases):
        damaged = _rewrite(path, tmp_path / f"damaged-{number}.zip", change)
        with pytest.raises(ValidationFailed, match=message):
            archive.import_archive(db, damaged)
    not_a_zip = tmp_path / "notes.txt"
    not_a_zip.write_text("hello")
    with pytest.raises(ValidationFailed, match="not a Crewboard export archive"):
        archive.import_archive(db, not_a_zip)
    assert count_rows(db, "projects") == 0  # nothing half-imported
    assert count_rows(db, "users") == 0


def _blob_names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as zipped:
        return [n for n in zipped.namelist() if n.startswith("blobs/")]


def test_unknown_projects_and_bad_options_are_refused(
    source: tuple[str, Database, Everything, Path], tmp_path: Path
) -> None:
    _, db, world, path = source
    with pytest.raises(NotFound, match=f"Projects here: .*{world.key}"):
        archive.export_projects(db, ["NOPE"], tmp_path / "x.zip")
    assert not (tmp_path / "x.zip").exists()
    assert not list(tmp_path.iterdir())  # no half-written archive left behind
    with pytest.raises(ValidationFailed, match="key"):
        archive.import_archive(db, path, new_ids=True, key="not a key!")
    with pytest.raises(NotFound, match="workspace"):
        archive.import_archive(db, path, new_ids=True, key="WSX", workspace_id="wsp_nothere")


def test_oversized_entries_are_refused_before_they_are_read_whole(
    source: tuple[str, Database, Everything, Path],
    servers: Servers,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A document line or a blob over the limits (64 MiB a line, 1 GiB a file; lowered here so
    the archive stays small) is refused naming it, with nothing written."""
    backend, _, _, path = source
    db = servers.new(backend)
    tasks_name, tasks_doc = _entry(path, "/tasks.jsonl")
    first, *rest = tasks_doc.splitlines(keepends=True)
    long_row = {**json.loads(first), "description": "x" * 200_000}
    long_doc = (json.dumps(long_row) + "\n").encode() + b"".join(rest)
    padded = _rewrite(path, tmp_path / "long.zip", {tasks_name: long_doc})
    monkeypatch.setattr(reading, "MAX_LINE", 100_000)
    with pytest.raises(ValidationFailed, match=f"{tasks_name} line 1: is too long"):
        archive.import_archive(db, padded)
    monkeypatch.setattr(reading, "MAX_LINE", 64 * 1024 * 1024)
    monkeypatch.setattr(reading, "MAX_BLOB", 16)
    with pytest.raises(ValidationFailed, match=r"blobs/[0-9a-f]{64}: is larger than any file"):
        archive.import_archive(db, path)
    assert count_rows(db, "projects") == 0
    assert count_rows(db, "users") == 0
