"""Concurrent edits of one task through MCP and REST at once, against a real server.

No update may be lost: every writer reads, changes and writes back with the revision it read,
and a stale revision is refused (REVISION_CONFLICT), never applied over someone else's change.
A keyed create retried by many clients at once makes one task.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
import httpx2
import pytest
from mcp import Client

from crewboard.config import Settings
from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, make_project, make_user
from tests.support.mcp_client import MODES, body_of, mcp_client
from tests.support.server import free_port, running_server

pytestmark = pytest.mark.anyio

CLIENTS = 20  # half through MCP (both protocol eras), half through REST
UPDATES = 10  # successful updates each client makes (200 in all, thousands of conflicts)
TIMEOUT = 240  # seconds for a whole scenario; a lost wake-up or a hang fails instead of waiting


@dataclass
class Setup:
    base: str
    secret: str
    owner: User


@pytest.fixture
def setup(db: Database, tmp_path: Path) -> Iterator[Setup]:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    secret = tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=["read", "tasks.manage"]
    ).secret
    with running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base:
        yield Setup(base, secret, owner)


class Door(Protocol):
    name: str

    async def read(self, task_id: str) -> tuple[int, str]: ...

    async def update(self, task_id: str, revision: int, description: str, key: str) -> int | None:
        """The new revision, or None when the revision was stale (anything else fails)."""
        ...

    async def create(self, arguments: dict[str, Any], key: str) -> tuple[str, bool]:
        """The task id the answer names, and whether it says it is a replay."""
        ...


@dataclass
class McpDoor:
    name: str
    client: Client

    async def read(self, task_id: str) -> tuple[int, str]:
        result = await self.client.call_tool(
            "get_task", {"taskId": task_id, "includeContextPack": False}
        )
        task = body_of(result)["task"]
        return task["revision"], task["description"]

    async def update(self, task_id: str, revision: int, description: str, key: str) -> int | None:
        result = await self.client.call_tool(
            "update_task",
            {
                "projectId": "CRW",
                "workspaceId": None,
                "idempotencyKey": key,
                "taskId": task_id,
                "expectedRevision": revision,
                "patch": {"description": description},
            },
        )
        if result.is_error:
            return stale(result.structured_content, revision)
        return int(body_of(result)["task"]["revision"])

    async def create(self, arguments: dict[str, Any], key: str) -> tuple[str, bool]:
        result = await self.client.call_tool(
            "create_task", {"projectId": "CRW", "idempotencyKey": key, **arguments}
        )
        assert not result.is_error, result.structured_content
        return body_of(result)["task"]["id"], len(result.content) == 2


@dataclass
class RestDoor:
    name: str
    http: httpx2.AsyncClient

    async def read(self, task_id: str) -> tuple[int, str]:
        response = await self.http.get(f"/tasks/{task_id}", params={"includeContextPack": "false"})
        assert response.status_code == 200, response.text
        task = response.json()["task"]
        return task["revision"], task["description"]

    async def update(self, task_id: str, revision: int, description: str, key: str) -> int | None:
        response = await self.http.patch(
            f"/tasks/{task_id}",
            json={"description": description},
            headers={"If-Match": f'"{revision}"', "Idempotency-Key": key},
        )
        if response.status_code == 412:
            return stale(response.json()["error"], revision)
        assert response.status_code == 200, response.text
        return int(response.json()["task"]["revision"])

    async def create(self, arguments: dict[str, Any], key: str) -> tuple[str, bool]:
        response = await self.http.post(
            "/projects/CRW/tasks", json=arguments, headers={"Idempotency-Key": key}
        )
        assert response.status_code == 201, response.text
        return response.json()["task"]["id"], response.json()["replayed"]


def stale(error: dict[str, Any] | None, revision: int) -> None:
    """A refused write must be a revision conflict naming a newer revision, who and when."""
    assert error is not None
    assert error["code"] == "REVISION_CONFLICT", error
    assert error["details"]["currentRevision"] > revision
    assert error["details"]["updatedBy"]["displayName"] == "owner"
    assert error["details"]["updatedAt"]


@asynccontextmanager
async def doors(setup: Setup, count: int) -> AsyncIterator[list[Door]]:
    """`count` connected clients, alternating MCP (both eras in turn) and REST."""
    async with AsyncExitStack() as stack:
        opened: list[Door] = []
        for index in range(count):
            name = f"c{index:02d}"
            if index % 2 == 0:
                mode = MODES[(index // 2) % len(MODES)]
                client = await stack.enter_async_context(mcp_client(setup.base, setup.secret, mode))
                opened.append(McpDoor(f"{name}-mcp", client))
            else:
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(
                        base_url=f"{setup.base}/api/v1",
                        headers={"Authorization": f"Bearer {setup.secret}"},
                        timeout=30,
                    )
                )
                opened.append(RestDoor(f"{name}-rest", http))
        yield opened


@dataclass
class Tally:
    revisions: list[int] = field(default_factory=list)
    conflicts: Counter[str] = field(default_factory=Counter)


async def writer(door: Door, task_id: str, start: anyio.Event, tally: Tally) -> None:
    """Read-modify-write until UPDATES writes went through, each adding one unique fragment."""
    await start.wait()
    attempts = 0
    done = 0
    while done < UPDATES:
        revision, description = await door.read(task_id)
        attempts += 1
        won = await door.update(
            task_id, revision, f"{description}[{door.name}.{done}]", key=f"{door.name}-{attempts}"
        )
        if won is None:
            tally.conflicts[door.name] += 1
        else:
            tally.revisions.append(won)
            done += 1


def task_events(db: Database, type_: str, task_id: str) -> int:
    with db.engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT payload FROM events WHERE type = ?"
            if db.dialect == "sqlite"
            else "SELECT payload FROM events WHERE type = %s",
            (type_,),
        ).all()
    payloads = [row[0] if isinstance(row[0], dict) else json.loads(row[0]) for row in rows]
    return sum(1 for payload in payloads if payload["task"]["id"] == task_id)


@pytest.mark.slow  # about 30 s on SQLite, 80 s on PostgreSQL (2 CPUs)
async def test_twenty_clients_on_mcp_and_rest_lose_no_update_of_one_task(
    setup: Setup, db: Database, record_property: Any
) -> None:
    made = tasks.create_task(
        db,
        person_actor(setup.owner),
        project="CRW",
        workspace_id=None,
        idempotency_key=None,
        title="Contended",
    )
    task_id = made.body["task"]["id"]
    initial = made.body["task"]["revision"]
    tally = Tally()
    start = anyio.Event()
    with anyio.fail_after(TIMEOUT):
        async with doors(setup, CLIENTS) as opened:
            async with anyio.create_task_group() as group:
                for door in opened:
                    group.start_soon(writer, door, task_id, start, tally)
                start.set()
            final_revision, description = await opened[0].read(task_id)

    total = CLIENTS * UPDATES
    record_property("conflicts", sum(tally.conflicts.values()))
    assert final_revision == initial + total
    assert sorted(tally.revisions) == list(range(initial + 1, initial + total + 1))
    assert sum(tally.conflicts.values()) > 0  # 20 writers of one row cannot all be lucky
    assert {name.split("-")[1] for name in tally.conflicts} <= {"mcp", "rest"}
    fragments = Counter(part for part in description.strip("[]").split("]["))
    assert len(fragments) == total
    assert set(fragments.values()) == {1}
    for index in range(CLIENTS):
        door = f"c{index:02d}-{'mcp' if index % 2 == 0 else 'rest'}"
        assert all(fragments[f"{door}.{n}"] == 1 for n in range(UPDATES))
    assert task_events(db, "task.updated", task_id) == total


async def test_twenty_identical_keyed_creates_at_once_make_one_task(
    setup: Setup, db: Database
) -> None:
    arguments = {"workspaceId": None, "title": "Only once", "description": "made by a retry storm"}
    answers: list[tuple[str, bool]] = []
    start = anyio.Event()

    async def creator(door: Door) -> None:
        await start.wait()
        answers.append(await door.create(arguments, "storm-1"))

    with anyio.fail_after(TIMEOUT):
        async with doors(setup, CLIENTS) as opened, anyio.create_task_group() as group:
            for door in opened:
                group.start_soon(creator, door)
            start.set()

    assert len(answers) == CLIENTS
    ids = {task_id for task_id, _ in answers}
    assert len(ids) == 1
    assert sorted(replayed for _, replayed in answers) == [False] + [True] * (CLIENTS - 1)
    assert count_rows(db, "tasks") == 1
    assert task_events(db, "task.created", ids.pop()) == 1


CREATES = 25  # tasks each of the 20 clients creates


@pytest.mark.slow  # about 8 s on SQLite, 12 s on PostgreSQL (2 CPUs)
async def test_twenty_concurrent_creators_number_five_hundred_tasks_without_gap_or_repeat(
    setup: Setup, db: Database
) -> None:
    made: list[str] = []
    start = anyio.Event()

    async def creator(door: Door) -> None:
        await start.wait()
        for n in range(CREATES):
            task_id, replayed = await door.create(
                {"workspaceId": None, "title": f"{door.name} #{n}"}, f"{door.name}-{n}"
            )
            assert not replayed
            made.append(task_id)

    with anyio.fail_after(TIMEOUT):
        async with doors(setup, CLIENTS) as opened, anyio.create_task_group() as group:
            for door in opened:
                group.start_soon(creator, door)
            start.set()

    total = CLIENTS * CREATES
    assert len(set(made)) == total  # every create answered, none failed (create() asserts it)
    with db.engine.connect() as conn:
        numbers = sorted(n for (n,) in conn.exec_driver_sql("SELECT number FROM tasks"))
    assert numbers == list(range(1, total + 1))
