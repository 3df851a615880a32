"""/metrics over real HTTP: MCP calls through the SDK client, REST calls and web pages are
counted by door, operation and outcome; the gauges are there; it is 404 when off and asks for
its token when one is set. Also X-Request-Id on every answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from crewboard.config import Settings
from crewboard.domain.identity.access import Scope
from crewboard.http.metrics import SCRAPE_DATABASE_WAIT
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.databases import PostgresDatabases
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.server import free_port, running_server
from tests.support.tcp_proxy import proxied
from tests.support.web import sign_in

TOKEN = "scrape-me-0123456789"
ALL = [scope.value for scope in Scope]


@dataclass
class Served:
    base: str
    secret: str

    def scrape(self) -> dict[str, list[Sample]]:
        answer = httpx2.get(
            f"{self.base}/metrics", headers={"authorization": f"Bearer {TOKEN}"}, timeout=30
        )
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("text/plain")
        return {f.name: f.samples for f in text_string_to_metric_families(answer.text)}


def _serve(db: Database, tmp_path: Path, **settings: object) -> Iterator[Served]:
    owner = make_user(db, "owner@example.com", is_owner=True)
    make_project(db, owner, "CRW")
    secret = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=ALL).secret
    with running_server(Settings(data_dir=tmp_path, port=free_port(), **settings), db) as base:  # type: ignore[arg-type]
        yield Served(base, secret)


@pytest.fixture
def served(db: Database, tmp_path: Path) -> Iterator[Served]:
    yield from _serve(db, tmp_path, metrics="on", metrics_token=TOKEN)


def requests_of(samples: dict[str, list[Sample]]) -> dict[tuple[str, str, str], float]:
    return {
        (s.labels["door"], s.labels["operation"], s.labels["outcome"]): s.value
        for s in samples["crewboard_requests"]
        if s.name == "crewboard_requests_total"
    }


def latency_count(samples: dict[str, list[Sample]], door: str, operation: str) -> float:
    return next(
        s.value
        for s in samples["crewboard_request_duration_seconds"]
        if s.name == "crewboard_request_duration_seconds_count"
        and s.labels == {"door": door, "operation": operation}
    )


@pytest.mark.anyio
async def test_metrics_count_each_door_by_operation_and_outcome(served: Served, mode: str) -> None:
    async with mcp_client(served.base, served.secret, mode) as client:
        for _ in range(3):
            listed = await client.call_tool("list_projects", {})
            assert not listed.is_error, body_of(listed)
        missing = await client.call_tool("get_task", {"taskId": "tsk_nothing_here"})
        assert missing.is_error
        assert (missing.structured_content or {}).get("code") == "NOT_FOUND"
        await client.list_tools()
    rest = {"authorization": f"Bearer {served.secret}"}
    for _ in range(2):
        assert httpx2.get(f"{served.base}/api/v1/projects", headers=rest).status_code == 200
    refused = httpx2.get(f"{served.base}/api/v1/projects", headers={"authorization": "Bearer no"})
    assert refused.status_code == 401
    browser = sign_in(served.base, "owner@example.com")  # GET and POST /login, once each
    try:
        assert browser.get("/p/CRW/board").status_code == 200
        assert browser.get("/p/CRW/tasks/CRW-999").status_code == 404
    finally:
        browser.close()

    samples = served.scrape()
    counted = requests_of(samples)
    assert counted[("mcp", "list_projects", "ok")] == 3
    assert counted[("mcp", "get_task", "NOT_FOUND")] == 1
    assert counted[("mcp", "tools/list", "ok")] >= 1
    # The handshake era begins with initialize; the stateless one asks server/discover.
    begun = "initialize" if mode == "legacy" else "server/discover"
    assert counted[("mcp", begun, "ok")] == 1
    assert counted[("rest", "list_projects", "ok")] == 2
    assert counted[("rest", "list_projects", "UNAUTHENTICATED")] == 1
    assert counted[("web", "/login", "ok")] == 2
    assert counted[("web", "/p/{key}/board", "ok")] == 1
    assert counted[("web", "/p/{key}/tasks/{ref}", "NOT_FOUND")] == 1
    assert latency_count(samples, "mcp", "list_projects") == 3
    assert latency_count(samples, "rest", "list_projects") == 3
    # Bounded labels: a route's template, never the path asked for.
    assert not any("CRW" in operation for _, operation, _ in counted)
    # The scrape itself is not a door's request.
    assert not any(operation == "/metrics" for _, operation, _ in counted)


def test_metrics_report_the_gauges_read_at_scrape_time(served: Served, db: Database) -> None:
    samples = served.scrape()
    assert samples["crewboard_scrape_database_ok"][0].value == 1
    turns = {s.labels["state"]: s.value for s in samples["crewboard_session_turns"]}
    assert turns == {"queued": 0, "running": 0}
    assert samples["crewboard_email_outbox_pending"][0].value == 0
    streams = {s.labels["kind"]: s.value for s in samples["crewboard_live_streams_open"]}
    assert streams == {"web": 0, "api": 0}
    assert samples["crewboard_db_pool_size"][0].value >= 1
    assert samples["crewboard_db_pool_checked_out"][0].value >= 0
    assert samples["crewboard_live_events_behind"][0].value >= 0


def test_metrics_count_open_event_streams(served: Served) -> None:
    rest = {"authorization": f"Bearer {served.secret}", "accept": "text/event-stream"}
    with (
        httpx2.Client(timeout=30) as client,
        client.stream("GET", f"{served.base}/api/v1/projects/CRW/events", headers=rest) as stream,
    ):
        assert stream.status_code == 200
        assert stream.headers["x-request-id"]
        streams = {
            s.labels["kind"]: s.value for s in served.scrape()["crewboard_live_streams_open"]
        }
        assert streams == {"web": 0, "api": 1}


def test_metrics_ask_for_the_token_when_one_is_set(served: Served) -> None:
    bare = httpx2.get(f"{served.base}/metrics", timeout=30)
    assert bare.status_code == 401
    assert bare.headers["www-authenticate"].startswith("Bearer")
    wrong = httpx2.get(
        f"{served.base}/metrics", headers={"authorization": f"Bearer {TOKEN}x"}, timeout=30
    )
    assert wrong.status_code == 401


def test_metrics_are_open_without_a_token(db: Database, tmp_path: Path) -> None:
    for served in _serve(db, tmp_path, metrics="on"):
        answer = httpx2.get(f"{served.base}/metrics", timeout=30)
        assert answer.status_code == 200
        assert "crewboard_scrape_database_ok 1.0" in answer.text


def test_metrics_are_not_found_when_off(db: Database, tmp_path: Path) -> None:
    for served in _serve(db, tmp_path):
        answer = httpx2.get(f"{served.base}/metrics", timeout=30)
        assert answer.status_code == 404


def test_every_answer_carries_a_request_id_taken_from_a_sane_header(served: Served) -> None:
    ok = httpx2.get(f"{served.base}/healthz", headers={"x-request-id": "lb-42.a_b-c"}, timeout=30)
    assert ok.headers["x-request-id"] == "lb-42.a_b-c"
    for bad in ("has space", "x" * 65, "semi;colon"):
        made = httpx2.get(f"{served.base}/healthz", headers={"x-request-id": bad}, timeout=30)
        assert made.headers["x-request-id"] != bad
        assert len(made.headers["x-request-id"]) == 16
    missing = httpx2.get(f"{served.base}/api/v1/nothing", timeout=30)
    assert missing.status_code in (401, 404)
    assert len(missing.headers["x-request-id"]) == 16
    first = httpx2.get(f"{served.base}/nothing-here", timeout=30)
    second = httpx2.get(f"{served.base}/nothing-here", timeout=30)
    assert first.status_code == 404
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


@pytest.mark.postgres
def test_metrics_still_answer_while_the_database_is_away(
    postgres_databases: PostgresDatabases, tmp_path: Path
) -> None:
    url = postgres_databases.new_migrated()
    try:
        with proxied(url) as (proxy, via):
            node = Database(via)
            try:
                settings = Settings(data_dir=tmp_path, port=free_port(), metrics="on")
                with running_server(settings, node) as base:
                    assert "crewboard_session_turns" in scrape_open(base)
                    proxy.silence()  # a database that hangs: the scrape waits 2 s at most
                    started = time.monotonic()
                    page = scrape_open(base)
                    assert time.monotonic() - started < SCRAPE_DATABASE_WAIT + 3
                    assert "crewboard_scrape_database_ok 0.0" in page
                    assert "crewboard_session_turns{" not in page
                    assert "crewboard_live_streams_open" in page  # what memory knows
                    proxy.heal()
                    proxy.reset()  # and one whose connections were cut
                    assert "crewboard_scrape_database_ok 0.0" in scrape_open(base)
                    proxy.heal()
                    deadline = time.monotonic() + 30
                    while "crewboard_scrape_database_ok 1.0" not in scrape_open(base):
                        assert time.monotonic() < deadline, "the counts did not come back"
                        time.sleep(0.2)
            finally:
                node.dispose()
    finally:
        postgres_databases.drop(url)


def scrape_open(base: str) -> str:
    answer = httpx2.get(f"{base}/metrics", timeout=30)
    assert answer.status_code == 200
    return answer.text
