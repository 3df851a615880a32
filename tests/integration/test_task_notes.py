"""Comments, agent updates, outputs and questions on a task, through the services."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from crewboard.contract.board import present_notes
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.board import notes as task_notes
from crewboard.services.board import questions, task_lookup, tasks
from crewboard.services.idempotency import KeyedResult
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.projects import workspaces
from crewboard.storage.database import Database
from tests.support.errors import refused
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor
from tests.support.task_reads import task_activity

NOTE_EVENTS = (
    "task.comment_posted",
    "task.agent_update_posted",
    "task.output_saved",
    "task.question_asked",
    "task.question_answered",
)


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    tasks.create_task(
        db,
        person_actor(user),
        project="CRW",
        workspace_id=None,
        idempotency_key="task-1",
        title="Fix the login redirect",
    )
    return user


@pytest.fixture
def agent(db: Database, owner: User) -> Actor:
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=["read", "tasks.manage"], project="CRW"
    )
    return tokens.authenticate_token(db, issued.secret)


def comment(
    db: Database, actor: Actor, content: str = "**Update**", key: str | None = "c-1", **extra: Any
) -> KeyedResult:
    arguments = {"task": "CRW-1", "workspace_id": None, "content": content, "idempotency_key": key}
    return task_notes.post_comment(
        db, actor, **{**arguments, **extra}, answer=present_notes.comment_answer
    )


def events_of(db: Database, kind: str) -> list[dict[str, Any]]:
    rows = db.read(lambda uow: uow.events.list_after(project_id=None, limit=1000))
    return [r for r in rows if r["type"] == kind]


# --- comments and agent updates ----------------------------------------------------------------


def test_post_comment_stores_a_comment_signed_by_the_actor_and_records_an_event(
    db: Database, agent: Actor
) -> None:
    result = comment(db, agent, "  **Update**\n- Tests pass.  ")
    made = result.body["comment"]
    assert (made["kind"], made["length"]) == ("comment", 24)
    assert "content" not in made  # the caller sent it; the acknowledgement stays small
    assert made["author"]["tokenId"] == agent.principal
    assert made["author"]["kind"] == "agent_token"
    assert made["author"]["displayName"] == "owner"
    (event,) = events_of(db, "task.comment_posted")
    assert event["payload"]["commentId"] == made["id"]
    assert event["payload"]["taskKey"] == "CRW-1"
    listed = present_notes.comment_page_view(task_notes.list_comments(db, agent, task="CRW-1"))
    assert [(c["id"], c["content"]) for c in listed["comments"]] == [
        (made["id"], "**Update**\n- Tests pass.")
    ]


def test_an_exact_retry_replays_and_another_request_with_the_key_is_refused(
    db: Database, agent: Actor
) -> None:
    first = comment(db, agent, "hello")
    again = comment(db, agent, "hello")
    assert again.replayed is True
    assert again.body == first.body
    clash = refused(ErrorCode.IDEMPOTENCY_CONFLICT, comment, db, agent, "other text")
    assert clash.details["resourceId"] == first.body["comment"]["id"]
    assert count_rows(db, "task_comments") == 1
    assert len(events_of(db, "task.comment_posted")) == 1


def test_the_key_is_required_and_at_most_128_characters(db: Database, agent: Actor) -> None:
    for missing in (None, ""):
        error = refused(ErrorCode.VALIDATION, comment, db, agent, key=missing)
        assert error.details["field"] == "idempotencyKey"
    long = refused(ErrorCode.LIMIT_EXCEEDED, comment, db, agent, key="k" * 129)
    assert long.details["field"] == "idempotencyKey"
    comment(db, agent, key="k" * 128)
    assert count_rows(db, "task_comments") == 1


def test_note_text_must_not_be_blank_and_fits_20000_characters(db: Database, agent: Actor) -> None:
    assert refused(ErrorCode.VALIDATION, comment, db, agent, " \n ").details["field"] == "content"
    over = refused(ErrorCode.LIMIT_EXCEEDED, comment, db, agent, "x" * 20_001)
    assert over.details == {"field": "content", "limit": 20_000, "actual": 20_001}
    comment(db, agent, "x" * 20_000)
    update = refused(
        ErrorCode.LIMIT_EXCEEDED,
        task_notes.agent_update,
        db,
        agent,
        task="CRW-1",
        workspace_id=None,
        content="y" * 20_001,
        idempotency_key="u-1",
        answer=present_notes.agent_update_answer,
    )
    assert update.details["field"] == "content"


def test_writes_name_the_tasks_workspace(db: Database, owner: User, agent: Actor) -> None:
    space = workspaces.create_workspace(db, person_actor(owner), name="Team")
    error = refused(ErrorCode.VALIDATION, comment, db, agent, workspace_id=space.id)
    assert error.details["field"] == "workspaceId"
    assert error.details["expected"] is None


def test_who_may_write_notes(db: Database, owner: User) -> None:
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    refused(ErrorCode.PERMISSION_DENIED, comment, db, person_actor(reader))
    stranger = make_user(db, "stranger@example.com")
    refused(ErrorCode.NOT_FOUND, comment, db, person_actor(stranger))
    read_only = token_actor(db, owner, ["read"])
    error = refused(ErrorCode.PERMISSION_DENIED, comment, db, read_only)
    assert error.details["requiredScope"] == "tasks.manage"
    refused(ErrorCode.NOT_FOUND, comment, db, person_actor(owner), task="CRW-9")
    assert task_notes.list_comments(db, person_actor(reader), task="CRW-1").total == 0


def test_agent_update_is_a_note_that_leaves_the_task_as_it_was(db: Database, agent: Actor) -> None:
    def read_task() -> Any:
        return db.read(lambda uow: task_lookup.access_task(uow, agent, "CRW-1")[0])

    before = read_task()
    result = task_notes.agent_update(
        db,
        agent,
        task="CRW-1",
        workspace_id=None,
        content="Working on the redirect guard.",
        idempotency_key="u-1",
        answer=present_notes.agent_update_answer,
    )
    update = result.body["agentUpdate"]
    assert update["kind"] == "agent_update"
    assert read_task() == before
    activity = task_activity(db, agent, "CRW-1")
    assert [(u["id"], u["content"]) for u in activity["agentUpdates"]["items"]] == [
        (update["id"], "Working on the redirect guard.")
    ]
    assert activity["comments"]["total"] == 0
    assert len(events_of(db, "task.agent_update_posted")) == 1
    assert events_of(db, "task.updated") == []


def test_comments_list_newest_first_even_within_one_clock_tick(db: Database, agent: Actor) -> None:
    ids = [comment(db, agent, f"note {n}", key=f"c-{n}").body["comment"]["id"] for n in range(5)]
    task_notes.agent_update(
        db,
        agent,
        task="CRW-1",
        workspace_id=None,
        content="progress",
        idempotency_key="u-1",
        answer=present_notes.agent_update_answer,
    )
    page = present_notes.comment_page_view(
        task_notes.list_comments(db, agent, task="CRW-1", limit=2)
    )
    assert [c["id"] for c in page["comments"]] == ids[::-1][:2]
    assert (page["total"], page["nextOffset"]) == (5, 2)
    rest = present_notes.comment_page_view(
        task_notes.list_comments(db, agent, task="CRW-1", limit=10, offset=2)
    )
    assert [c["id"] for c in rest["comments"]] == ids[::-1][2:]
    assert rest["nextOffset"] is None
    assert task_notes.list_comments(db, agent, task="CRW-1", kind="all").total == 6
    assert task_notes.list_comments(db, agent, task="CRW-1", kind="agent_update").total == 1
    bad = refused(ErrorCode.VALIDATION, task_notes.list_comments, db, agent, task="CRW-1", kind="x")
    assert bad.details["accepted"] == ["comment", "agent_update", "all"]
    assert (
        refused(ErrorCode.VALIDATION, task_notes.list_comments, db, agent, task="CRW-1", limit=201)
    ).details["field"] == "limit"


def test_concurrent_first_uses_of_one_key_post_one_comment(db: Database, agent: Actor) -> None:
    writers = 8
    start = threading.Barrier(writers)

    def post(_: int) -> str:
        start.wait(timeout=10)
        return str(comment(db, agent, "once", key="storm").body["comment"]["id"])

    with ThreadPoolExecutor(max_workers=writers) as pool:
        ids = set(pool.map(post, range(writers)))
    assert len(ids) == 1
    assert count_rows(db, "task_comments") == 1


# --- outputs -----------------------------------------------------------------------------------


def save(db: Database, actor: Actor, name: str, content: str, key: str) -> KeyedResult:
    return task_notes.save_output(
        db,
        actor,
        task="CRW-1",
        workspace_id=None,
        name=name,
        content=content,
        idempotency_key=key,
        answer=present_notes.output_answer,
    )


def test_saving_a_name_again_adds_a_version_and_lists_show_the_newest(
    db: Database, agent: Actor
) -> None:
    first = save(db, agent, "audit.md", "# Audit\n\nFirst pass.\n", "o-1").body["output"]
    assert (first["version"], first["versions"], first["name"]) == (1, 1, "audit.md")
    assert "content" not in first
    second = save(db, agent, "audit.md", "# Audit\n\nSecond pass.\n", "o-2").body["output"]
    assert (second["version"], second["versions"]) == (2, 2)
    save(db, agent, "notes.txt", "n" * 600, "o-3")
    listed = present_notes.output_page_view(task_notes.list_outputs(db, agent, task="CRW-1"))
    assert listed["total"] == 2
    audit, notes = listed["outputs"]
    assert (audit["name"], audit["id"], audit["version"], audit["versions"]) == (
        "audit.md",
        second["id"],
        2,
        2,
    )
    assert audit["preview"] == "# Audit\n\nSecond pass.\n"
    assert audit["contentTruncated"] is False
    assert (len(notes["preview"]), notes["length"], notes["contentTruncated"]) == (500, 600, True)
    newest = present_notes.output_read_view(
        task_notes.get_output(db, agent, task="CRW-1", name="audit.md")
    )["output"]
    assert newest["content"] == "# Audit\n\nSecond pass.\n"
    oldest = present_notes.output_read_view(
        task_notes.get_output(db, agent, task="CRW-1", name="audit.md", version=1)
    )["output"]
    assert (oldest["content"], oldest["version"], oldest["versions"]) == (
        "# Audit\n\nFirst pass.\n",
        1,
        2,
    )
    for name, version in (("audit.md", 3), ("audit.md", 0), ("missing.md", None)):
        refused(
            ErrorCode.NOT_FOUND,
            task_notes.get_output,
            db,
            agent,
            task="CRW-1",
            name=name,
            version=version,
        )
    assert len(events_of(db, "task.output_saved")) == 3


def test_output_limits_name_200_and_content_one_mebibyte(db: Database, agent: Actor) -> None:
    assert refused(ErrorCode.LIMIT_EXCEEDED, save, db, agent, "n" * 201, "x", "k1").details[
        "field"
    ] == ("name")
    for bad_name in ("", "two\nlines"):
        error = refused(ErrorCode.VALIDATION, save, db, agent, bad_name, "x", "k2")
        assert error.details["field"] == "name"
    assert refused(ErrorCode.VALIDATION, save, db, agent, "a.md", "  \n", "k3").details[
        "field"
    ] == ("content")
    # Counted in UTF-8 bytes: 524,289 two-byte characters are 1 MiB and 2 bytes.
    over = refused(ErrorCode.LIMIT_EXCEEDED, save, db, agent, "a.md", "é" * 524_289, "k4")
    assert over.details == {"field": "content", "limit": 1_048_576, "actual": 1_048_578}
    exact = "x" * (1024 * 1024 - 1) + "\n"
    saved = save(db, agent, "n" * 200, exact, "k5").body["output"]
    assert saved["length"] == 1024 * 1024
    back = present_notes.output_read_view(
        task_notes.get_output(db, agent, task="CRW-1", name="n" * 200)
    )["output"]
    assert back["content"] == exact
    assert count_rows(db, "task_outputs") == 1


def test_concurrent_saves_of_one_name_get_distinct_versions(db: Database, agent: Actor) -> None:
    writers = 6
    start = threading.Barrier(writers)

    def write(n: int) -> int:
        start.wait(timeout=10)
        return int(save(db, agent, "log.md", f"run {n}", f"s-{n}").body["output"]["version"])

    with ThreadPoolExecutor(max_workers=writers) as pool:
        versions = sorted(pool.map(write, range(writers)))
    assert versions == list(range(1, writers + 1))
    (listed,) = present_notes.output_page_view(task_notes.list_outputs(db, agent, task="CRW-1"))[
        "outputs"
    ]
    assert listed["versions"] == writers


# --- questions ---------------------------------------------------------------------------------


def ask(
    db: Database, actor: Actor, text: str = "Which login page?", key: str = "q-1"
) -> KeyedResult:
    return questions.ask_question(
        db,
        actor,
        task="CRW-1",
        workspace_id=None,
        question=text,
        idempotency_key=key,
        answer=present_notes.question_answer,
    )


def test_a_question_waits_in_the_inbox_until_a_person_answers_it(
    db: Database, owner: User, agent: Actor
) -> None:
    asked = ask(db, agent).body["question"]
    assert (asked["status"], asked["answer"], asked["length"]) == ("open", None, 17)
    inbox = present_notes.open_questions_view(
        questions.list_open_questions(db, person_actor(owner), "CRW")
    )
    (waiting,) = inbox["questions"]
    assert (waiting["id"], waiting["question"]) == (asked["id"], "Which login page?")
    assert waiting["task"]["key"] == "CRW-1"
    assert waiting["task"]["title"] == "Fix the login redirect"

    answered = present_notes.question_answered_view(
        questions.answer_question(db, person_actor(owner), asked["id"], " The new one. ")
    )
    assert answered["changed"] is True
    assert answered["question"]["answer"] == "The new one."
    assert answered["question"]["answeredBy"]["userId"] == owner.id
    assert questions.list_open_questions(db, person_actor(owner), "CRW").total == 0
    on_task = task_activity(db, agent, "CRW-1")["questions"]["items"]
    assert [(q["status"], q["answer"]) for q in on_task] == [("answered", "The new one.")]
    assert len(events_of(db, "task.question_asked")) == 1
    assert len(events_of(db, "task.question_answered")) == 1


def test_only_a_person_answers_and_an_answer_is_not_overwritten(
    db: Database, owner: User, agent: Actor
) -> None:
    asked = ask(db, agent).body["question"]
    refused(
        ErrorCode.HUMAN_IDENTITY_REQUIRED,
        questions.answer_question,
        db,
        agent,
        asked["id"],
        "I will answer myself",
    )
    personal = token_actor(db, owner, ["read", "tasks.manage"])
    refused(ErrorCode.PERMISSION_DENIED, questions.answer_question, db, personal, asked["id"], "Y")
    person = person_actor(owner)
    questions.answer_question(db, person, asked["id"], "Yes")
    again = present_notes.question_answered_view(
        questions.answer_question(db, person, asked["id"], "Yes")
    )
    assert again["changed"] is False
    clash = refused(
        ErrorCode.ALREADY_EXISTS, questions.answer_question, db, person, asked["id"], "No"
    )
    assert clash.details["question"]["answer"] == "Yes"
    assert len(events_of(db, "task.question_answered")) == 1


def test_answer_refusals(db: Database, owner: User, agent: Actor) -> None:
    asked = ask(db, agent).body["question"]
    refused(ErrorCode.NOT_FOUND, questions.answer_question, db, person_actor(owner), "qst_x", "a")
    stranger = make_user(db, "stranger@example.com")
    refused(
        ErrorCode.NOT_FOUND,
        questions.answer_question,
        db,
        person_actor(stranger),
        asked["id"],
        "a",
    )
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    refused(
        ErrorCode.PERMISSION_DENIED,
        questions.answer_question,
        db,
        person_actor(reader),
        asked["id"],
        "a",
    )
    blank = refused(
        ErrorCode.VALIDATION, questions.answer_question, db, person_actor(owner), asked["id"], " "
    )
    assert blank.details["field"] == "answer"
    long = refused(
        ErrorCode.LIMIT_EXCEEDED,
        questions.answer_question,
        db,
        person_actor(owner),
        asked["id"],
        "a" * 20_001,
    )
    assert long.details["field"] == "answer"
    question = refused(ErrorCode.LIMIT_EXCEEDED, ask, db, agent, "q" * 20_001, "q-2")
    assert question.details["field"] == "question"
    refused(ErrorCode.NOT_FOUND, questions.list_open_questions, db, person_actor(stranger), "CRW")


def test_open_questions_are_paged_the_longest_waiting_first(
    db: Database, clock: ManualClock, agent: Actor, owner: User
) -> None:
    ids = []
    for n in range(3):
        ids.append(ask(db, agent, f"question {n}", f"q-{n}").body["question"]["id"])
        clock.advance(timedelta(minutes=1))
    page = present_notes.open_questions_view(
        questions.list_open_questions(db, person_actor(owner), "CRW", limit=2)
    )
    assert [q["id"] for q in page["questions"]] == ids[:2]
    assert page["nextOffset"] == 2


def test_nul_characters_are_refused_alike_on_both_backends(db: Database, agent: Actor) -> None:
    cases: list[tuple[str, Any]] = [
        ("content", lambda: comment(db, agent, "a\x00b")),
        ("idempotencyKey", lambda: comment(db, agent, key="k\x00")),
        ("content", lambda: save(db, agent, "a.md", "a\x00b", "o-1")),
        ("name", lambda: save(db, agent, "a\x00.md", "x", "o-2")),
        ("question", lambda: ask(db, agent, "why\x00", "q-1")),
    ]
    for field, call in cases:
        assert refused(ErrorCode.VALIDATION, call).details["field"] == field
    assert count_rows(db, "task_comments") + count_rows(db, "task_outputs") == 0


# --- the task page -----------------------------------------------------------------------------


def test_task_activity_gathers_everything_said_on_the_task(db: Database, agent: Actor) -> None:
    comment(db, agent, "first comment")
    task_notes.agent_update(
        db,
        agent,
        task="CRW-1",
        workspace_id=None,
        content="halfway",
        idempotency_key="u-1",
        answer=present_notes.agent_update_answer,
    )
    save(db, agent, "audit.md", "one", "o-1")
    save(db, agent, "audit.md", "two", "o-2")
    ask(db, agent)
    activity = task_activity(db, agent, "CRW-1")
    assert set(activity) == {
        "task",
        "comments",
        "agentUpdates",
        "outputs",
        "questions",
        "repoLinks",
        "repoReports",
    }
    assert activity["task"]["key"] == "CRW-1"
    assert [c["content"] for c in activity["comments"]["items"]] == ["first comment"]
    assert [u["content"] for u in activity["agentUpdates"]["items"]] == ["halfway"]
    (output,) = activity["outputs"]["items"]
    assert (output["preview"], output["version"], output["versions"]) == ("two", 2, 2)
    assert activity["questions"]["total"] == 1
    assert activity["repoLinks"] == {"items": [], "total": 0}
    stranger = make_user(db, "stranger@example.com")
    refused(ErrorCode.NOT_FOUND, task_activity, db, person_actor(stranger), "CRW-1")
    for kind in NOTE_EVENTS[:4]:
        assert events_of(db, kind), kind
