"""The code bridge `crewboard mcp --code` runs in-process: a turn's call answered from the
folder through the bridge service, an outage backed off with the loop's place kept, a newer
bridge stopping it (and only it), and the clean close."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from crewboard.cli.reverse import local
from crewboard.config import Settings
from crewboard.contract.sessions.present import started_answer
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.sessions import Mode
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import bridges, sessions
from crewboard.services.sessions.code import CodeBridges
from crewboard.services.supervisor import Backoff, LoopHealth
from crewboard.storage.database import Database
from crewboard.storage.sessions.tables import code_bridges
from tests.support.factories import make_project, make_user

pytestmark = pytest.mark.anyio
TEXT = "import os\nprint(os.name)\n"


@pytest.fixture
def owner(db: Database) -> User:
    return make_user(db, "alice@example.com")


@pytest.fixture
def project_id(db: Database, owner: User) -> str:
    return make_project(db, owner, "CRW")


@pytest.fixture
def actor(owner: User) -> Actor:
    return person_actor(owner)


@pytest.fixture
def bridge(db: Database, actor: Actor, project_id: str, tmp_path: Path) -> local.LocalBridge:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(TEXT)
    (root / ".env").write_text("KEY=never\n")
    secret = tokens.issue_token(db, actor, kind="personal", scopes=["read", "specs.write"]).secret
    made = local.LocalBridge(
        db, Settings(data_dir=tmp_path / "data"), secret, "CRW", root, wait=0.5
    )
    made.register()
    return made


def health() -> LoopHealth:
    return LoopHealth(local.LOOP, backoff=Backoff(first=0.01, most=0.05))


async def until(check: Callable[[], bool]) -> None:
    """Until `check` holds: the loop under test sets no event to wait on."""
    with anyio.fail_after(10):
        while not check():  # noqa: ASYNC110 - the loop's own state, polled
            await anyio.sleep(0.02)


def closed_at(db: Database) -> list[Any]:
    with db.engine.connect() as conn:
        return [row.closed_at for row in conn.execute(select(code_bridges))]


async def test_a_turn_s_call_is_answered_from_the_folder_and_an_outage_only_delays_it(
    db: Database,
    actor: Actor,
    *,
    project_id: str,
    bridge: local.LocalBridge,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=local.__name__)
    made = sessions.start_session(
        db, actor, project="CRW", workspace_id=None, mode=Mode.GENERATE,
        prompt="Describe the code.", answer=started_answer,
    ).body  # fmt: skip
    session_id = str(made["sessionId"])
    turn_id = db.read(lambda uow: sessions.sessions_of(uow).turns(session_id))[0].id
    failures = [OperationalError("SELECT 1", {}, sqlite3.OperationalError("database is locked"))]
    sent: list[int] = []

    async def flaky(
        db: Database, actor: Actor, bridge_id: str, answers: Sequence[Any], wait: float, **more: Any
    ) -> list[bridges.CallOut]:
        sent.append(len(answers))
        if failures and answers:  # the database goes away just as the answer is sent
            raise failures.pop()
        return await bridges.exchange(db, actor, bridge_id, answers, wait, **more)

    monkeypatch.setattr(local, "exchange", flaky)
    watched = health()
    code = CodeBridges(db, Settings())
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(bridge.run, watched)
            answer = await code.call(
                session_id=session_id, project_id=project_id, user_id=actor.user_id,
                turn_id=turn_id, tool="read_file", arguments={"path": "src/app.py"},
                deadline=anyio.current_time() + 15,
            )  # fmt: skip
            await until(lambda: not watched.failing)  # told once the exchange returns
            tasks.cancel_scope.cancel()
    assert json.loads(answer.content)["text"] == TEXT.rstrip("\n")
    assert failures == []  # the first delivery failed; the same answer went again
    assert sent.count(1) == 2
    assert not watched.failing
    assert "read_file src/app.py lines 1-2" in caplog.messages
    bridge.close()
    assert closed_at(db) != [None]


async def test_a_newer_bridge_stops_this_one_and_the_loop_waits_instead_of_ending(
    db: Database, actor: Actor, bridge: local.LocalBridge, caplog: pytest.LogCaptureFixture
) -> None:
    watched = health()
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(bridge.run, watched)
            bridges.register_bridge(
                db, actor, project="CRW", folder="other", client="crewboard 1", node=None
            )
            await until(lambda: bridge.stopped)
            await anyio.sleep(0.2)  # a loop that returned would be restarted: it must not
            assert watched.restarts == 0
            tasks.cancel_scope.cancel()
    [line] = [r.getMessage() for r in caplog.records if "took over" in r.getMessage()]
    assert "the MCP server goes on" in line
    assert not watched.failing
