"""Webhooks sent by `crewboard serve` processes, on both databases: a node killed with SIGKILL
while a delivery is in flight sends it again, once, after it starts again, and the rest follow
in order; on PostgreSQL two nodes taking writes at once deliver each event once, in order."""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest
from sqlalchemy import select
from sqlalchemy.engine import URL

from crewboard.domain.webhooks import PING
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.webhooks import subscriptions
from crewboard.services.webhooks.sending import configure, policy_from
from crewboard.storage import schema
from crewboard.storage.database import Database
from tests.conftest import ONLY_POSTGRESQL
from tests.support.factories import make_project, make_user
from tests.support.serve import kill_serve, serve_env, start_serve, stop_serve, wait_healthy
from tests.support.server import free_port
from tests.support.webhook_receiver import Receiver

# Server processes, a kill and a lease to run out: about 40 s in all, in the slow run.
pytestmark = pytest.mark.slow

LOOPBACK = "127.0.0.1/32"
TIMEOUT = 1.0  # the nodes' webhook timeout: a lease is 3 × this + 2 s


@dataclass
class Node:
    """One `crewboard serve` process on the test's database."""

    database_url: URL
    folder: Path
    token: str
    process: subprocess.Popen[bytes] | None = None
    base: str = ""
    logs: list[Path] = field(default_factory=list)

    def start(self, name: str) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        env = serve_env(self.database_url, self.folder / "data", port)
        env |= {
            "CREWBOARD_WEBHOOK_ALLOW_NETWORKS": LOOPBACK,
            "CREWBOARD_WEBHOOK_TIMEOUT": str(TIMEOUT),
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        log = self.folder / f"{name}.log"
        self.logs.append(log)
        self.process = start_serve(env, log)
        wait_healthy(self.base, self.process, log)

    def create_task(self, title: str) -> None:
        answer = httpx2.post(
            f"{self.base}/api/v1/projects/CRW/tasks",
            json={"title": title},
            headers={"Authorization": f"Bearer {self.token}", "Idempotency-Key": title},
            timeout=30,
        )
        assert answer.status_code in (200, 201), answer.text


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver().start()
    yield running
    running.stop()


@pytest.fixture
def token(db: Database) -> str:
    """A token of the project's owner that creates tasks over REST."""
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    return tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=["read", "tasks.manage"]
    ).secret


def make_webhook(db: Database, url: str) -> tuple[str, str]:
    configure(db, policy_from(LOOPBACK, TIMEOUT, 262_144, 24))
    owner = db.read(lambda uow: uow.users.get_by_email("owner@example.com"))
    assert owner is not None
    made = subscriptions.create_webhook(db, person_actor(owner), "CRW", url=url, events=["*"])
    return made.webhook.id, made.secret


def task_event_ids(db: Database) -> list[int]:
    e = schema.events.c
    with db.engine.connect() as conn:
        query = select(e.id).where(e.type.like("task.%")).order_by(e.id)
        return [int(row[0]) for row in conn.execute(query)]


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)  # a separate process's progress: nothing here to wait on
    pytest.fail(f"{what} within {timeout:.0f} s")


def nodes_of(count: int, database_url: URL, tmp_path: Path, token: str) -> Iterator[list[Node]]:
    nodes = [Node(database_url, tmp_path / f"n{n}", token) for n in range(count)]
    try:
        yield nodes
    finally:
        for node in nodes:
            if node.process is not None and node.process.poll() is None:
                kill_serve(node.process)


@pytest.fixture
def one_node(database_url: URL, tmp_path: Path, token: str) -> Iterator[list[Node]]:
    yield from nodes_of(1, database_url, tmp_path, token)


@pytest.fixture
def two_nodes(database_url: URL, tmp_path: Path, token: str) -> Iterator[list[Node]]:
    yield from nodes_of(2, database_url, tmp_path, token)


def test_a_node_killed_mid_delivery_sends_it_again_once_after_it_starts(
    db: Database, receiver: Receiver, one_node: list[Node]
) -> None:
    (node,) = one_node
    webhook_id, secret = make_webhook(db, receiver.url)
    node.start("first")
    receiver.mode = "stall"  # the first delivery is held, unanswered, while the node is killed
    for n in range(5):
        node.create_task(f"Task {n}")
    assert receiver.wait_held(1), "the node sent nothing"
    held = receiver.held[0]
    assert node.process is not None
    kill_serve(node.process)  # between the event's commit and its acknowledgement
    receiver.mode = "ok"
    receiver.released.set()
    node.start("again")
    expected = task_event_ids(db)
    wait_until(lambda: len(receiver.requests) >= len(expected), 30, "every event delivered")
    time.sleep(TIMEOUT)  # a second copy of any event would arrive in this window
    got = receiver.requests
    assert [r.event_id for r in got] == expected  # each once, in commit order
    assert got[0].event_id == held.event_id
    assert got[0].headers["crewboard-delivery"] == held.headers["crewboard-delivery"]
    assert all(r.verified(secret, time.time()) for r in got)
    assert all(r.headers["crewboard-webhook"] == webhook_id for r in got)
    assert node.process is not None
    assert stop_serve(node.process) == 0


@ONLY_POSTGRESQL
def test_two_nodes_taking_writes_at_once_deliver_each_event_once_in_order(
    db: Database, receiver: Receiver, two_nodes: list[Node]
) -> None:
    _webhook_id, secret = make_webhook(db, receiver.url)
    for n, node in enumerate(two_nodes):
        node.start(f"node{n}")
    for n in range(20):
        two_nodes[n % 2].create_task(f"Task {n}")
    expected = task_event_ids(db)
    wait_until(lambda: len(receiver.requests) >= len(expected), 30, "every event delivered")
    time.sleep(TIMEOUT)  # a second copy of any event would arrive in this window
    ids = [r.event_id for r in receiver.requests if r.headers["crewboard-event"] != PING]
    assert Counter(ids).most_common(1)[0][1] == 1
    assert ids == expected
    assert all(r.verified(secret, time.time()) for r in receiver.requests)
    for node in two_nodes:
        assert node.process is not None
        assert stop_serve(node.process) == 0
