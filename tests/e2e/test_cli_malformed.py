"""Malformed export archives and backup manifests, as `crewboard import` and `crewboard
restore` read them: each refused with an error naming what is wrong, in the `--json` shape
({"error": {code, message, details}}), and never a traceback.

The many cases run in-process (click's runner with exceptions not caught, so a crash fails the
test) on each backend; the last test runs the real command as its own process and reads its
standard error for a traceback."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy.engine import URL

from crewboard.cli.main import cli
from crewboard.contract.projects import present
from crewboard.services.identity.users import get_user_by_email, person_actor
from crewboard.services.projects.bootstrap import initialise
from crewboard.services.transfer import archive
from crewboard.storage import migrate
from crewboard.storage.database import Database
from tests.support.cli import RunCli, crewboard_env, run_crewboard
from tests.support.factories import count_rows

OWNER = "owner@example.com"


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export of a first start's DEMO project with a team role (SQLite; any server of the
    same schema reads it)."""
    folder = tmp_path_factory.mktemp("demo")
    db = Database(f"sqlite:///{folder / 'demo.db'}")
    try:
        migrate.upgrade(db)
        initialise(db, owner_email=OWNER)
        owner = person_actor(get_user_by_email(db, OWNER))
        present.add_team_role(db, owner, project="DEMO", name="Writer", role="Writes.", kind="ai")
        archive.export_projects(db, ["DEMO"], folder / "demo.zip")
    finally:
        db.dispose()
    return folder / "demo.zip"


@pytest.fixture
def cli_on(database_url: URL, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """The `crewboard` command in-process on a migrated, empty database of the backend."""
    monkeypatch.setenv("CREWBOARD_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CREWBOARD_DATABASE_URL", database_url.render_as_string(hide_password=False))
    monkeypatch.delenv("CREWBOARD_CONFIG_FILE", raising=False)
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return invoke


@pytest.fixture
def database(database_url: URL) -> Iterator[Database]:
    db = Database(database_url)
    yield db
    db.dispose()


def _refusal(result: Result) -> dict[str, object]:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    error = json.loads(result.stderr)["error"]
    assert set(error) == {"code", "message", "details"}
    return dict(error)


# Archives ------------------------------------------------------------------------------------

DEEP = "[" * 200_000 + "]" * 200_000


def _archive_entries(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zipped:
        return {name: zipped.read(name) for name in zipped.namelist()}


def _manifest_count(raw: str) -> Callable[[dict[str, bytes]], None]:
    """The manifest's row count of the tasks document written as `raw` JSON text."""

    def change(entries: dict[str, bytes]) -> None:
        manifest = json.loads(entries["manifest.json"])
        manifest["projects"][0]["documents"]["tasks"] = "COUNT"
        entries["manifest.json"] = json.dumps(manifest).replace('"COUNT"', raw).encode()

    return change


def _first_row(table: str, column: str, raw: str) -> Callable[[dict[str, bytes]], None]:
    """The first row of `table` with `column` written as `raw` JSON text."""

    def change(entries: dict[str, bytes]) -> None:
        name = next(n for n in entries if n.endswith(f"/{table}.jsonl"))
        first, *rest = entries[name].splitlines(keepends=True)
        row = {**json.loads(first), column: "VALUE"}
        entries[name] = (json.dumps(row).replace('"VALUE"', raw) + "\n").encode() + b"".join(rest)

    return change


def _whole(name: str, data: str) -> Callable[[dict[str, bytes]], None]:
    def change(entries: dict[str, bytes]) -> None:
        target = next(n for n in entries if n == name or n.endswith(name))
        entries[target] = data.encode()

    return change


def _first_person(field: str, value: object) -> Callable[[dict[str, bytes]], None]:
    def change(entries: dict[str, bytes]) -> None:
        people = json.loads(entries["people.json"])
        people[0][field] = value
        entries["people.json"] = json.dumps(people).encode()

    return change


MALFORMED_ARCHIVES = {
    "manifest nested 200,000 deep": (_whole("manifest.json", DEEP), "manifest.json"),
    "people.json nested 200,000 deep": (_whole("people.json", DEEP), "people.json"),
    "a row nested 200,000 deep": (_whole("/projects.jsonl", DEEP + "\n"), "projects.jsonl line 1"),
    'a manifest count of "abc"': (_manifest_count('"abc"'), "documents.tasks"),
    "a manifest count of null": (_manifest_count("null"), "documents.tasks"),
    "a manifest count of 1e400": (_manifest_count("1e400"), "documents.tasks"),
    "a manifest count of -1": (_manifest_count("-1"), "documents.tasks"),
    "a display name of 150 characters": (
        _first_person("display_name", "n" * 150),
        "people.json[0].display_name",
    ),
    "a display name with a NUL": (
        _first_person("display_name", "a\u0000b"),
        "people.json[0].display_name",
    ),
    "a person's created_at of 12": (_first_person("created_at", 12), "people.json[0].created_at"),
    'a created_at of "not a date"': (
        _first_row("projects", "created_at", '"not a date"'),
        "projects.jsonl line 1 created_at",
    ),
    "a created_at of 12": (
        _first_row("projects", "created_at", "12"),
        "projects.jsonl line 1 created_at",
    ),
    "a rank of 2^70": (
        _first_row("team_roles", "rank", str(2**70)),
        "team_roles.jsonl line 1 rank",
    ),
    "a rank of 1e400": (_first_row("team_roles", "rank", "1e400"), "team_roles.jsonl line 1 rank"),
}


def _crafted(demo_archive: Path, change: Callable[[dict[str, bytes]], None], out: Path) -> Path:
    entries = _archive_entries(demo_archive)
    change(entries)
    with zipfile.ZipFile(out, "w") as zipped:
        for name, data in entries.items():
            zipped.writestr(name, data)
    return out


@pytest.mark.parametrize("case", list(MALFORMED_ARCHIVES))
def test_a_malformed_archive_is_refused_by_name(
    cli_on: RunCli, database: Database, demo_archive: Path, tmp_path: Path, case: str
) -> None:
    change, named = MALFORMED_ARCHIVES[case]
    crafted = _crafted(demo_archive, change, tmp_path / "crafted.zip")
    error = _refusal(cli_on("import", str(crafted), "--json"))
    assert error["code"] in ("VALIDATION", "LIMIT_EXCEEDED")
    details = error["details"]
    assert isinstance(details, dict)
    assert named in str(details["field"])
    assert count_rows(database, "projects") == 0
    assert count_rows(database, "users") == 0


def _unchanged(entries: dict[str, bytes]) -> None:
    """Every entry as it was (written again, uncompressed)."""
    assert entries


@pytest.mark.parametrize("entry", ["people.json", "team_roles.jsonl"])
def test_an_entry_failing_its_checksum_is_refused_by_name(
    cli_on: RunCli, demo_archive: Path, tmp_path: Path, entry: str
) -> None:
    """The zip's own CRC of an entry differs from its bytes (a byte changed in place)."""
    crafted = _crafted(demo_archive, _unchanged, tmp_path / "stored.zip")
    with zipfile.ZipFile(crafted) as zipped:
        name = next(n for n in zipped.namelist() if n.endswith(entry))
        data = zipped.read(name)
    raw = crafted.read_bytes()
    assert raw.count(data) == 1  # stored, not compressed: its bytes are in the file as they are
    changed = data.replace(b'"', b"'", 1) if data.startswith(b"[") else data.replace(b"{", b"[", 1)
    crafted.write_bytes(raw.replace(data, changed))
    error = _refusal(cli_on("import", str(crafted), "--json"))
    assert error["code"] == "VALIDATION"
    details = error["details"]
    assert isinstance(details, dict)
    assert details["field"] == name


def test_the_untouched_archive_lands(cli_on: RunCli, demo_archive: Path) -> None:
    """The baseline the cases above depart from."""
    landed = cli_on("import", str(demo_archive), "--json")
    assert landed.exit_code == 0, landed.output
    assert json.loads(landed.output)["projects"][0]["documents"]["team_roles"] == 1


# Backup manifests --------------------------------------------------------------------------

BASE_MANIFEST = {
    "format": "crewboard-backup",
    "formatVersion": 1,
    "crewboardVersion": "0.1.0",
    "schemaRevision": "REVISION",
    "dialect": "sqlite",
    "createdAt": "2026-12-01T10:00:00Z",
    "seconds": 0.5,
    "database": {"path": "crewboard.db", "pages": 4},
    "blobFolder": False,
    "missingBlobs": [],
    "files": [{"path": "crewboard.db", "size": 4096, "sha256": "0" * 64}],
}


def _manifest_text(change: Callable[[dict[str, object]], None], raw: str = "") -> str:
    manifest = json.loads(json.dumps(BASE_MANIFEST))
    manifest["schemaRevision"] = migrate.head_revision()
    change(manifest)
    return json.dumps(manifest).replace('"RAW"', raw)


def _size(raw: str) -> str:
    return _manifest_text(
        lambda m: m.update(files=[{**BASE_MANIFEST["files"][0], "size": "RAW"}]), raw
    )  # type: ignore[index]


MALFORMED_MANIFESTS = {
    "nested 200,000 deep": DEEP,
    "files holding strings": _manifest_text(lambda m: m.update(files=["crewboard.db"])),
    'files of "x"': _manifest_text(lambda m: m.update(files="x")),
    'tables of "x"': _manifest_text(
        lambda m: m.update(database={"path": "crewboard.db", "tables": "x"})
    ),
    'a size of "abc"': _size('"abc"'),
    "a size of null": _size("null"),
    "a size of 1e400": _size("1e400"),
    "a database of null": _manifest_text(lambda m: m.update(database=None)),
    "a missing files list": _manifest_text(lambda m: m.pop("files")),
}


@pytest.mark.parametrize("case", list(MALFORMED_MANIFESTS))
def test_a_malformed_backup_manifest_is_refused_by_name(
    cli_on: RunCli, tmp_path: Path, case: str
) -> None:
    folder = tmp_path / "crewboard-20261201T100000Z"
    folder.mkdir()
    (folder / "manifest.json").write_text(MALFORMED_MANIFESTS[case])
    (folder / "crewboard.db").write_bytes(b"\0" * 4096)
    error = _refusal(cli_on("restore", str(folder), "--json"))
    assert error["code"] == "NOT_A_BACKUP"
    assert "manifest.json" in str(error["message"])


def test_the_real_command_prints_a_named_refusal_and_no_traceback(
    demo_archive: Path, tmp_path: Path
) -> None:
    """As its own process, on a fresh data folder: a deeply nested archive row and a restore
    manifest whose files are strings, with and without --json."""
    env = crewboard_env(tmp_path / "data")
    assert run_crewboard(env, "migrate").returncode == 0
    deep = _crafted(demo_archive, _whole("/projects.jsonl", DEEP + "\n"), tmp_path / "deep.zip")
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "manifest.json").write_text(MALFORMED_MANIFESTS["files holding strings"])
    refused = run_crewboard(env, "import", str(deep), "--json")
    assert refused.returncode == 1, refused.stderr
    assert "Traceback" not in refused.stderr
    error = json.loads(refused.stderr)["error"]
    assert (error["code"], error["details"]["field"]) == ("VALIDATION", _projects_line(deep))
    refused = run_crewboard(env, "restore", str(folder))
    assert refused.returncode == 1, refused.stderr
    assert "Traceback" not in refused.stderr
    assert refused.stderr.lower().startswith("error: ")
    assert "files[0]: must be an object" in refused.stderr


def _projects_line(path: Path) -> str:
    with zipfile.ZipFile(path) as zipped:
        name = next(n for n in zipped.namelist() if n.endswith("/projects.jsonl"))
    return f"{name} line 1"
