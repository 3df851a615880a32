"""REST: code bridges over real HTTP, on both databases. A bridge registers (201), takes a
turn's code call in a long poll and answers it (the turn reads the answer), and closes (204;
then 410). A newer bridge makes the older one 409 with reason `replaced`. Strangers get 401,
another person's or an unknown bridge 404, a token capped at the read role 403 naming the
role; bad bodies 422, and a body larger than the usual 4 MiB is read. Waiting long polls hold
no worker thread: other requests are answered meanwhile."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from crewboard.config import Settings
from crewboard.contract.sessions.present import started_answer
from crewboard.domain.identity.records import User
from crewboard.domain.sessions import Mode
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import sessions
from crewboard.services.sessions.code import CodeAnswer, CodeBridges
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.server import free_port, running_server

pytestmark = pytest.mark.anyio
REGISTER = "/projects/CRW/bridges"
RESULT = {"path": ".", "entries": [{"path": "src", "kind": "folder"}], "truncated": False,
          "hidden": 0}  # fmt: skip


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com")
    make_project(db, user, "CRW")
    return user


def secret_of(db: Database, user: User, **options: Any) -> str:
    options.setdefault("scopes", ["read", "specs.write"])
    return tokens.issue_token(db, person_actor(user), kind="personal", **options).secret


@pytest.fixture
def secret(db: Database, owner: User) -> str:
    return secret_of(db, owner)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # No runner: the session's first turn stays queued; the test makes the turn's code calls.
    return Settings(data_dir=tmp_path, port=free_port(), session_runners=0)


@asynccontextmanager
async def served(
    db: Database, settings: Settings, secret: str | None
) -> AsyncIterator[httpx2.AsyncClient]:
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    with running_server(settings, db) as base:
        async with httpx2.AsyncClient(
            base_url=f"{base}/api/v1", headers=headers, timeout=30
        ) as api:
            yield api


def turn_call(db: Database, owner: User, settings: Settings) -> Callable[[], Any]:
    """A turn of a new session of CRW making one list_folder call; awaiting it answers it."""
    made = sessions.start_session(
        db, person_actor(owner), project="CRW", workspace_id=None, mode=Mode.GENERATE,
        prompt="Read the code.", answer=started_answer,
    ).body  # fmt: skip
    session_id = str(made["sessionId"])
    turn_id = str(made["turnId"])
    code = CodeBridges(db, settings, poll=0.02)

    async def call() -> CodeAnswer:
        return await code.call(
            session_id=session_id, project_id=str(made["projectId"]), user_id=owner.id,
            turn_id=turn_id, tool="list_folder", arguments={"path": "."},
            deadline=anyio.current_time() + 20,
        )  # fmt: skip

    return call


async def register(api: httpx2.AsyncClient, folder: str = "my-repo") -> str:
    answer = await api.post(REGISTER, json={"folder": folder, "client": "crewboard test"})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["bridge"]["id"])


async def test_a_bridge_registers_takes_a_call_answers_it_and_closes(
    db: Database, owner: User, secret: str, settings: Settings
) -> None:
    call = turn_call(db, owner, settings)
    answered: list[CodeAnswer] = []
    async with served(db, settings, secret) as api:
        made = await api.post(REGISTER, json={"folder": "my-repo"})
        bridge = made.json()["bridge"]
        one = f"/bridges/{bridge['id']}"
        with anyio.fail_after(15):
            async with anyio.create_task_group() as tasks:

                async def turn() -> None:
                    answered.append(await call())

                tasks.start_soon(turn)
                taken = await api.post(f"{one}/exchange", json={"waitSeconds": 10})
                calls = taken.json()["calls"]
                answer = {"callId": calls[0]["callId"], "result": RESULT}
                done = await api.post(
                    f"{one}/exchange", json={"answers": [answer], "waitSeconds": 0}
                )
        closed = await api.delete(one)
        again = await api.delete(one)
        after = await api.post(f"{one}/exchange", json={"waitSeconds": 0})
    assert made.status_code == 201
    assert made.json()["waitSeconds"] == 20
    assert bridge["id"].startswith("brg_")
    assert (bridge["projectKey"], bridge["folder"]) == ("CRW", "my-repo")
    assert set(bridge) == {"id", "projectId", "projectKey", "folder", "connectedAt"}
    assert taken.status_code == 200
    assert [(c["tool"], c["arguments"]) for c in calls] == [
        ("list_folder", {"path": ".", "depth": 1})
    ]
    assert (done.status_code, done.json()) == (200, {"calls": []})
    assert json.loads(answered[0].content) == RESULT
    assert (closed.status_code, closed.content) == (204, b"")
    assert again.status_code == 204
    assert (after.status_code, after.json()["error"]["code"]) == (410, "GONE")


async def test_a_newer_bridge_makes_the_older_one_conflict_with_reason_replaced(
    db: Database, owner: User, secret: str, settings: Settings
) -> None:
    async with served(db, settings, secret) as api:
        old = await register(api)
        new = await register(api, "other-checkout")
        refused = await api.post(f"/bridges/{old}/exchange", json={"waitSeconds": 0})
        fine = await api.post(f"/bridges/{new}/exchange", json={"waitSeconds": 0})
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert (error["code"], error["details"]["reason"]) == ("CONFLICT", "replaced")
    assert "crewboard reverse" in error["message"]
    assert (fine.status_code, fine.json()) == (200, {"calls": []})


async def test_strangers_other_people_and_read_capped_tokens_are_refused(
    db: Database, owner: User, secret: str, settings: Settings
) -> None:
    mallory = make_user(db, "mallory@example.com")
    make_project(db, mallory, "MAL")
    theirs = secret_of(db, mallory)
    capped = secret_of(db, owner, project="CRW", role="read")
    read_only = secret_of(db, owner, scopes=["read"])
    async with served(db, settings, secret) as api:
        bridge = await register(api)
        exchange = f"/bridges/{bridge}/exchange"
        anonymous = await api.post(exchange, json={}, headers={"Authorization": ""})
        other = await api.post(exchange, json={}, headers={"Authorization": f"Bearer {theirs}"})
        their_delete = await api.delete(
            f"/bridges/{bridge}", headers={"Authorization": f"Bearer {theirs}"}
        )
        unknown = await api.post("/bridges/brg_nothing/exchange", json={"waitSeconds": 0})
        not_theirs = await api.post(
            REGISTER, json={"folder": "x"}, headers={"Authorization": f"Bearer {theirs}"}
        )
        by_role = await api.post(
            REGISTER, json={"folder": "x"}, headers={"Authorization": f"Bearer {capped}"}
        )
        by_scope = await api.post(
            REGISTER, json={"folder": "x"}, headers={"Authorization": f"Bearer {read_only}"}
        )
        still = await api.post(exchange, json={"waitSeconds": 0})
    assert anonymous.status_code == 401
    assert (other.status_code, other.json()["error"]["code"]) == (404, "NOT_FOUND")
    assert their_delete.status_code == 404
    assert unknown.status_code == 404
    assert not_theirs.status_code == 404  # a project they have no role on does not exist
    assert (by_role.status_code, by_role.json()["error"]["code"]) == (403, "PERMISSION_DENIED")
    assert "write role" in by_role.json()["error"]["message"]
    assert by_scope.status_code == 403
    assert "specs.write" in by_scope.json()["error"]["message"]
    assert still.status_code == 200  # none of that touched the bridge


async def test_bad_bodies_are_refused_naming_the_field_and_a_large_body_is_read(
    db: Database, owner: User, secret: str, settings: Settings
) -> None:
    big = "x" * (250 * 1024)
    async with served(db, settings, secret) as api:
        bridge = await register(api)
        exchange = f"/bridges/{bridge}/exchange"
        answers = {
            "no folder": await api.post(REGISTER, json={"folder": ""}),
            "no body": await api.post(REGISTER),
            "project in body": await api.post(REGISTER, json={"folder": "a", "projectId": "CRW"}),
            "long wait": await api.post(exchange, json={"waitSeconds": 26}),
            "text wait": await api.post(exchange, json={"waitSeconds": "5"}),
            "too many": await api.post(
                exchange,
                json={"answers": [{"callId": f"bcl_{n}", "result": {}} for n in range(51)]},
            ),
            "neither": await api.post(exchange, json={"answers": [{"callId": "bcl_1"}]}),
            "too large": await api.post(
                exchange, json={"answers": [{"callId": "bcl_1", "result": {"text": big * 2}}]}
            ),
            # 20 answers of 250 KiB: past the usual 4 MiB, within what an exchange reads.
            "unknown calls": await api.post(
                exchange,
                json={"answers": [{"callId": f"bcl_{n}", "result": {"t": big}} for n in range(20)]},
            ),
        }
    fields = {
        name: (answer.status_code, answer.json()["error"]["details"].get("field"))
        for name, answer in answers.items()
    }
    assert fields == {
        "no folder": (422, "folder"),
        "no body": (422, "body"),
        "project in body": (422, "projectId"),
        "long wait": (422, "waitSeconds"),
        "text wait": (422, "waitSeconds"),
        "too many": (422, "answers"),
        "neither": (422, "answers[0]"),
        "too large": (422, "answers[0]"),
        "unknown calls": (422, "answers[0].callId"),
    }


async def test_waiting_long_polls_hold_no_worker_thread(
    db: Database, owner: User, secret: str, settings: Settings
) -> None:
    """More long polls than the worker threads (40) wait at once; a read still answers."""
    async with served(db, settings, secret) as api:
        bridge = await register(api)
        exchange = f"/bridges/{bridge}/exchange"
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tasks:
                for _ in range(45):
                    tasks.start_soon(lambda: api.post(exchange, json={"waitSeconds": 3}))
                await anyio.sleep(0.5)
                start = time.monotonic()
                listed = await api.get("/projects")
                seconds = time.monotonic() - start
    assert listed.status_code == 200
    assert seconds < 1.5
