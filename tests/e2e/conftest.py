"""Fixtures every end-to-end suite shares: a served app, the client eras, the operator CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import URL

from crewboard.config import Settings
from crewboard.storage.database import Database
from tests.support.cli import RunCli, cli_on
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
    return cli_on(empty_database_url, tmp_path / "data", monkeypatch)


__all__ = ["model_server", "serve"]  # fixtures of the spec session suites
