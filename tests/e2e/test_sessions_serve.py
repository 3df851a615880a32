"""A spec session turn through real `crewboard serve` processes: the process running a turn is
killed with SIGKILL while the model is still writing; the next process claims the turn once
its lease runs out, runs it again from the start, and the reply is written exactly once."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import URL

from crewboard.contract.sessions import present
from crewboard.domain.identity.records import Actor
from crewboard.domain.sessions import Mode
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import conversation, sessions
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.model_server import Broken, ModelServer, Reply
from tests.support.serve import kill_serve, serve_env, start_serve, stop_serve, wait_healthy
from tests.support.server import free_port
from tests.support.sessions import configure_model

pytestmark = pytest.mark.slow  # two servers, a kill and a lease to run out: about 15 s
LEASE = 3  # seconds a claimed turn stays with a silent node


def wait_until(what: str, check: Callable[[], Any], timeout: float = 30.0) -> Any:
    """Poll another process's effect on the database until `check` returns something true."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.1)  # a row another process writes has no event to wait on; bound above
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def test_a_turn_cut_by_a_kill_9_is_finished_once_by_the_next_process(
    empty_database_url: URL, tmp_path: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **serve_env(empty_database_url, tmp_path / "data", port),
        "CREWBOARD_SESSION_TURN_LEASE": str(LEASE),
    }
    with ModelServer() as model:
        log = tmp_path / "first.log"
        process = start_serve(env, log)
        db = Database(empty_database_url)
        try:
            wait_healthy(url, process, log)
            person = make_user(db, "ada@example.com", is_owner=True)
            make_project(db, person, "CRW")
            actor: Actor = person_actor(person)
            configure_model(db, model, "openai", timeout=60, max_retries=0)
            # The first node gets half a reply, then the model goes quiet for good.
            model.script(Broken("The first half of a reply ", ending="stall"))
            made = sessions.start_session(
                db, actor, project="CRW", workspace_id=None, mode=Mode.GENERATE,
                prompt="Invoices as CSV, please.", answer=present.started_answer,
            ).body  # fmt: skip

            def partial() -> str:
                turn = present.turn_view(conversation.session_page(
                    db, actor, project="CRW", ref=made["sessionId"]).turn)  # fmt: skip
                return str(turn.get("partial", ""))

            wait_until("the first half streamed in", lambda: "first half" in partial())
            assert kill_serve(process) == -9

            model.script(Reply("The whole reply, from the second node."))
            log = tmp_path / "second.log"
            process = start_serve(env, log)
            wait_healthy(url, process, log)

            def answered() -> list[dict[str, Any]]:
                page = present.screen_view(
                    conversation.session_page(db, actor, project="CRW", ref=made["sessionId"])
                )
                return [m for m in page["messages"] if m["role"] == "assistant"]

            replies = wait_until("the reply from the second node", answered, timeout=LEASE + 30)
            time.sleep(LEASE)  # room for a second, wrong, write to show up
            assert [m["text"] for m in answered()] == ["The whole reply, from the second node."]
            assert replies[0]["text"].startswith("The whole reply")
            got = present.session_view(
                sessions.get_session(db, actor, project="CRW", ref=made["sessionId"]).session
            )
            assert got["status"] == "waiting"
            assert len(model.requests) == 2
            assert stop_serve(process) == 0
        finally:
            if process.poll() is None:
                kill_serve(process)
            db.dispose()
