"""`crewboard export` and `crewboard import` as an operator runs them.

In-process on each backend: a project exported and imported back beside itself under another
key, a dry run, refusals as exit 1 with the error named. As separate processes from fresh data
folders (the embedded SQLite of `make serve`): one server's project moved to another, progress
bars drawn on a terminal and never into a pipe or `--json` output."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.support.cli import RunCli, crewboard_env, on_a_terminal, run_crewboard


@pytest.fixture
def run(run: RunCli) -> RunCli:
    """The CLI on a database `crewboard init` has set up (its demo project is DEMO)."""
    assert run("init").exit_code == 0
    return run


def test_a_project_exported_and_imported_beside_itself(run: RunCli, tmp_path: Path) -> None:
    out = tmp_path / "demo.zip"
    exported = run("export", "DEMO", "--to", str(out), "--json")
    assert exported.exit_code == 0, exported.output
    report = json.loads(exported.output)
    assert report["format"] == "crewboard-export"
    assert report["path"] == str(out.resolve())
    assert report["projects"][0]["key"] == "DEMO"
    assert report["projects"][0]["documents"]["projects"] == 1
    assert report["projects"][0]["documents"]["project_members"] == 1
    assert set(report) >= {"bytes", "seconds", "people", "blobs", "schemaRevision", "version"}
    assert zipfile.is_zipfile(out)

    clash = run("import", str(out), "--json")
    assert clash.exit_code == 1
    assert json.loads(clash.stderr)["error"]["code"] == "ALREADY_EXISTS"

    dry = run("import", str(out), "--new-ids", "--key", "COPY", "--match-people", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "would import COPY" in dry.output
    assert "dry run: nothing was changed" in dry.output
    assert "COPY" not in run("project", "list").output

    unconfirmed = run("import", str(out), "--new-ids", "--key", "COPY", "--json")
    assert unconfirmed.exit_code == 1
    refusal = json.loads(unconfirmed.stderr)["error"]
    assert refusal["code"] == "VALIDATION"
    assert refusal["details"]["wouldMatch"] == ["owner@crewboard.local"]
    copied = run("import", str(out), "--new-ids", "--key", "COPY", "--match-people", "--json")
    assert copied.exit_code == 0, copied.output
    landed = json.loads(copied.output)
    assert landed["dryRun"] is False
    assert landed["projects"][0]["key"] == "COPY"
    assert landed["people"]["created"] == []  # everyone was matched by email
    assert "COPY" in run("project", "list").output


def test_refusals_name_what_is_wrong(run: RunCli, tmp_path: Path) -> None:
    missing = run("export", "NOPE", "--to", str(tmp_path / "x.zip"))
    assert missing.exit_code == 1
    assert "no project 'NOPE'" in missing.stderr
    assert "DEMO" in missing.stderr  # the projects there are
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    refused = run("import", str(bad), "--from", "crewboard", "--json")
    assert refused.exit_code == 1
    error = json.loads(refused.stderr)["error"]
    assert error["code"] == "VALIDATION"
    assert "not a Crewboard export archive" in error["message"]
    mixed = run("import", str(bad), "--from", "crewboard", "--project", "DEMO")
    assert mixed.exit_code == 2
    assert "--project" in mixed.output


def _crewboard(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_crewboard(crewboard_env(data), *args)


def test_moving_a_project_between_two_fresh_servers(tmp_path: Path) -> None:
    """Two data folders as `make serve` makes them; DEMO moves from one to the other under
    another key. The export, on a terminal, draws its bars; the import, into a pipe with
    `--json`, prints only its report."""
    first, second = tmp_path / "first", tmp_path / "second"
    for data in (first, second):
        assert _crewboard(data, "init").returncode == 0
    archive = tmp_path / "move.zip"
    status, seen, _ = on_a_terminal(crewboard_env(first), "export", "DEMO", "--to", str(archive))
    assert status == 0, seen
    assert "rows" in seen
    assert "#" in seen  # the bar itself
    assert f"wrote {archive}" in seen
    imported = _crewboard(
        second, "import", str(archive), "--key", "MOVED", "--match-people", "--json"
    )
    assert imported.returncode == 0, imported.stderr
    assert imported.stderr == ""  # not a terminal: no bar
    report = json.loads(imported.stdout)
    assert report["projects"][0]["key"] == "MOVED"
    assert report["people"]["matched"] == ["owner@crewboard.local"]
    assert report["people"]["created"] == []
    listed = _crewboard(second, "project", "list")
    assert "MOVED" in listed.stdout


def test_with_json_every_failure_is_one_json_line(tmp_path: Path) -> None:
    """A usage error (exit 2) and a command that cannot start (no database set up yet, exit 1)
    answer a script in the same shape as Crewboard's own refusals; without --json, click's
    plain text."""
    usage = _crewboard(tmp_path / "data", "export", "--json")
    assert usage.returncode == 2
    assert usage.stdout == ""
    assert json.loads(usage.stderr) == {
        "error": {"code": "USAGE", "message": "Missing argument 'PROJECT...'.", "details": {}}
    }
    unready = _crewboard(tmp_path / "data", "export", "DEMO", "--to", "x.zip", "--json")
    assert unready.returncode == 1
    error = json.loads(unready.stderr)["error"]
    assert error["code"] == "COMMAND_FAILED"
    assert "crewboard migrate" in error["message"]
    plain = _crewboard(tmp_path / "data", "export")
    assert plain.returncode == 2
    assert "Usage: crewboard export" in plain.stderr
