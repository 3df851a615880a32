"""A node whose database goes away for a while (PostgreSQL, through a TCP proxy on loopback):
its connections reset for 3 s (and 15 s in the slow run), or killed from the PostgreSQL side
with `pg_terminate_backend`, under keyed writers and an open live stream. During the outage
the node answers 503 UNAVAILABLE (with Retry-After and X-Crewboard-Node), `/readyz` fails and
`/healthz` does not; afterwards, with no restart, MCP, REST, the web app, the mailer and the
stream work again, the stream resumed with no gap and no repeat, and every acknowledged write
is there once. Recovery times (heal to the first MCP, REST and stream success) are printed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from sqlalchemy import text

from crewboard.config import Settings
from crewboard.domain.identity.access import Scope
from crewboard.domain.identity.records import User
from crewboard.services.identity import stream_tokens, tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.notifications import inbox
from crewboard.services.notifications.notify import enable_email, notify
from crewboard.storage.database import Database
from tests.support.databases import PostgresDatabases
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import RAW_HEADERS, body_of, call, mcp_client
from tests.support.server import free_port, running_server
from tests.support.smtp import Received, smtp_server
from tests.support.sse import Reader
from tests.support.tcp_proxy import TcpProxy, proxied
from tests.support.web import sign_in

pytestmark = pytest.mark.postgres

NODE = "node-a"
SENDER = "crewboard@example.com"
WRITERS = 4
RECOVERY = 30.0  # seconds: the bound on every "works again" after the database is back
PAGE = {"accept": "text/html,application/xhtml+xml"}
ALL = [scope.value for scope in Scope]


@dataclass
class Node:
    """One served node whose database connections go through `proxy`, and what it serves."""

    base: str
    proxy: TcpProxy
    direct: Database  # the test's own connection to the same database, around the proxy
    owner: User
    secret: str  # an API token, every scope
    stream_secret: str
    project_id: str
    mail: Received
    public_url: str
    database: str

    def get(self, path: str, **kwargs: Any) -> httpx2.Response:
        headers = {"authorization": f"Bearer {self.secret}", **kwargs.pop("headers", {})}
        return httpx2.get(f"{self.base}{path}", headers=headers, timeout=30, **kwargs)

    def events(self) -> list[int]:
        """The ids of every event of the project, from the database itself."""
        rows = self.direct.read(
            lambda uow: uow.events.list_after(
                project_id=self.project_id, after_id=0, limit=1_000_000
            )
        )
        return [int(r["id"]) for r in rows]


@pytest.fixture
def node(postgres_databases: PostgresDatabases, tmp_path: Path) -> Iterator[Node]:
    url = postgres_databases.new_migrated()
    direct = Database(url)
    try:
        owner = make_user(direct, "owner@example.com", is_owner=True)
        make_project(direct, owner, "CRW")
        me = person_actor(owner)
        secret = tokens.issue_token(direct, me, kind="personal", scopes=ALL).secret
        stream = str(stream_tokens.create_stream_token(direct, me, projects=["CRW"])["secret"])
        found = direct.read(lambda uow: uow.projects.get_by_key("CRW"))
        assert found is not None
        smtp_port = free_port()
        settings = Settings(
            data_dir=tmp_path,
            port=free_port(),
            node_name=NODE,
            smtp_host="127.0.0.1",
            smtp_port=smtp_port,
            smtp_security="none",
            smtp_sender=SENDER,
            smtp_timeout=5,
        )
        with (
            smtp_server(smtp_port) as mail,
            proxied(url) as (proxy, via),
        ):
            node_db = Database(via)
            try:
                with running_server(settings, node_db) as base:
                    yield Node(
                        base, proxy, direct, owner, secret, stream, str(found.id), mail,
                        settings.public_url, str(url.database),
                    )  # fmt: skip
            finally:
                node_db.dispose()
    finally:
        direct.dispose()
        postgres_databases.drop(url)


@dataclass
class Writers:
    """Threads creating tasks over REST, each with its own Idempotency-Key, retrying a write
    that failed with the same key until it is acknowledged (what the README tells clients)."""

    node: Node
    stop: threading.Event = field(default_factory=threading.Event)
    acked: list[str] = field(default_factory=list)
    refusals: list[tuple[int, str]] = field(default_factory=list)  # (status, code) of failures
    threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> Writers:
        for n in range(WRITERS):
            thread = threading.Thread(target=self._write, args=(n,), daemon=True)
            thread.start()
            self.threads.append(thread)
        return self

    def _write(self, writer: int) -> None:
        headers = {"authorization": f"Bearer {self.node.secret}"}
        with httpx2.Client(base_url=self.node.base, headers=headers, timeout=30) as client:
            n = 0
            while not self.stop.is_set():
                key = f"w{writer}-{n}"
                while not self._try(client, key):
                    self.stop.wait(0.1)  # a client's pause before the retry
                n += 1

    def _try(self, client: httpx2.Client, key: str) -> bool:
        try:
            answer = client.post(
                "/api/v1/projects/CRW/tasks",
                json={"workspaceId": None, "title": key},
                headers={"idempotency-key": key},
            )
        except httpx2.TransportError:
            return False
        if answer.status_code == 201:
            self.acked.append(key)
            return True
        code = answer.json().get("error", {}).get("code", "") if answer.content else ""
        self.refusals.append(
            (answer.status_code, code if code == "UNAVAILABLE" else answer.text[:300])
        )
        return False

    def wait_for(self, count: int, timeout: float = RECOVERY) -> None:
        deadline = time.monotonic() + timeout
        while len(self.acked) < count:
            assert time.monotonic() < deadline, (len(self.acked), self.refusals[-3:])
            self.stop.wait(0.05)

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(RECOVERY)
            assert not thread.is_alive()


def until(what: str, check: Callable[[], bool], timeout: float = RECOVERY) -> float:
    """Poll `check` (an HTTP call) until it holds; the seconds it took."""
    started = time.perf_counter()
    while not check():
        assert time.perf_counter() - started < timeout, f"{what}: not within {timeout:.0f} s"
        time.sleep(0.05)  # an HTTP poll has no event to wait on; the bound is above
    return time.perf_counter() - started


def mcp_works(node: Node) -> bool:
    async def call() -> bool:
        async with mcp_client(node.base, node.secret, "legacy") as client:
            result = await client.call_tool("list_projects", {})
            return not result.is_error and bool(body_of(result))

    try:
        return anyio.run(call)
    except Exception:  # any failure means "not yet"
        return False


def rest_works(node: Node) -> bool:
    try:
        return node.get("/api/v1/projects").status_code == 200
    except httpx2.TransportError:
        return False


def recovery(node: Node, healed: float) -> dict[str, float]:
    """Seconds from `healed` to the first MCP call, REST call and 200 from /readyz that work,
    each polled in its own thread."""
    checks = {
        "mcp": lambda: mcp_works(node),
        "rest": lambda: rest_works(node),
        "ready": lambda: ready(node) == 200,
    }
    times: dict[str, float] = {}

    def probe(name: str, check: Callable[[], bool]) -> None:
        until(name, check)
        times[name] = time.perf_counter() - healed

    threads = [threading.Thread(target=probe, args=item) for item in checks.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(RECOVERY + 5)
    assert set(times) == set(checks), f"recovered: {times}"
    return times


def ready(node: Node) -> int:
    return httpx2.get(f"{node.base}/readyz", timeout=30).status_code


def assert_stream_is_the_log(node: Node, reader: Reader, start: int) -> None:
    """The stream carried every event of the project after `start` (the newest when it was
    opened) once, in order, and was never cut."""
    logged = [i for i in node.events() if i > start]
    until(
        "the stream has caught up",
        lambda: bool(reader.events) and reader.events[-1][0] >= logged[-1],
    )
    ids = [i for i, _ in reader.events]
    assert reader.dropped is None
    assert not [c for c in reader.controls if c[0] == "end"], reader.controls
    assert ids == logged  # no gap, no repeat, in order


def assert_acknowledged_writes_are_there_once(node: Node, writers: Writers) -> None:
    titles = node.direct.read(
        lambda uow: [
            r[0]
            for r in uow.conn.execute(
                text("SELECT title FROM tasks WHERE project_id = :p"), {"p": node.project_id}
            )
        ]
    )
    assert len(titles) == len(set(titles))  # a retried key made its task once
    assert set(writers.acked) <= set(titles)


def mail_goes_out(node: Node) -> None:
    """A notification email queued now reaches the SMTP server through the node's mailer."""
    enable_email(node.direct, node.public_url)
    inbox.set_settings(node.direct, person_actor(node.owner), email=True)
    before = len(node.mail.messages)
    node.direct.write(
        lambda uow: notify(
            uow, recipients=[node.owner.id], kind="handoff.created", project_id=None,
            title="After the outage", body="It works.", link="/inbox",
            source=f"test:{before}", in_app=True, email=True,
        )
    )  # fmt: skip
    node.mail.wait_for(before + 1, timeout=RECOVERY)


def outage(node: Node, seconds: float) -> dict[str, float]:
    """Reset the node's database connections for `seconds` under writers and a stream; check
    what it answers meanwhile and that everything works after; the recovery times."""
    start = node.events()[-1]
    reader = Reader(f"{node.base}/api/v1/projects/CRW/events", node.stream_secret)
    assert reader.ready.wait(10)
    browser = sign_in(node.base, node.owner.email)
    writers = Writers(node).start()
    try:
        writers.wait_for(20)
        node.proxy.reset()
        cut = time.perf_counter()
        until("/readyz fails", lambda: ready(node) == 503, timeout=seconds + 5)
        health = httpx2.get(f"{node.base}/healthz", timeout=30)
        assert health.status_code == 200  # alive, only not ready
        refused = node.get("/api/v1/projects")
        assert refused.status_code == 503
        assert refused.json()["error"]["code"] == "UNAVAILABLE"
        assert refused.headers["retry-after"]
        assert refused.headers["x-crewboard-node"] == NODE
        mcp = httpx2.post(
            f"{node.base}/mcp",
            json=call("list_projects", {}),
            headers={**RAW_HEADERS, "authorization": f"Bearer {node.secret}"},
            timeout=30,
        )
        assert mcp.status_code == 503
        assert mcp.json()["error"]["code"] == "UNAVAILABLE"
        assert mcp.headers["x-crewboard-node"] == NODE
        page = browser.get("/p/CRW/board", headers=PAGE)
        assert page.status_code == 503
        assert page.headers["x-crewboard-node"] == NODE
        assert page.headers["content-security-policy"]
        while time.perf_counter() - cut < seconds:  # the outage lasts its time; keep looking
            assert ready(node) == 503
            time.sleep(0.2)  # the outage's length is the subject here
        node.proxy.heal()
        healed = time.perf_counter()
        times = recovery(node, healed)
        events_before = len([t for t in reader.arrived if t < healed])
        until("the stream carries events", lambda: len(reader.arrived) > events_before)
        times["stream"] = reader.arrived[events_before] - healed
        acked = len(writers.acked)
        writers.wait_for(acked + 20)
        assert browser.get("/p/CRW/board", headers=PAGE).status_code == 200
    finally:
        writers.finish()
        browser.close()
    assert not [r for r in writers.refusals if r != (503, "UNAVAILABLE")], writers.refusals
    assert_stream_is_the_log(node, reader, start)
    assert_acknowledged_writes_are_there_once(node, writers)
    mail_goes_out(node)
    loops = httpx2.get(f"{node.base}/readyz", timeout=30).json()["loops"]
    assert {name: view["state"] for name, view in loops.items()} == {
        "live": "running",
        "claims": "running",
        "mail": "running",
        "sessions": "running",
        "webhooks": "running",
    }
    shown = ", ".join(f"{what} {value:.2f} s" for what, value in times.items())
    print(f"\nrecovery after a {seconds:g} s reset: {shown}")  # noqa: T201 - the measurement
    return times


def test_a_node_recovers_from_a_3_second_reset_of_its_database_connections(node: Node) -> None:
    outage(node, 3.0)


@pytest.mark.slow
def test_a_node_recovers_from_a_15_second_reset_of_its_database_connections(node: Node) -> None:
    outage(node, 15.0)


def test_a_node_recovers_when_postgresql_kills_its_backends_mid_write(node: Node) -> None:
    start = node.events()[-1]
    reader = Reader(f"{node.base}/api/v1/projects/CRW/events", node.stream_secret)
    assert reader.ready.wait(10)
    writers = Writers(node).start()
    killed = 0
    try:
        for round_ in range(3):
            writers.wait_for(20 * (round_ + 1))
            with node.direct.engine.connect() as conn:
                killed += len(
                    conn.execute(
                        text(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE datname = :d AND pid <> pg_backend_pid()"
                        ),
                        {"d": node.database},
                    ).all()
                )
        writers.wait_for(len(writers.acked) + 20)
        until("an MCP call works", lambda: mcp_works(node))
        until("ready", lambda: ready(node) == 200)
    finally:
        writers.finish()
    assert killed >= 3
    assert not [r for r in writers.refusals if r != (503, "UNAVAILABLE")], writers.refusals
    assert_stream_is_the_log(node, reader, start)
    assert_acknowledged_writes_are_there_once(node, writers)
    mail_goes_out(node)
