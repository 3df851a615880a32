"""`crewboard backup` and `crewboard restore` as an operator runs them: the real command in its
own process, on a fresh data folder, its `--json` output read as a script would."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import URL

from crewboard.services.projects.bootstrap import initialise
from crewboard.storage import backup, migrate
from crewboard.storage.database import Database
from tests.conftest import ONLY_SQLITE, POSTGRESQL_IN_THE_SLOW_RUN
from tests.support.cli import crewboard_env, on_a_terminal, run_crewboard
from tests.support.databases import PostgresDatabases, SqliteDatabases
from tests.support.factories import count_rows

# Every step a bar can show (storage/backup.py names them).
BAR_LABELS = (
    backup.PAGES, backup.TABLES, backup.BLOB_FILES, backup.CHECKSUMS, backup.CHECKING,
    backup.INTEGRITY,
)  # fmt: skip


def _env(url: URL, data_dir: Path) -> dict[str, str]:
    return crewboard_env(
        data_dir,
        database_url=url.render_as_string(hide_password=False),
        blob_dir=str(data_dir / "blobs"),
    )


@pytest.fixture
def live(database_url: URL, tmp_path: Path) -> dict[str, str]:
    """A fresh instance (owner, DEMO project, a blob file) and its environment."""
    data_dir = tmp_path / "live"
    env = _env(database_url, data_dir)
    db = Database(database_url, blob_dir=data_dir / "blobs")
    try:
        migrate.upgrade(db)
        initialise(db, owner_email="owner@example.com")
        db.write(lambda uow: uow.blobs.put(b"an attachment's bytes"))
    finally:
        db.dispose()
    return env


@pytest.fixture
def fresh_url(backend: str, request: pytest.FixtureRequest) -> Iterator[URL]:
    """A second, empty database of the same kind: where the backup is restored."""
    if backend == "sqlite":
        sqlite: SqliteDatabases = request.getfixturevalue("sqlite_databases")
        yield sqlite.new_empty()
        return
    pg: PostgresDatabases = request.getfixturevalue("postgres_databases")
    url = pg.new_empty()
    yield url
    pg.drop(url)


# The PostgreSQL path of the engine is in tests/integration/test_backup.py; through the CLI it
# runs in the slow run.
@POSTGRESQL_IN_THE_SLOW_RUN
def test_backup_and_restore_print_their_json_and_no_progress_off_a_terminal(
    live: dict[str, str], fresh_url: URL, tmp_path: Path
) -> None:
    made = run_crewboard(live, "backup", "--to", str(tmp_path / "sets"), "--json")
    assert made.returncode == 0, made.stderr
    assert not any(label in made.stderr for label in BAR_LABELS), made.stderr
    summary = json.loads(made.stdout)
    assert set(summary) == {
        "path", "dialect", "schemaRevision", "crewboardVersion", "createdAt", "seconds",
        "files", "bytes", "database", "blobFiles", "blobBytes", "missingBlobs",
    }  # fmt: skip
    folder = Path(summary["path"])
    assert folder.parent == tmp_path / "sets"
    assert folder.name.startswith("crewboard-")
    assert summary["schemaRevision"] == migrate.head_revision()
    assert summary["files"] == 2
    assert summary["blobFiles"] == 1
    assert summary["missingBlobs"] == []
    assert (folder / summary["database"]["path"]).stat().st_size == summary["database"]["size"]
    assert sorted(p.name for p in (tmp_path / "sets").iterdir()) == [folder.name]

    target = _env(fresh_url, tmp_path / "restored")
    restored = run_crewboard(target, "restore", str(folder), "--json")
    assert restored.returncode == 0, restored.stderr
    assert not any(label in restored.stderr for label in BAR_LABELS), restored.stderr
    answer = json.loads(restored.stdout)
    assert answer["from"] == str(folder)
    assert answer["dialect"] == summary["dialect"]
    assert answer["migratedTo"] == migrate.head_revision()
    assert answer["blobFilesCopied"] == 1
    assert answer["replaced"] is False
    db = Database(fresh_url)
    try:
        assert count_rows(db, "projects") == 1
        assert count_rows(db, "users") == 1
    finally:
        db.dispose()

    again = run_crewboard(target, "restore", str(folder), "--json")
    assert again.returncode == 1
    error = json.loads(again.stderr)["error"]
    assert set(error) == {"code", "message", "details"}
    assert error["code"] == "NOT_EMPTY"
    assert again.stdout == ""


@ONLY_SQLITE
def test_backup_draws_progress_bars_on_a_terminal_and_says_what_it_made(
    live: dict[str, str], tmp_path: Path
) -> None:
    status, drawn, out = on_a_terminal(
        live, "backup", "--to", str(tmp_path / "sets"), only_stderr=True
    )
    assert status == 0, drawn
    assert backup.PAGES in drawn
    assert backup.INTEGRITY in drawn
    assert out.startswith("Backed up sqlite")
