"""Code bridges and code calls through the services, on both databases: a turn's call is taken
by the person's bridge and its answer reaches the turn (only a summary stays); registering
again replaces the older bridge and hands its calls back; a call taken and left unanswered is
handed out again; with no bridge the call fails in time; arguments the model wrote wrongly are
answered at once; and two database handles standing for two nodes pass a call and its answer
through the database alone."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from anyio import to_thread
from sqlalchemy import select
from sqlalchemy.engine import URL

from crewboard.config import Settings
from crewboard.contract.sessions.present import started_answer
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.sessions import Mode
from crewboard.errors import (
    Conflict,
    Gone,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    ValidationFailed,
)
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.live import Broker
from crewboard.services.sessions import sessions
from crewboard.services.sessions.bridges import (
    BridgeAnswer,
    CallOut,
    close_bridge,
    exchange,
    register_bridge,
)
from crewboard.services.sessions.code import (
    BridgeGone,
    CodeBridges,
    code_reads,
    live_bridge,
)
from crewboard.storage.database import Database
from crewboard.storage.sessions.tables import code_calls
from tests.support.factories import make_project, make_user

pytestmark = pytest.mark.anyio
T = TypeVar("T")
SLOW_POLL = 30.0  # seconds: a waiter that wakes sooner was woken by the bell


class Turn:
    """A session of project CRW and its first turn, whose model reads code."""

    def __init__(self, db: Database, actor: Actor, project_id: str) -> None:
        made = sessions.start_session(
            db, actor, project="CRW", workspace_id=None, mode=Mode.GENERATE,
            prompt="Describe the code.", answer=started_answer,
        ).body  # fmt: skip
        self.session_id = str(made["sessionId"])
        self.turn_id = db.read(lambda uow: sessions.sessions_of(uow).turns(self.session_id))[0].id
        self.project_id = project_id
        self.user_id = actor.user_id

    def call(
        self, code: CodeBridges, tool: str, arguments: dict[str, Any], seconds: float = 10
    ) -> Callable[[], Awaitable[Any]]:
        async def run() -> Any:
            return await code.call(
                session_id=self.session_id, project_id=self.project_id, user_id=self.user_id,
                turn_id=self.turn_id, tool=tool, arguments=arguments,
                deadline=anyio.current_time() + seconds,
            )  # fmt: skip

        return run


@pytest.fixture
def owner(db: Database) -> User:
    return make_user(db, "alice@example.com")


@pytest.fixture
def actor(owner: User) -> Actor:
    return person_actor(owner)


@pytest.fixture
def turn(db: Database, owner: User, actor: Actor) -> Turn:
    return Turn(db, actor, make_project(db, owner, "CRW"))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path)


def register(db: Database, actor: Actor, folder: str = "my-repo") -> str:
    made = register_bridge(db, actor, project="CRW", folder=folder, client="test", node="a")
    return made.bridge.id


async def both(first: Callable[[], Awaitable[T]], second: Callable[[], Awaitable[Any]]) -> T:
    """Run the two together; what the first answered (or raised)."""
    found: list[T] = []
    failed: list[Exception] = []

    async def keep() -> None:
        try:
            found.append(await first())
        except Exception as error:  # raised below, outside the task group
            failed.append(error)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(keep)
            await second()
    if failed:
        raise failed[0]
    return found[0]


def rows(db: Database) -> list[dict[str, Any]]:
    with db.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(select(code_calls))]


async def take(
    db: Database, actor: Actor, bridge: str, wait: float = 5, **more: Any
) -> list[CallOut]:
    return await exchange(db, actor, bridge, [], wait, **more)


READ = {"path": "src/app.py"}
TEXT = "import os\nprint(os.name)\n"
RESULT = {"path": "src/app.py", "startLine": 1, "endLine": 2, "totalLines": 2, "text": TEXT,
          "truncated": False}  # fmt: skip


async def test_a_call_reaches_the_bridge_and_its_answer_the_turn_leaving_only_a_summary(
    db: Database, actor: Actor, turn: Turn, settings: Settings
) -> None:
    bridge = register(db, actor)
    code = CodeBridges(db, settings, poll=SLOW_POLL)
    waiting = anyio.Event()

    async def bridge_side() -> None:
        # Waits before the call is queued: the in-process bell wakes it, not a poll.
        calls = await exchange(db, actor, bridge, [], 20, poll=SLOW_POLL)
        assert [(c.tool, c.arguments) for c in calls] == [
            ("read_file", {"path": "src/app.py", "startLine": 1, "endLine": 200})
        ]
        waiting.set()
        assert await exchange(db, actor, bridge, [BridgeAnswer(calls[0].call_id, RESULT)], 0) == []

    answer = await both(turn.call(code, "read_file", READ), bridge_side)
    assert waiting.is_set()
    assert answer.is_error is False
    assert json.loads(answer.content) == RESULT
    assert answer.size == len(answer.content)
    (row,) = rows(db)
    assert row["status"] == "answered"
    assert row["answer"] is None  # no code stays in the database
    assert row["summary"] == {"lines": "1-2", "bytes": len(TEXT.encode())}
    (read,) = db.read(lambda uow: code_reads(uow, turn.session_id))
    assert (read.turn_id, read.seq, read.tool, read.status) == (
        turn.turn_id, 1, "read_file", "answered",
    )  # fmt: skip
    assert read.summary == row["summary"]


async def test_an_error_answer_is_an_error_for_the_model_and_its_code_the_summary(
    db: Database, actor: Actor, turn: Turn, settings: Settings
) -> None:
    bridge = register(db, actor)
    code = CodeBridges(db, settings, poll=0.02)
    error = {"code": "secret", "message": ".env is a secret file; it is not read."}

    async def bridge_side() -> None:
        (call,) = await take(db, actor, bridge)
        await exchange(db, actor, bridge, [BridgeAnswer(call.call_id, error=error)], 0)

    answer = await both(turn.call(code, "read_file", {"path": ".env"}), bridge_side)
    assert answer.is_error is True
    assert json.loads(answer.content) == {"error": error}
    assert rows(db)[0]["summary"] == {"error": "secret"}


async def test_registering_again_replaces_the_older_bridge_and_hands_back_its_calls(
    db: Database, actor: Actor, turn: Turn, settings: Settings
) -> None:
    old = register(db, actor)
    code = CodeBridges(db, settings, poll=0.02)
    listing = {"path": ".", "entries": [{"path": "src", "kind": "folder"}], "truncated": False,
               "hidden": 0}  # fmt: skip

    async def bridge_side() -> None:
        (taken,) = await take(db, actor, old)
        new = register(db, actor, "again")
        with pytest.raises(Conflict) as refused:
            await exchange(db, actor, old, [BridgeAnswer(taken.call_id, listing)], 0)
        assert refused.value.details["reason"] == "replaced"
        (again,) = await take(db, actor, new, wait=0)  # at once: back in the queue
        assert again.call_id == taken.call_id
        await exchange(db, actor, new, [BridgeAnswer(again.call_id, listing)], 0)

    answer = await both(turn.call(code, "list_folder", {}), bridge_side)
    assert json.loads(answer.content) == listing
    assert rows(db)[0]["summary"]["entries"] == 1
    live = db.read(lambda uow: live_bridge(uow, project_id=turn.project_id, user_id=turn.user_id))
    assert live is not None
    assert live.folder == "again"


async def test_a_taken_call_left_unanswered_is_handed_out_again_after_the_timeout(
    db: Database, actor: Actor, turn: Turn, clock: ManualClock, tmp_path: Path
) -> None:
    bridge = register(db, actor)
    code = CodeBridges(db, Settings(data_dir=tmp_path, bridge_call_timeout=600), poll=0.02)

    async def bridge_side() -> None:
        (first,) = await take(db, actor, bridge)
        assert await take(db, actor, bridge, wait=0, taken_for=30) == []
        clock.advance(timedelta(seconds=31))  # taken 31 s ago, never answered
        (again,) = await take(db, actor, bridge, wait=0, taken_for=30)
        assert again.call_id == first.call_id
        await exchange(db, actor, bridge, [BridgeAnswer(again.call_id, {"matches": []})], 0)

    answer = await both(turn.call(code, "search_text", {"query": "def main"}), bridge_side)
    assert json.loads(answer.content) == {"matches": []}


async def test_with_no_bridge_the_call_fails_with_bridge_gone_naming_the_command(
    db: Database, turn: Turn, tmp_path: Path
) -> None:
    code = CodeBridges(db, Settings(data_dir=tmp_path, bridge_call_timeout=1), poll=0.02)
    with anyio.fail_after(5), pytest.raises(BridgeGone) as gone:
        await turn.call(code, "list_folder", {"path": "src"})()
    assert "crewboard reverse --project CRW" in gone.value.message
    (row,) = rows(db)
    assert (row["status"], row["summary"]) == ("failed", {"error": "bridge_gone"})


async def test_a_late_answer_to_a_call_the_turn_gave_up_on_is_dropped(
    db: Database, actor: Actor, turn: Turn, settings: Settings
) -> None:
    bridge = register(db, actor)
    code = CodeBridges(db, settings, poll=0.02)
    taken: list[CallOut] = []

    async def bridge_side() -> None:
        taken.extend(await take(db, actor, bridge))

    with pytest.raises(BridgeGone):  # the turn's deadline comes first
        await both(turn.call(code, "list_folder", {}, seconds=0.5), bridge_side)
    late = [BridgeAnswer(taken[0].call_id, {"entries": []})]
    assert await exchange(db, actor, bridge, late, 0) == []
    (row,) = rows(db)
    assert (row["status"], row["answer"]) == ("failed", None)


@pytest.mark.parametrize(
    "wrong",
    [
        ("read_file", {"path": 5}, "path"),
        ("read_file", {}, "path"),
        ("read_file", {"path": "a.py", "startLine": 1, "endLine": 900}, "endLine"),
        ("list_folder", {"depth": 4}, "depth"),
        ("list_folder", {"depth": True}, "depth"),
        ("search_text", {"query": "x", "regex": True}, "regex"),
        ("run_shell", {"command": "ls"}, "tool"),
    ],
)
async def test_arguments_the_model_wrote_wrongly_are_answered_at_once_and_never_sent(
    db: Database, turn: Turn, settings: Settings, wrong: tuple[str, dict[str, Any], str]
) -> None:
    tool, arguments, field = wrong
    code = CodeBridges(db, settings)
    with anyio.fail_after(1):
        answer = await turn.call(code, tool, arguments)()
    assert answer.is_error is True
    error = json.loads(answer.content)["error"]
    assert error["code"] == "bad_arguments"
    assert error["message"].startswith(f"{field}:")
    assert rows(db) == []


@pytest.fixture
def second_node(database_url: URL, clock: ManualClock) -> Iterator[Database]:
    """Another handle on the same database: another node (its own pool, its own bell)."""
    other = Database(database_url, clock=clock)
    yield other
    other.dispose()


async def test_a_call_queued_on_one_node_is_answered_through_another(
    db: Database, second_node: Database, actor: Actor, turn: Turn, settings: Settings
) -> None:
    code = CodeBridges(db, settings, poll=0.02)  # node A runs the turn
    bridge = register(second_node, actor)  # node B holds the bridge's long poll

    async def bridge_side() -> None:
        (call,) = await exchange(second_node, actor, bridge, [], 10, poll=0.02)
        await exchange(second_node, actor, bridge, [BridgeAnswer(call.call_id, RESULT)], 0)

    answer = await both(turn.call(code, "read_file", READ), bridge_side)
    assert json.loads(answer.content) == RESULT
    assert rows(db)[0]["answer"] is None


async def test_on_postgresql_the_other_node_is_woken_at_once_not_at_its_next_look(
    db: Database, second_node: Database, actor: Actor, turn: Turn, settings: Settings
) -> None:
    if db.dialect != "postgresql":
        pytest.skip("one node on SQLite: its bell wakes both sides")
    # Both sides look at the database only every 30 s: the call goes and its answer comes back
    # within the test's 10 s only because each node's broker hears the other's NOTIFY.
    code = CodeBridges(db, settings, poll=SLOW_POLL)  # node A runs the turn
    other = CodeBridges(second_node, settings, poll=SLOW_POLL)  # node B holds the bridge
    brokers = [Broker(db, poll=SLOW_POLL), Broker(second_node, poll=SLOW_POLL)]
    for broker, node in zip(brokers, (code, other), strict=True):
        broker.listen_also(node.channel, node.heard)
    bridge = register(second_node, actor)

    async def bridge_side() -> None:
        (call,) = await exchange(second_node, actor, bridge, [], 10, poll=SLOW_POLL)
        await exchange(second_node, actor, bridge, [BridgeAnswer(call.call_id, RESULT)], 0)

    async with anyio.create_task_group() as listening:
        for broker in brokers:
            listening.start_soon(broker.run)
        for broker in brokers:  # both LISTEN connections are up
            await to_thread.run_sync(broker.listening.wait, 10)
        answer = await both(turn.call(code, "read_file", READ), bridge_side)
        listening.cancel_scope.cancel()
    assert json.loads(answer.content) == RESULT


async def test_wait_for_bridge_answers_the_live_bridge_once_one_registers(
    db: Database, actor: Actor, turn: Turn, settings: Settings, clock: ManualClock
) -> None:
    code = CodeBridges(db, settings, poll=SLOW_POLL)
    soon = anyio.current_time() + 0.2
    assert await code.wait_for_bridge(project_id=turn.project_id, user_id=turn.user_id,
                                      deadline=soon) is None  # fmt: skip

    async def connect() -> None:
        await anyio.sleep(0.05)
        register(db, actor)

    found = await both(
        lambda: code.wait_for_bridge(
            project_id=turn.project_id, user_id=turn.user_id, deadline=anyio.current_time() + 9
        ),
        connect,
    )
    assert found is not None
    assert found.folder == "my-repo"
    clock.advance(timedelta(seconds=46))  # not seen for 46 s: not live
    assert db.read(lambda uow: live_bridge(uow, project_id=turn.project_id,
                                           user_id=turn.user_id)) is None  # fmt: skip


async def test_closing_hands_the_calls_back_and_the_closed_bridge_is_gone(
    db: Database, actor: Actor, turn: Turn, settings: Settings
) -> None:
    bridge = register(db, actor)
    code = CodeBridges(db, settings, poll=0.02)

    async def bridge_side() -> None:
        (call,) = await take(db, actor, bridge)
        close_bridge(db, actor, bridge)
        close_bridge(db, actor, bridge)  # again: nothing changes
        with pytest.raises(Gone):
            await take(db, actor, bridge, wait=0)
        (again,) = await take(db, actor, register(db, actor), wait=0)
        assert again.call_id == call.call_id
        await exchange(db, actor, register(db, actor), [], 0)  # replaced the one that took it

    with pytest.raises(BridgeGone):
        await both(turn.call(code, "list_folder", {}, seconds=1), bridge_side)


async def test_exchange_refuses_what_is_not_the_bridge_s_to_answer(
    db: Database, owner: User, actor: Actor, turn: Turn
) -> None:
    bridge = register(db, actor)
    stranger = person_actor(make_user(db, "mallory@example.com"))
    with pytest.raises(NotFound):
        await take(db, stranger, bridge, wait=0)
    with pytest.raises(NotFound):
        await take(db, actor, "brg_nothing", wait=0)
    unknown = [BridgeAnswer("bcl_nothing", {"entries": []})]
    with pytest.raises(ValidationFailed) as refused:
        await exchange(db, actor, bridge, unknown, 0)
    assert refused.value.details["field"] == "answers[0].callId"
    both_kinds = [BridgeAnswer("bcl_x", {"a": 1}, {"code": "secret", "message": "no"})]
    with pytest.raises(ValidationFailed):
        await exchange(db, actor, bridge, both_kinds, 0)
    huge = [BridgeAnswer("bcl_x", {"text": "x" * (256 * 1024)})]
    with pytest.raises(LimitExceeded) as too_big:
        await exchange(db, actor, bridge, huge, 0)
    assert too_big.value.details["field"] == "answers[0]"


async def test_a_token_capped_at_read_cannot_register_and_the_refusal_names_the_role(
    db: Database, owner: User, actor: Actor, turn: Turn
) -> None:
    secret = tokens.issue_token(
        db, actor, kind="personal", scopes=["read", "specs.write"], project="CRW", role="read"
    ).secret
    reader = tokens.authenticate_token(db, secret)
    with pytest.raises(PermissionDenied) as refused:
        register(db, reader)
    assert "write role" in refused.value.message
    assert db.read(lambda uow: live_bridge(uow, project_id=turn.project_id,
                                           user_id=turn.user_id)) is None  # fmt: skip
