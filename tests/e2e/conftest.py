"""Fixtures every end-to-end suite shares: a served app, the client eras, the operator CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy.engine import URL

from crewboard.cli.main import cli
from crewboard.config import Settings
from crewboard.storage.database import Database
from tests.support.cli import RunCli
from tests.support.mcp_client import MODES
from tests.support.server import free_port, running_server
from tests.support.sessions_module import model_server, serve


@pytest.fixture
def url(db: Database, tmp_path: Path) -> Iterator[str]:
    """The whole app served over real HTTP on the test's database; its base URL."""
    with running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base:
        yield base


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    """Each protocol era the SDK client speaks."""
    return str(request.param)


@pytest.fixture
def run(empty_database_url: URL, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """The `crewboard` command in-process (click's runner) on an empty database."""
    monkeypatch.setenv("CREWBOARD_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv(
        "CREWBOARD_DATABASE_URL", empty_database_url.render_as_string(hide_password=False)
    )
    monkeypatch.delenv("CREWBOARD_CONFIG_FILE", raising=False)
    runner = CliRunner()

    def invoke(*args: str, stdin: str | None = None) -> Result:
        return runner.invoke(cli, list(args), input=stdin, catch_exceptions=False)

    return invoke


__all__ = ["model_server", "serve"]  # fixtures of the spec session suites
