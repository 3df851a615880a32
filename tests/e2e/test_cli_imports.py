"""`crewboard import` as an operator runs it: its own process on a fresh data folder (SQLite),
recognising each sample by its contents, `--dry-run` writing nothing, the `--json` report, no
progress bar when standard error is not a terminal, and refusals that exit 1 with the code."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import crewboard_env, run_crewboard

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"
Crewboard = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def crewboard(tmp_path_factory: pytest.TempPathFactory) -> Crewboard:
    """`python -m crewboard …` on a data folder `crewboard init` set up (once for the module)."""
    env = crewboard_env(tmp_path_factory.mktemp("import-data"))

    def invoke(*args: str) -> subprocess.CompletedProcess[str]:
        return run_crewboard(env, *args)

    assert invoke("init").returncode == 0
    return invoke


def report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no progress bar: standard error is a pipe here
    body: dict[str, Any] = json.loads(done.stdout)
    return body


@pytest.mark.parametrize(
    ("path", "source", "key"),
    [
        ("github/issues.json", "GitHub", "GH"),
        ("taskmaster/tasks.json", "task-master", "TM"),
        ("backlog", "Backlog.md", "BL"),
        ("linear/export.csv", "Linear", "LN"),
    ],
)
def test_each_sample_is_recognised_dry_run_writes_nothing_and_twice_is_once(
    crewboard: Crewboard, path: str, source: str, key: str
) -> None:
    assert crewboard("project", "create", "--key", key, "--name", source).returncode == 0
    sample = str(FIXTURES / path)
    dry = report(crewboard("import", sample, "--project", key, "--dry-run", "--json"))
    assert dry["dryRun"] is True
    assert dry["counts"]["created"] > 0
    real = report(crewboard("import", sample, "--project", key, "--json"))
    assert real["dryRun"] is False
    # The same tasks again: the dry run wrote nothing (not even a task number).
    assert [row["key"] for row in real["created"]] == [row["key"] for row in dry["created"]]
    assert set(real) >= {"source", "project", "counts", "created", "updated", "unchanged",
                         "skipped", "missingReferences", "unmappedPeople", "ownedByImporter"}  # fmt: skip
    second = crewboard("import", sample, "--project", key)
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith(
        f"{source} → {key}: imported 0 new, 0 updated, {real['counts']['created']} unchanged"
    )
    assert second.stderr == ""


def test_a_malformed_file_exits_1_naming_the_line(crewboard: Crewboard, tmp_path: Path) -> None:
    broken = tmp_path / "tasks.json"
    broken.write_text('{"master": {"tasks": [\n  {"id": 1, "title": "x",}\n]}}\n')
    done = crewboard("import", str(broken), "--from", "taskmaster", "--project", "DEMO", "--json")
    assert done.returncode == 1
    error = json.loads(done.stderr)["error"]
    assert error["code"] == "VALIDATION"
    assert error["details"]["where"].startswith("line 2, column ")


def test_a_tool_import_needs_a_project_and_an_unknown_file_names_the_sources(
    crewboard: Crewboard, tmp_path: Path
) -> None:
    done = crewboard("import", str(FIXTURES / "github" / "issues.json"))
    assert done.returncode == 1
    assert "--project" in done.stderr
    notes = tmp_path / "notes.txt"
    notes.write_text("remember the milk\n")
    done = crewboard("import", str(notes), "--project", "DEMO")
    assert done.returncode == 1
    assert "Backlog.md" in done.stderr
    assert "Linear" in done.stderr


def test_map_user_gives_an_issue_its_member(crewboard: Crewboard) -> None:
    assert crewboard("project", "create", "--key", "MAP", "--name", "Mapped").returncode == 0
    (owner,) = json.loads(crewboard("user", "list", "--json").stdout)
    done = crewboard(
        "import", str(FIXTURES / "github" / "issues.json"), "--project", "MAP",
        "--map-user", f"ada-l={owner['email']}", "--json",
    )  # fmt: skip
    body = report(done)
    assert "ada-l" not in body["unmappedPeople"]
    bad = crewboard("import", str(FIXTURES / "github" / "issues.json"), "--project", "MAP",
                    "--map-user", "ada-l")  # fmt: skip
    assert bad.returncode == 1
    assert "LOGIN=EMAIL" in bad.stderr
