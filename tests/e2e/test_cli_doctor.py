"""`crewboard doctor` in-process on each backend: a good setup (a fresh data folder after
`init`, an SMTP server that answers, a model provider that is up) passes with exit 0; a
database that is not there, an SMTP port that refuses, a provider on a closed port and a
schema behind the code each fail by name with exit 1. Real servers and real closed ports."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy.engine import URL

from crewboard.cli.main import cli
from crewboard.storage import migrate
from crewboard.storage.database import Database
from tests.support.cli import RunCli
from tests.support.model_server import ModelServer
from tests.support.server import free_port
from tests.support.smtp import smtp_server


@pytest.fixture
def run(run: RunCli) -> RunCli:
    """The CLI on a database `crewboard init` has set up."""
    assert run("init").exit_code == 0
    return run


def checks(run: RunCli) -> tuple[int, dict[str, dict[str, Any]]]:
    """doctor --json: its exit code and its checks by name."""
    result = run("doctor", "--json")
    listed = json.loads(result.output)
    assert all(set(c) == {"check", "status", "detail", "fix"} for c in listed), listed
    return result.exit_code, {c["check"]: c for c in listed}


def smtp_env(monkeypatch: pytest.MonkeyPatch, port: int, security: str = "none") -> None:
    monkeypatch.setenv("CREWBOARD_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("CREWBOARD_SMTP_PORT", str(port))
    monkeypatch.setenv("CREWBOARD_SMTP_SECURITY", security)
    monkeypatch.setenv("CREWBOARD_SMTP_SENDER", "crewboard@example.com")


def test_doctor_passes_on_a_good_setup(run: RunCli, monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()
    smtp_env(monkeypatch, port)
    with smtp_server(port), ModelServer() as models:
        added = run("model", "provider", "add", "local", "--kind", "openai",
                    "--base-url", models.base_url("openai"))  # fmt: skip
        assert added.exit_code == 0, added.output
        code, found = checks(run)
        text = run("doctor")
    assert code == 0, found
    assert text.exit_code == 0, text.output
    for name in ("settings", "database", "migrations", "smtp", "model provider local", "disk"):
        assert found[name]["status"] == "ok", found[name]
    assert found["smtp"]["fix"] is None
    assert "FAIL" not in text.output
    assert text.output.splitlines()[0].startswith("ok")


def test_doctor_names_an_smtp_server_that_refuses_and_a_provider_on_a_closed_port(
    run: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = free_port()  # nothing listens there: connections are refused
    smtp_env(monkeypatch, closed)
    added = run("model", "provider", "add", "gone", "--kind", "openai",
                "--base-url", f"http://127.0.0.1:{free_port()}/v1")  # fmt: skip
    assert added.exit_code == 0, added.output
    code, found = checks(run)
    assert code == 1
    assert found["smtp"]["status"] == "fail"
    assert "ConnectionRefusedError" in found["smtp"]["detail"]
    assert "CREWBOARD_SMTP_HOST" in found["smtp"]["fix"]
    assert found["model provider gone"]["status"] == "fail"
    assert found["model provider gone"]["fix"]
    assert found["database"]["status"] == "ok"
    text = run("doctor")
    assert text.exit_code == 1
    failing = [line for line in text.output.splitlines() if line.startswith("FAIL")]
    assert [line.split(":")[0] for line in failing] == [
        "FAIL  model provider gone",
        "FAIL  smtp",
    ]


def test_doctor_fails_starttls_on_a_server_that_offers_none(
    run: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    smtp_env(monkeypatch, port, security="starttls")
    with smtp_server(port):
        code, found = checks(run)
    assert code == 1
    assert found["smtp"]["status"] == "fail"
    assert "STARTTLS" in found["smtp"]["detail"].upper()


def test_doctor_names_an_unreachable_database(run: RunCli, monkeypatch: pytest.MonkeyPatch) -> None:
    closed = free_port()
    monkeypatch.setenv(
        "CREWBOARD_DATABASE_URL", f"postgresql+psycopg://postgres@127.0.0.1:{closed}/crewboard"
    )
    code, found = checks(run)
    assert code == 1
    assert found["database"]["status"] == "fail"
    assert "CREWBOARD_DATABASE_URL" in found["database"]["fix"]
    assert "migrations" not in found  # not asked of a database that did not answer
    assert found["settings"]["status"] == "ok"


def test_doctor_fails_when_the_schema_is_behind(run: RunCli, empty_database_url: URL) -> None:
    db = Database(empty_database_url)
    try:
        migrate.downgrade(db, "-1")
    finally:
        db.dispose()
    code, found = checks(run)
    assert code == 1
    assert found["migrations"]["status"] == "fail"
    assert "crewboard migrate" in found["migrations"]["fix"]


def test_doctor_names_a_bad_setting_and_a_coherence_warning(
    run: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CREWBOARD_METRICS", "sometimes")
    code, found = checks(run)
    assert code == 1
    assert found["settings"]["status"] == "fail"
    assert "metrics" in found["settings"]["detail"]
    monkeypatch.setenv("CREWBOARD_METRICS", "on")
    monkeypatch.setenv("CREWBOARD_HOST", "0.0.0.0")  # noqa: S104 - the setting under test
    code, found = checks(run)
    assert code == 0  # warnings do not fail
    assert found["metrics"]["status"] == "warn"
    assert "CREWBOARD_METRICS_TOKEN" in found["metrics"]["fix"]
    assert found["public address"]["status"] == "warn"


def test_doctor_on_a_fresh_sqlite_data_folder_fails_until_init_then_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("CREWBOARD_")]:
        monkeypatch.delenv(name)
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("CREWBOARD_DATA_DIR", str(data))
    runner = CliRunner()
    before = runner.invoke(cli, ["doctor", "--json"], catch_exceptions=False)
    assert before.exit_code == 1
    found = {c["check"]: c for c in json.loads(before.output)}
    assert found["database"]["status"] == "fail"
    assert "crewboard init" in found["database"]["fix"]
    assert not (data / "crewboard.db").exists()  # doctor made nothing
    assert runner.invoke(cli, ["init"], catch_exceptions=False).exit_code == 0
    after = runner.invoke(cli, ["doctor"], catch_exceptions=False)
    assert after.exit_code == 0, after.output
    lines = after.output.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "ok    settings",
        "ok    public address",
        "ok    metrics",
        "ok    data folder",
        "ok    database",
        "ok    migrations",
        "ok    model providers",
        "ok    smtp",
        "ok    disk",
    ]


def test_doctor_names_a_data_folder_it_cannot_write_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("CREWBOARD_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("CREWBOARD_DATA_DIR", str(tmp_path / "missing"))
    result = CliRunner().invoke(cli, ["doctor", "--json"], catch_exceptions=False)
    assert result.exit_code == 1
    found = {c["check"]: c for c in json.loads(result.output)}
    assert found["data folder"]["status"] == "fail"
    assert "mkdir" in found["data folder"]["fix"]
    assert found["database"]["status"] == "fail"
    assert not (tmp_path / "missing").exists()  # doctor made nothing
