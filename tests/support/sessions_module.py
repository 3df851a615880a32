"""Fixtures the spec session suites share: a loopback model server per test, and the app
served over HTTP with the session settings a test names.

A module imports the fixtures it uses by name:
`from tests.support.sessions_module import Serve, model_server, serve`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from crewboard.config import Settings
from crewboard.storage.database import Database
from tests.support.model_server import ModelServer
from tests.support.server import free_port, running_server

Serve = Callable[..., AbstractContextManager[str]]


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    """A real server on loopback speaking the OpenAI and Anthropic APIs (scripted per test)."""
    with ModelServer() as server:
        yield server


@pytest.fixture
def serve(db: Database, tmp_path: Path) -> Serve:
    """The app served over HTTP with these session settings; its base URL."""

    @contextmanager
    def serving(**settings: Any) -> Iterator[str]:
        config = Settings(data_dir=tmp_path, port=free_port(), **settings)
        with running_server(config, db) as base:
            yield base

    return serving
