"""/readyz: ready on a current schema, 503 naming `migrations` when the schema is behind the
code, 503 naming `database` while the database is away (PostgreSQL through a TCP proxy, as
test_database_outage.py cuts it) and ready again after, with no restart. Log lines written
while a request is answered carry its request id."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.http.logs import JsonFormatter
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage import migrate
from crewboard.storage.database import Database
from tests.e2e.test_database_outage import until
from tests.support.databases import PostgresDatabases
from tests.support.factories import make_user
from tests.support.server import free_port, running_server
from tests.support.tcp_proxy import proxied


def ready(base: str) -> httpx2.Response:
    return httpx2.get(f"{base}/readyz", timeout=30)


def test_readyz_fails_naming_migrations_while_the_schema_is_behind(
    db: Database, tmp_path: Path
) -> None:
    with running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base:
        answer = ready(base)
        assert answer.status_code == 200, answer.text
        head = migrate.head_revision()
        assert answer.json()["migrations"] == {"ok": True, "head": head, "current": head}

        migrate.downgrade(db, "-1")
        behind = ready(base)
        assert behind.status_code == 503
        body = behind.json()
        # A background loop whose tables the downgrade took away fails too (the newest
        # revision's): only those may join the migrations.
        assert [f for f in body["failed"] if not f.startswith("loop:")] == ["migrations"]
        assert body["migrations"]["ok"] is False
        assert body["migrations"]["current"] != head
        assert body["database"] == {"ok": True}

        migrate.upgrade(db)
        # Each look nudges the failing loops to try again at once; they recover on their next
        # pass.
        until("/readyz answers 200", lambda: ready(base).status_code == 200, timeout=15)


class Captured(logging.Handler):
    """The records of the `crewboard` loggers, formatted as JSON lines."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.setFormatter(JsonFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def captured() -> Iterator[Captured]:
    handler = Captured()
    logger = logging.getLogger("crewboard")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


@pytest.mark.postgres
def test_readyz_fails_while_the_database_is_away_and_passes_after(
    postgres_databases: PostgresDatabases, tmp_path: Path, captured: Captured
) -> None:
    url = postgres_databases.new_migrated()
    direct = Database(url)
    try:
        owner = make_user(direct, "owner@example.com", is_owner=True)
        secret = tokens.issue_token(direct, person_actor(owner), kind="personal", scopes=["read"])
        with proxied(url) as (proxy, via):
            node = Database(via)
            try:
                settings = Settings(data_dir=tmp_path, port=free_port())
                with running_server(settings, node) as base:
                    assert ready(base).status_code == 200
                    proxy.reset()
                    until("/readyz fails", lambda: ready(base).status_code == 503)
                    away = ready(base).json()
                    assert "database" in away["failed"]
                    assert away["database"]["ok"] is False
                    assert away["migrations"]["ok"] is None  # not known while it is away
                    refused = httpx2.get(
                        f"{base}/api/v1/projects",
                        headers={
                            "authorization": f"Bearer {secret.secret}",
                            "x-request-id": "outage-1",
                        },
                        timeout=30,
                    )
                    assert refused.status_code == 503
                    assert refused.headers["x-request-id"] == "outage-1"
                    proxy.heal()
                    until("/readyz passes", lambda: ready(base).status_code == 200)
            finally:
                node.dispose()
    finally:
        direct.dispose()
        postgres_databases.drop(url)
    # The warning logged while that request was answered names it.
    tagged = [line for line in captured.lines if '"request_id": "outage-1"' in line]
    assert tagged, captured.lines
