"""A turn of a session that reads code, on both databases: the model's code calls go through the
bridge (a test double at the CodeTools port) and come back to it as tool results, round after
round; the turn's bounds cut the reading short with a note and one last round without tools;
a bridge that goes away, or none connected, fails the turn saying what to run; a bridge that
connects while the turn waits lets it go on; a model that takes no tools writes without them
and the session says so; and the session's warnings on its answers and its page."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from crewboard.config import Settings
from crewboard.contract.sessions import present
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.sessions import Mode, ModelRead
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import conversation, models, sessions
from crewboard.services.sessions.bridges import BridgeAnswer, exchange, register_bridge
from crewboard.services.sessions.code import CODE_TOOLS, BridgeGone, CodeAnswer, CodeBridges
from crewboard.services.sessions.providers import ProviderError, ToolCall
from crewboard.services.sessions.providers.memory import MemoryProvider, ScriptedReply
from crewboard.services.sessions.runner import SessionRunner
from crewboard.services.sessions.turn_loop import BUDGET_NOTE
from crewboard.services.sessions.waiting import follow_turn
from crewboard.storage.database import Database
from crewboard.web.pages.sessions import pages
from crewboard.web.render import render
from tests.support.factories import make_project, make_user
from tests.support.sessions import code_reading_workflow

pytestmark = pytest.mark.anyio


@dataclass
class Bridge:
    id: str = "brg_test"


class FakeCode:
    """The code bridge at its port: a bridge connected or not (or connecting later), and the
    answers it gives, recorded with the calls it was asked."""

    def __init__(self, *, connected: bool = True, size: int = 100) -> None:
        self.bridge: Bridge | None = Bridge() if connected else None
        self.connected = anyio.Event()
        self.waiting = anyio.Event()
        self.waits: list[tuple[str, str, float]] = []
        self.calls: list[dict[str, Any]] = []
        self.size = size
        self.gone: str | None = None

    def connect(self) -> None:
        self.bridge = Bridge()
        self.connected.set()

    async def wait_for_bridge(
        self, *, project_id: str, user_id: str, deadline: float
    ) -> object | None:
        self.waits.append((project_id, user_id, deadline))
        self.waiting.set()
        if self.bridge is None:
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                await self.connected.wait()
        return self.bridge

    async def call(
        self,
        *,
        session_id: str,
        project_id: str,
        user_id: str,
        turn_id: str,
        tool: str,
        arguments: dict[str, Any],
        deadline: float,
    ) -> CodeAnswer:
        self.calls.append({"session": session_id, "project": project_id, "user": user_id,
                           "turn": turn_id, "tool": tool, "arguments": arguments,
                           "left": deadline - anyio.current_time()})  # fmt: skip
        if self.gone is not None:
            raise BridgeGone(self.gone)
        content = json.dumps({"path": arguments.get("path"), "text": "x" * self.size})
        return CodeAnswer(content=content, is_error=False, size=self.size)


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com", is_owner=True)
    make_project(db, user, "CRW")
    values = models.check_provider(
        provider_id="scripted", kind="openai", base_url="http://127.0.0.1:9/v1", key_env=None,
        key_file=None, timeout=5, max_retries=0,
    )  # fmt: skip
    models.do_put_provider(db, None, values)
    models.do_put_model(db, None, model_id="m", provider_id="scripted", model="m-1",
                        is_default=True)  # fmt: skip
    return user


@pytest.fixture
def person(owner: User) -> Actor:
    return person_actor(owner)


@pytest.fixture
def reads_code(monkeypatch: pytest.MonkeyPatch) -> str:
    return code_reading_workflow(monkeypatch)


def runner(
    db: Database, tmp_path: Path, model: MemoryProvider, code: FakeCode | None, **settings: Any
) -> SessionRunner:
    return SessionRunner(
        db, Settings(data_dir=tmp_path, **settings), providers=lambda _config: model, code=code
    )


def start(db: Database, actor: Actor, workflow_id: str | None) -> tuple[str, str]:
    made = sessions.start_session(
        db, actor, project="CRW", workspace_id=None, mode=Mode.GENERATE, workflow_id=workflow_id,
        prompt="Spec the CSV export of this codebase.", answer=present.started_answer,
    )  # fmt: skip
    return str(made.body["sessionId"]), str(made.body["turnId"])


def found(db: Database, actor: Actor, session_id: str) -> dict[str, Any]:
    return present.found_answer(
        sessions.get_session(db, actor, project="CRW", ref=session_id), "http://127.0.0.1"
    )


def replies(db: Database, actor: Actor, session_id: str) -> list[str]:
    page = conversation.session_page(db, actor, project="CRW", ref=session_id)
    return [m.text for m in page.messages if m.role == "assistant"]


def reads(*calls: tuple[str, str, dict[str, Any]]) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(ident, name, arguments) for ident, name, arguments in calls)


async def test_each_code_call_goes_through_the_bridge_and_back_to_the_model_as_a_tool_result(
    db: Database, owner: User, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    model = MemoryProvider()
    model.call_tools(
        ToolCall("c1", "read_file", {"path": "src/app.py"}),
        ToolCall("c2", "search_text", {"query": "csv"}),
        text="Let me look at the code.",
    )
    model.reply("The app has no export yet. What should the CSV hold?")
    code = FakeCode()
    session_id, turn_id = start(db, person, reads_code)
    await runner(db, tmp_path, model, code).drain()
    assert [(c["tool"], c["arguments"]) for c in code.calls] == [
        ("read_file", {"path": "src/app.py"}), ("search_text", {"query": "csv"}),
    ]  # fmt: skip
    project_id = found(db, person, session_id)["session"]["projectId"]
    assert {(c["session"], c["project"], c["user"], c["turn"]) for c in code.calls} == {
        (session_id, project_id, owner.id, turn_id)
    }
    assert all(0 < c["left"] <= 600 for c in code.calls)  # within the turn's deadline
    assert code.waits[0][:2] == (project_id, owner.id)
    first, second = model.requests
    assert first.tools == second.tools == CODE_TOOLS
    asked, answered = second.messages[-2], second.messages[-1]
    assert (asked.role, [c.id for c in asked.tool_calls]) == ("assistant", ["c1", "c2"])
    assert answered.role == "user"
    assert [r.call_id for r in answered.tool_results] == ["c1", "c2"]
    assert json.loads(answered.tool_results[0].content)["path"] == "src/app.py"
    assert replies(db, person, session_id) == [
        "Let me look at the code.\n\nThe app has no export yet. What should the CSV hold?"
    ]
    assert found(db, person, session_id)["session"]["status"] == "waiting"


async def test_every_round_s_text_streams_into_the_reply_so_far(
    db: Database, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    held = anyio.Event()
    model = MemoryProvider(
        ScriptedReply(
            "Reading the code first.", tool_calls=reads(("c1", "read_file", {"path": "a"}))
        ),
        ScriptedReply("Now my questions.", wait_for=held),
    )
    session_id, turn_id = start(db, person, reads_code)
    run = runner(db, tmp_path, model, FakeCode())
    seen = ""
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run.drain)
        async for turn in follow_turn(db, turn_id, seconds=10, poll=0.05):
            seen = turn.partial
            if "Reading the code first." in seen:
                break
        held.set()
    assert seen.startswith("Reading the code first.")
    assert replies(db, person, session_id) == ["Reading the code first.\n\nNow my questions."]


async def test_the_call_bound_answers_the_calls_left_with_a_refusal_and_ends_with_a_note(
    db: Database, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    model = MemoryProvider()
    model.call_tools(("read_file", {"path": "a"}), ("read_file", {"path": "b"}),
                     ("read_file", {"path": "c"}))  # fmt: skip
    model.reply("Written from what I read.")
    code = FakeCode()
    session_id, _ = start(db, person, reads_code)
    await runner(db, tmp_path, model, code, session_code_calls=2).drain()
    assert [c["arguments"]["path"] for c in code.calls] == ["a", "b"]
    last = model.requests[-1]
    assert last.tools == ()
    # Without tools the request holds no tool blocks: the calls and answers are in its text.
    assert not any(m.tool_calls or m.tool_results for m in last.messages)
    called, note = last.messages[-2].content, last.messages[-1].content
    assert called.count("[I called read_file") == 3
    assert note.endswith(BUDGET_NOTE)
    answers = note.split("[read_file ")[1:]
    assert ['"budget_spent"' in answer for answer in answers] == [False, False, True]
    assert replies(db, person, session_id) == ["Written from what I read."]


async def test_the_character_bound_stops_the_reading_after_the_answer_that_spends_it(
    db: Database, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    model = MemoryProvider()
    model.call_tools(("read_file", {"path": "big.py"}), text="One file.")
    model.reply("Enough read.")
    code = FakeCode(size=1_500)
    session_id, _ = start(db, person, reads_code)
    await runner(db, tmp_path, model, code, session_code_chars=1_000).drain()
    assert len(code.calls) == 1
    assert len(model.requests) == 2
    last = model.requests[-1]
    assert last.tools == ()
    assert last.messages[-1].content.endswith(BUDGET_NOTE)
    assert replies(db, person, session_id) == ["One file.\n\nEnough read."]


async def test_a_bridge_gone_mid_turn_fails_the_turn_with_its_message(
    db: Database, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    model = MemoryProvider()
    model.call_tools(("read_file", {"path": "a"}), text="Looking.")
    code = FakeCode()
    code.gone = "The bridge of alice stopped answering: run `crewboard reverse` again."
    session_id, _ = start(db, person, reads_code)
    (outcome,) = await runner(db, tmp_path, model, code).drain()
    assert outcome.status.value == "failed"
    session = found(db, person, session_id)["session"]
    assert session["status"] == "failed"
    assert session["lastError"] == {"code": "bridge_gone", "message": code.gone}
    assert model.pending == 0
    assert len(model.requests) == 1


async def test_with_no_bridge_the_turn_waits_then_fails_naming_the_command_to_run(
    db: Database, owner: User, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    model = MemoryProvider("never asked")
    code = FakeCode(connected=False)
    session_id, _ = start(db, person, reads_code)
    before = anyio.current_time()
    await runner(db, tmp_path, model, code, session_bridge_wait=0.2).drain()
    assert model.requests == []
    (_, user_id, deadline) = code.waits[0]
    assert user_id == owner.id
    assert deadline - before >= 0.2
    error = found(db, person, session_id)["session"]["lastError"]
    assert error["code"] == "no_bridge"
    assert "crewboard reverse --project CRW <folder>" in error["message"]


async def test_the_turn_s_deadline_bounds_the_wait_for_a_bridge(
    db: Database, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    code = FakeCode()
    start(db, person, reads_code)
    before = anyio.current_time()
    await runner(
        db, tmp_path, MemoryProvider("Hello."), code, session_bridge_wait=120,
        session_turn_deadline=5,
    ).drain()  # fmt: skip
    (_, _, deadline) = code.waits[0]
    assert 5 <= deadline - before < 10  # the turn's 5 s, not the bridge wait's 120


class DeafCode(FakeCode):
    """A bridge whose calls never come back, deadline or not."""

    async def call(self, **call: Any) -> CodeAnswer:
        self.calls.append(call)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def test_a_call_that_ignores_the_deadline_is_cut_short_by_the_turn_s_deadline(
    db: Database, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    if db.dialect != "sqlite":
        pytest.skip("the deadline is the runner's own: one database shows it")
    model = MemoryProvider()
    model.call_tools(("read_file", {"path": "a"}), text="Reading.")
    code = DeafCode()
    session_id, _ = start(db, person, reads_code)
    with anyio.fail_after(15):
        (outcome,) = await runner(db, tmp_path, model, code, session_turn_deadline=5).drain()
    assert outcome.status.value == "failed"
    assert len(code.calls) == 1
    error = found(db, person, session_id)["session"]["lastError"]
    assert error["code"] == "turn_deadline"
    assert "CREWBOARD_SESSION_TURN_DEADLINE" in error["message"]


async def test_a_bridge_connecting_while_the_turn_waits_lets_it_go_on(
    db: Database, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    model = MemoryProvider()
    model.call_tools(("read_file", {"path": "a"}), text="Reading.")
    model.reply("Read it.")
    code = FakeCode(connected=False)
    session_id, _ = start(db, person, reads_code)
    run = runner(db, tmp_path, model, code, session_bridge_wait=30)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run.drain)
            await code.waiting.wait()
            assert model.requests == []  # nothing asked of the model before the bridge is there
            code.connect()
    assert len(code.calls) == 1
    assert replies(db, person, session_id) == ["Reading.\n\nRead it."]


async def test_a_model_without_tools_writes_without_them_and_the_session_says_so(
    db: Database, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    model = MemoryProvider(
        ProviderError("tools_unsupported", "takes no tools", 400),
        "From the conversation only: what does the export hold?",
        "Noted.",
    )
    code = FakeCode()
    session_id, _ = start(db, person, reads_code)
    run = runner(db, tmp_path, model, code)
    await run.drain()
    assert [r.tools for r in model.requests] == [CODE_TOOLS, ()]
    assert replies(db, person, session_id) == [
        "From the conversation only: what does the export hold?"
    ]
    (warning,) = found(db, person, session_id)["warnings"]
    assert "m-1" in warning
    assert "tool calls" in warning
    conversation.send_message(
        db, person, project="CRW", ref=session_id, text="Invoices.", turn_limit=80
    )
    waits = len(code.waits)
    await run.drain()
    assert model.requests[-1].tools == ()  # its next turns offer none and wait for no bridge
    assert len(code.waits) == waits
    assert found(db, person, session_id)["warnings"] == [warning]  # said once


async def test_a_session_that_reads_code_warns_while_no_bridge_is_connected_and_others_do_not(
    db: Database, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    reading, _ = start(db, person, reads_code)
    plain, turn_id = start(db, person, None)
    (warning,) = found(db, person, reading)["warnings"]
    assert "alice" in warning
    assert "CRW" in warning
    assert "`crewboard reverse --project CRW <folder>`" in warning
    assert found(db, person, plain)["warnings"] == []
    page = present.screen_view(conversation.session_page(db, person, project="CRW", ref=reading))
    assert page["warnings"] == [warning]
    first = sessions.first_turn(db, session_id=plain, turn_id=turn_id)
    ack = {"projectKey": "CRW"}
    assert present.first_turn_answer(first, ack, "http://127.0.0.1")["warnings"] == []


async def test_through_the_bridge_service_the_turn_reads_what_the_person_s_bridge_answers(
    db: Database, person: Actor, reads_code: str, tmp_path: Path
) -> None:
    bridge = register_bridge(
        db, person, project="CRW", folder="my-repo", client="test", node="a"
    ).bridge.id
    model = MemoryProvider()
    model.call_tools(("read_file", {"path": "src/app.py"}), text="Reading.")
    model.reply("It prints the OS name.")
    session_id, _ = start(db, person, reads_code)
    assert found(db, person, session_id)["warnings"] == []  # the bridge is connected
    settings = Settings(data_dir=tmp_path)
    run = SessionRunner(
        db, settings, providers=lambda _config: model, code=CodeBridges(db, settings)
    )
    text = "import os\nprint(os.name)\n"
    result = {"path": "src/app.py", "startLine": 1, "endLine": 2, "totalLines": 2,
              "text": text, "truncated": False}  # fmt: skip
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run.drain)
            (call,) = await exchange(db, person, bridge, [], 10)
            await exchange(db, person, bridge, [BridgeAnswer(call.call_id, result)], 0)
    (answered,) = model.requests[1].messages[-1].tool_results
    assert json.loads(answered.content) == result
    assert replies(db, person, session_id) == ["Reading.\n\nIt prints the OS name."]
    page = present.screen_view(conversation.session_page(db, person, project="CRW", ref=session_id))
    ((turn,),) = [page["reads"]]
    assert turn["turnSeq"] == 1
    assert [(c["tool"], c["path"], c["lines"], c["refused"]) for c in turn["calls"]] == [
        ("read_file", "src/app.py", "1-2", None)
    ]


def test_the_reads_are_shown_by_turn_with_what_each_named_and_what_came_back() -> None:
    made = [
        ModelRead("stn_1", 1, 1, "read_file", {"path": "src/app.py", "startLine": 1}, "answered",
                  {"lines": "1-200", "bytes": 5_000}),
        ModelRead("stn_1", 1, 2, "read_file", {"path": ".env"}, "answered", {"error": "secret"}),
        ModelRead("stn_2", 2, 1, "search_text", {"query": "csv", "path": "."}, "answered",
                  {"matches": 3}),
    ]  # fmt: skip
    shown = present.reads_view(tuple(made))
    assert [(t["turnSeq"], len(t["calls"])) for t in shown] == [(1, 2), (2, 1)]
    assert shown[0]["calls"][0] == {
        "seq": 1, "tool": "read_file", "path": "src/app.py", "query": None, "lines": "1-200",
        "matches": None, "entries": None, "refused": None, "status": "answered",
    }  # fmt: skip
    assert shown[0]["calls"][1]["refused"] == "secret"
    assert (shown[1]["calls"][0]["query"], shown[1]["calls"][0]["matches"]) == ("csv", 3)
    html = render("session_reads.html", {
        "shown": {"reads": shown}, "tool_words": pages.TOOL_WORDS,
        "refusal_words": pages.REFUSAL_WORDS, "read_states": pages.READ_STATES,
    })  # fmt: skip
    assert "Turn 1 · 2 calls" in html
    assert "Turn 2 · 1 call<" in html
    assert "<code>src/app.py</code>" in html
    assert "lines 1-200" in html
    assert "refused: may hold secrets" in html
    assert "“csv” in <code>.</code>" in html
    assert "3 matches" in html
