"""A session's turns and the person's decisions, on both databases, with the runner calling a
real loopback model server: a proposed file accepted into a spec file revision that names the
session, a `tasks.md` whose boxes land on the board, a file sent back and proposed again, a
stale proposal refused, interview answers checked against their options, the budget, and a
turn whose runner died finished once by another."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from crewboard.config import Settings
from crewboard.contract.sessions import present
from crewboard.contract.specs import present as files
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.sessions import Mode
from crewboard.errors import PermissionDenied, RevisionConflict, ValidationFailed
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import conversation, sessions
from crewboard.services.sessions.runner import SessionRunner
from crewboard.services.specs import file_lookup
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support import task_reads as queries
from tests.support.factories import make_project, make_user
from tests.support.model_server import Broken, ModelServer, Reply
from tests.support.sessions import configure_model, last_user_message, proposes, questions

pytestmark = pytest.mark.anyio

LIMIT = 80
REQUIREMENTS = "# Requirements\n\n1. WHEN a customer exports THEN the system SHALL send a CSV.\n"
TASKS = "# Tasks\n\n- [ ] Write the CSV writer\n- [ ] Add the export button\n"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com", is_owner=True)
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def person(owner: User) -> Actor:
    return person_actor(owner)


@pytest.fixture
def server(db: Database) -> Iterator[ModelServer]:
    with ModelServer() as model_server:
        configure_model(db, model_server, "openai")
        yield model_server


def runner(db: Database, tmp_path: Path, **settings: object) -> SessionRunner:
    return SessionRunner(db, Settings(data_dir=tmp_path, **settings))  # type: ignore[arg-type]


def start(db: Database, actor: Actor) -> str:
    made = sessions.start_session(
        db, actor, project="CRW", workspace_id=None, mode=Mode.GENERATE,
        prompt="Customers want their invoices as CSV.", answer=present.started_answer,
    )  # fmt: skip
    return str(made.body["sessionId"])


def page(db: Database, actor: Actor, session_id: str) -> dict[str, object]:
    return present.screen_view(conversation.session_page(db, actor, project="CRW", ref=session_id))


def pending(db: Database, actor: Actor, session_id: str) -> list[dict[str, object]]:
    proposals = page(db, actor, session_id)["proposals"]
    assert isinstance(proposals, list)
    return [p for p in proposals if p["status"] == "pending"]


async def test_accepted_files_are_saved_as_revisions_naming_the_session_and_tasks_reach_the_board(
    db: Database, person: Actor, server: ModelServer, tmp_path: Path
) -> None:
    server.script(
        Reply(proposes("specs/export/requirements.md", REQUIREMENTS)),
        Reply(proposes("specs/export/tasks.md", TASKS, prose="Now the plan.")),
        Reply("The spec is complete."),
    )
    session_id = start(db, person)
    run = runner(db, tmp_path)
    await run.drain()
    (proposal,) = pending(db, person, session_id)
    assert proposal["kind"] == "file"
    assert proposal["path"] == "specs/export/requirements.md"
    got = present.session_view(
        sessions.get_session(db, person, project="CRW", ref=session_id).session
    )
    assert got["pendingAction"] == "spec_file_pending_decision"
    accepted = present.decided_answer(conversation.accept_file(
        db, person, project="CRW", ref=session_id, proposal_id=str(proposal["id"]),
        turn_limit=LIMIT,
    ))  # fmt: skip
    assert accepted["turnId"] is not None  # nothing else waited: the model goes on
    saved = files.get_spec_file(
        db, person, project="CRW", ref=file_lookup.FileRef(path="specs/export/requirements.md")
    )
    assert saved["file"]["revisionCount"] == 1
    assert saved["file"]["updatedBy"]["via"]["sessionId"] == session_id
    await run.drain()
    assert "I accepted specs/export/requirements.md" in last_user_message(server.requests[-1].body)
    (plan,) = pending(db, person, session_id)
    conversation.accept_file(
        db, person, project="CRW", ref=session_id, proposal_id=str(plan["id"]), turn_limit=LIMIT
    )
    titles = {t["title"] for t in queries.list_tasks(db, person, project="CRW").rows}
    assert {"Write the CSV writer", "Add the export button"} <= titles
    await run.drain()
    done = present.session_view(
        sessions.get_session(db, person, project="CRW", ref=session_id).session
    )
    assert (done["status"], done["pendingAction"], done["turnCount"]) == ("waiting", "none", 3)


async def test_a_file_sent_back_is_proposed_again_with_the_feedback_and_saved_as_revision_2(
    db: Database, person: Actor, server: ModelServer, tmp_path: Path
) -> None:
    spec_calls.upload_spec_file(
        db, person, project="CRW", workspace_id=None, path="specs/export/requirements.md",
        content=b"# Requirements\n", idempotency_key=None,
    )  # fmt: skip
    server.script(
        Reply(proposes("specs/export/requirements.md", REQUIREMENTS)),
        Reply(proposes("specs/export/requirements.md", REQUIREMENTS + "2. Dates in ISO.\n")),
    )
    session_id = start(db, person)
    run = runner(db, tmp_path)
    await run.drain()
    (first,) = pending(db, person, session_id)
    conversation.send_back_file(
        db, person, project="CRW", ref=session_id, proposal_id=str(first["id"]),
        feedback="Dates must be ISO 8601.", turn_limit=LIMIT,
    )  # fmt: skip
    await run.drain()
    assert "Dates must be ISO 8601." in last_user_message(server.requests[-1].body)
    (second,) = pending(db, person, session_id)
    conversation.accept_file(
        db, person, project="CRW", ref=session_id, proposal_id=str(second["id"]), turn_limit=LIMIT
    )
    saved = files.get_spec_file(
        db, person, project="CRW", ref=file_lookup.FileRef(path="specs/export/requirements.md")
    )
    assert saved["file"]["revisionCount"] == 2


async def test_a_proposal_whose_file_was_saved_since_is_refused_and_stays_open(
    db: Database, person: Actor, server: ModelServer, tmp_path: Path
) -> None:
    made = spec_calls.upload_spec_file(
        db, person, project="CRW", workspace_id=None, path="specs/a.md", content=b"one\n",
        idempotency_key=None,
    ).body["file"]  # fmt: skip
    server.script(Reply(proposes("specs/a.md", "two\n")))
    session_id = start(db, person)
    await runner(db, tmp_path).drain()
    spec_calls.update_spec_file(
        db, person, project="CRW", workspace_id=None, ref=file_lookup.FileRef(file_id=made["id"]),
        content=b"someone else\n", expected_version=made["contentVersion"], idempotency_key=None,
    )  # fmt: skip
    (proposal,) = pending(db, person, session_id)
    with pytest.raises(RevisionConflict):
        conversation.accept_file(
            db, person, project="CRW", ref=session_id, proposal_id=str(proposal["id"]),
            turn_limit=LIMIT,
        )  # fmt: skip
    assert len(pending(db, person, session_id)) == 1
    current = files.get_spec_file(
        db, person, project="CRW", ref=file_lookup.FileRef(path="specs/a.md")
    )
    assert current["file"]["revisionCount"] == 2


async def test_only_a_signed_in_person_decides_and_answers_must_be_options(
    db: Database, owner: User, person: Actor, server: ModelServer, tmp_path: Path
) -> None:
    server.script(Reply(questions("Is CSV enough?")))
    session_id = start(db, person)
    await runner(db, tmp_path).drain()
    (form,) = pending(db, person, session_id)
    token = tokens.issue_token(
        db, person, kind="personal", scopes=["read", "specs.write"]
    ).token  # fmt: skip
    via_token = Actor(user_id=owner.id, scopes=token.scopes, token=token)
    with pytest.raises(PermissionDenied):
        conversation.answer_questions(
            db, via_token, project="CRW", ref=session_id, proposal_id=str(form["id"]),
            answers={"q1": "Yes"}, turn_limit=LIMIT,
        )  # fmt: skip
    with pytest.raises(ValidationFailed) as refused:
        conversation.answer_questions(
            db, person, project="CRW", ref=session_id, proposal_id=str(form["id"]),
            answers={"q1": "Maybe"}, turn_limit=LIMIT,
        )  # fmt: skip
    assert refused.value.details["field"] == "answers.q1"
    conversation.answer_questions(
        db, person, project="CRW", ref=session_id, proposal_id=str(form["id"]),
        answers={"q1": "Yes"}, turn_limit=LIMIT,
    )  # fmt: skip
    await runner(db, tmp_path).drain()
    assert "→ Yes" in last_user_message(server.requests[-1].body)


async def test_a_session_stops_at_its_token_budget(
    db: Database, person: Actor, server: ModelServer, tmp_path: Path
) -> None:
    server.script(Reply("Hello " * 600, input_tokens=900))
    session_id = start(db, person)
    run = runner(db, tmp_path, session_token_budget=1000)
    await run.drain()
    conversation.send_message(
        db, person, project="CRW", ref=session_id, text="Go on.", turn_limit=LIMIT
    )
    (outcome,) = await run.drain()
    assert outcome.status.value == "failed"
    got = present.session_view(
        sessions.get_session(db, person, project="CRW", ref=session_id).session
    )
    assert got["status"] == "stopped"
    assert got["lastError"]["code"] == "budget_reached"
    assert len(server.requests) == 1


async def test_a_turn_whose_runner_died_is_run_again_by_another_and_completes_once(
    db: Database, person: Actor, server: ModelServer, clock: ManualClock, tmp_path: Path
) -> None:
    session_id = start(db, person)
    dead = runner(db, tmp_path, session_turn_lease=30)
    (claimed,) = dead._claim(1)  # the first node takes the turn, then dies without a word
    clock.advance(timedelta(seconds=31))  # its lease runs out
    server.script(Reply("From the second node."))
    (outcome,) = await runner(db, tmp_path).drain()
    assert outcome.written
    server.script(Broken("too late", ending="end"), Reply("A late reply from the first node."))
    late = await dead.run_turn(claimed)  # it comes back and finishes its old claim
    assert not late.written
    messages = [m for m in page(db, person, session_id)["messages"] if m["role"] == "assistant"]  # type: ignore[union-attr,index]
    assert [m["text"] for m in messages] == ["From the second node."]
