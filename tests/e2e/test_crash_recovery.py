"""`kill -9` of `crewboard serve` in the middle of concurrent keyed writes, ten times over.

Eight clients (half MCP as raw JSON-RPC over HTTP, half REST) create tasks, each write with
its own idempotency key, while the server process is killed with SIGKILL and then started
again on the same database. A write answered before the kill is there as it was answered.
A write whose answer was lost (the connection cut mid-request, or the request sent to a dead
server) is sent again by its client with the same key and the same arguments, maybe through
several more kills, and takes effect exactly once: one task, one ledger entry, one event.

Task numbers stay unique. They are not promised gap-free: a killed transaction rolls back
whatever it took, so today nothing is burnt, but that is not what this test is about.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from sqlalchemy.engine import URL

from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import RAW_HEADERS, call
from tests.support.serve import kill_serve, serve_env, start_serve, stop_serve, wait_healthy
from tests.support.server import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PROJECT = "CRW"
CLIENTS = 8  # even ones speak MCP, odd ones REST
CYCLES = 10
# A kill lands between a commit and its answer in about half the cycles (the watch below);
# until one such write has been retried, up to this many more cycles run.
EXTRA_CYCLES = 10
CYCLE_TIMEOUT = 60  # seconds of writing before a kill; a hang fails instead of waiting
KILL_WATCH = 2.0  # seconds to watch for a committed write not yet answered (below)


def kill_after(cycle: int) -> int:
    """How many answers a cycle sees before the kill: 10 to 38, varied so kills land anywhere."""
    return 10 + (cycle * 7) % 29


@dataclass(frozen=True)
class Write:
    key: str
    client: int
    title: str
    description: str

    @property
    def door(self) -> str:
        return "mcp" if self.client % 2 == 0 else "rest"


@dataclass(frozen=True)
class Answer:
    task_id: str
    number: int
    title: str
    description: str
    replayed: bool


class Refused(Exception):
    """An answer that is neither the task nor a lost connection (a bug: no write fails)."""


async def send(http: httpx2.AsyncClient, write: Write) -> Answer:
    """Create the task through the write's door.

    Raises:
        httpx2.TransportError: the answer was lost (the server died before or while answering).
        Refused: the server answered something other than the task.
    """
    fields = {"workspaceId": None, "title": write.title, "description": write.description}
    if write.door == "mcp":
        arguments = {"projectId": PROJECT, "idempotencyKey": write.key, **fields}
        response = await http.post("/mcp", json=call("create_task", arguments), headers=RAW_HEADERS)
        result = response.json().get("result") if response.status_code == 200 else None
        if result is None or result.get("isError"):
            raise Refused(f"{write.key} (MCP): HTTP {response.status_code} {response.text[:500]}")
        task, replayed = (
            json.loads(result["content"][0]["text"])["task"],
            len(result["content"]) == 2,
        )
    else:
        response = await http.post(
            f"/api/v1/projects/{PROJECT}/tasks", json=fields, headers={"Idempotency-Key": write.key}
        )
        if response.status_code != 201:
            raise Refused(f"{write.key} (REST): HTTP {response.status_code} {response.text[:500]}")
        task, replayed = response.json()["task"], response.json()["replayed"]
    return Answer(task["id"], task["number"], task["title"], task["description"], replayed)


@dataclass
class Run:
    """Everything the clients saw, across cycles."""

    writes: dict[str, Write] = field(default_factory=dict)
    acknowledged: dict[str, Answer] = field(default_factory=dict)
    pending: dict[str, Write] = field(default_factory=dict)  # sent, answer not seen yet
    lost: set[str] = field(default_factory=set)  # keys whose answer was lost at least once
    retried: Counter[str] = field(default_factory=Counter)  # "replayed" / "made" on a retry
    refused: list[str] = field(default_factory=list)
    answers_this_cycle: int = 0
    kills_after_a_commit: int = 0  # kills that came with a committed write still unanswered

    def next_write(self, client: int, cycle: int, index: int) -> Write:
        """This client's oldest write still unanswered, else a new one."""
        for write in self.pending.values():
            if write.client == client:
                return write
        key = f"c{client}-{cycle}-{index}"
        write = Write(key, client, f"Crash {key}", f"Made by client {client} in cycle {cycle}.")
        self.writes[key] = write
        self.pending[key] = write
        return write

    def answered(self, write: Write, answer: Answer) -> None:
        del self.pending[write.key]
        if write.key in self.lost:
            self.retried["replayed" if answer.replayed else "made"] += 1
        self.acknowledged[write.key] = answer


@dataclass
class Instance:
    """The server process and where it keeps its things."""

    database_url: URL
    folder: Path
    secret: str
    starts: list[float] = field(default_factory=list)  # seconds to /healthz, per start
    process: subprocess.Popen[bytes] | None = None
    base: str = ""

    def start(self, name: str) -> None:
        port = free_port()  # a new port each time: nothing waits on the old one's sockets
        self.base = f"http://127.0.0.1:{port}"
        log = self.folder / f"{name}.log"
        started = time.monotonic()
        self.process = start_serve(serve_env(self.database_url, self.folder / "data", port), log)
        wait_healthy(self.base, self.process, log)
        self.starts.append(time.monotonic() - started)

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            base_url=self.base, headers={"Authorization": f"Bearer {self.secret}"}, timeout=30
        )


@pytest.fixture
def instance(db: Database, database_url: URL, tmp_path: Path) -> Iterator[Instance]:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, PROJECT)
    secret = tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=["read", "tasks.manage"]
    ).secret
    made = Instance(database_url, tmp_path, secret)
    yield made
    if made.process is not None and made.process.poll() is None:
        kill_serve(made.process)


async def writer(instance: Instance, run: Run, client: int, cycle: int, kill: anyio.Event) -> None:
    """Write until the server is gone: retries of unanswered writes first, then new ones."""
    async with instance.client() as http:
        for index in range(10_000):
            write = run.next_write(client, cycle, index)
            try:
                answer = await send(http, write)
            except httpx2.TransportError:
                run.lost.add(write.key)
                return
            except Refused as refusal:
                run.refused.append(str(refusal))
            else:
                run.answered(write, answer)
            run.answers_this_cycle += 1
            if run.answers_this_cycle >= kill_after(cycle):
                kill.set()


async def killer(instance: Instance, run: Run, db: Database, kill: anyio.Event) -> None:
    await kill.wait()
    assert instance.process is not None
    await anyio.to_thread.run_sync(kill_after_a_commit_before_its_answer, instance.process, run, db)


def kill_after_a_commit_before_its_answer(
    process: subprocess.Popen[bytes], run: Run, db: Database
) -> None:
    """SIGKILL as soon as the database holds a write whose client has no answer yet.

    That is the case a keyed retry exists for: done, but the client cannot know. The window
    is short (the server is rendering or sending the answer), so it is watched for at most
    KILL_WATCH seconds; then the kill comes anyway, wherever the writes are.
    """
    deadline = time.monotonic() + KILL_WATCH
    while time.monotonic() < deadline:
        unanswered = run.pending.copy()  # one C-level copy: the clients change it meanwhile
        if any(key in unanswered for (key,) in rows(db, "SELECT key FROM idempotency_keys")):
            run.kills_after_a_commit += 1
            break
    process.kill()
    process.wait()


def integrity(db: Database) -> str:
    with db.engine.connect() as conn:
        return "\n".join(str(row[0]) for row in conn.exec_driver_sql("PRAGMA integrity_check"))


def rows(db: Database, sql: str) -> list[Any]:
    with db.engine.connect() as conn:
        return list(conn.exec_driver_sql(sql).all())


async def crash_cycle(instance: Instance, run: Run, db: Database, cycle: int) -> None:
    """Start the server, write from every client at once, SIGKILL it mid-stream."""
    instance.start(f"cycle-{cycle}")
    run.answers_this_cycle = 0
    kill = anyio.Event()
    with anyio.fail_after(CYCLE_TIMEOUT):
        async with anyio.create_task_group() as group:
            group.start_soon(killer, instance, run, db, kill)
            for client in range(CLIENTS):
                group.start_soon(writer, instance, run, client, cycle, kill)
    assert instance.process is not None
    assert instance.process.returncode == -9


def assert_each_write_made_once(db: Database, run: Run) -> None:
    """One task per key with the key's arguments, as answered; one ledger entry, one event."""
    tasks = rows(db, "SELECT id, number, title, description FROM tasks")
    assert Counter(task.title for task in tasks) == Counter(w.title for w in run.writes.values())
    assert len(tasks) == len(run.writes)
    assert len({task.number for task in tasks}) == len(tasks)
    by_id = {task.id: task for task in tasks}
    for key, answer in run.acknowledged.items():
        write = run.writes[key]
        stored = by_id[answer.task_id]
        assert (answer.title, answer.description) == (write.title, write.description)
        assert (stored.number, stored.title, stored.description) == (
            answer.number,
            write.title,
            write.description,
        )
    ledger = rows(
        db, "SELECT key, resource_id FROM idempotency_keys WHERE operation = 'create_task'"
    )
    assert sorted(tuple(entry) for entry in ledger) == sorted(
        (key, answer.task_id) for key, answer in run.acknowledged.items()
    )
    created = rows(db, "SELECT count(*) FROM events WHERE type = 'task.created'")
    assert created[0][0] == len(run.writes)


async def test_kill_9_under_concurrent_keyed_writes_loses_no_answered_write_and_makes_none_twice(
    instance: Instance, db: Database, record_property: Any
) -> None:
    run = Run()
    integrity_checks: list[str] = []
    for cycle in range(CYCLES + EXTRA_CYCLES):
        if cycle >= CYCLES and run.retried["replayed"]:
            break
        await crash_cycle(instance, run, db, cycle)
        if db.dialect == "sqlite":
            integrity_checks.append(integrity(db))
    kills = len(instance.starts)

    instance.start("after")
    async with instance.client() as http:
        for write in list(run.pending.values()):  # one at a time now: nothing kills this server
            run.answered(write, await send(http, write))
    assert instance.process is not None
    assert stop_serve(instance.process) == 0

    record_property("kills", kills)
    record_property("writes", len(run.writes))
    record_property("lost_answers", len(run.lost))
    record_property("kills_after_a_commit", run.kills_after_a_commit)
    record_property("retries_replayed", run.retried["replayed"])
    record_property("retries_made", run.retried["made"])
    record_property("start_seconds", [round(seconds, 2) for seconds in instance.starts])
    assert run.pending == {}
    assert run.lost  # each kill cut some request short
    assert run.retried["replayed"] > 0  # some were done already: the retry must not redo them
    if db.dialect == "sqlite":
        assert integrity_checks == ["ok"] * kills
    assert_each_write_made_once(db, run)
    assert run.refused == []
