"""Reading a task's notes back: list_task_notes, get_task's notes section, agent_brief's line
and the answers list_activity shows a token with `mine`, through the services."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from crewboard.contract.board import present_notes
from crewboard.contract.review.present_activity import entry_view
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.board import note_reads, questions, tasks
from crewboard.services.board import notes as task_notes
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import activity
from crewboard.storage.database import Database
from tests.support import task_reads as queries
from tests.support.errors import refused
from tests.support.factories import make_project, make_user


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    for n in (1, 2):
        tasks.create_task(
            db,
            person_actor(user),
            project="CRW",
            workspace_id=None,
            idempotency_key=f"task-{n}",
            title=f"Task {n}",
        )
    return user


def agent_of(db: Database, owner: User, name: str = "agent") -> Actor:
    issued = tokens.issue_token(
        db,
        person_actor(owner),
        kind="agent",
        scopes=["read", "tasks.manage"],
        project="CRW",
        name=name,
    )
    return tokens.authenticate_token(db, issued.secret)


@pytest.fixture
def agent(db: Database, owner: User) -> Actor:
    return agent_of(db, owner)


def keyed(n: int) -> str:
    return f"k-{n}"


def comment(db: Database, actor: Actor, text: str, n: int, task: str = "CRW-1") -> str:
    made = task_notes.post_comment(
        db,
        actor,
        task=task,
        workspace_id=None,
        content=text,
        idempotency_key=keyed(n),
        answer=present_notes.comment_answer,
    )
    return str(made.body["comment"]["id"])


def update(db: Database, actor: Actor, text: str, n: int) -> str:
    made = task_notes.agent_update(
        db,
        actor,
        task="CRW-1",
        workspace_id=None,
        content=text,
        idempotency_key=keyed(n),
        answer=present_notes.agent_update_answer,
    )
    return str(made.body["agentUpdate"]["id"])


def output(db: Database, actor: Actor, name: str, text: str, n: int) -> str:
    made = task_notes.save_output(
        db,
        actor,
        task="CRW-1",
        workspace_id=None,
        name=name,
        content=text,
        idempotency_key=keyed(n),
        answer=present_notes.output_answer,
    )
    return str(made.body["output"]["id"])


def ask(db: Database, actor: Actor, text: str, n: int, task: str = "CRW-1") -> str:
    made = questions.ask_question(
        db,
        actor,
        task=task,
        workspace_id=None,
        question=text,
        idempotency_key=keyed(n),
        answer=present_notes.question_answer,
    )
    return str(made.body["question"]["id"])


def page(db: Database, actor: Actor, **arguments: Any) -> dict[str, Any]:
    """A page as a door shows it whole."""
    found = note_reads.list_task_notes(db, actor, **{"task": "CRW-1", **arguments})
    return present_notes.thread_page_view(found)


def size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


# --- list_task_notes ---------------------------------------------------------------------------


def test_the_thread_holds_every_kind_newest_first_in_its_wire_form(
    db: Database, owner: User, agent: Actor, clock: ManualClock
) -> None:
    person = person_actor(owner)
    first = comment(db, person, "Please keep the old URL working.", 1)
    clock.advance(timedelta(minutes=1))
    progress = update(db, agent, "Halfway there.", 2)
    clock.advance(timedelta(minutes=1))
    report = output(db, agent, "audit.md", "# Audit\n" + "x" * 900, 3)
    clock.advance(timedelta(minutes=1))
    again = output(db, agent, "audit.md", "# Audit v2\n", 4)
    clock.advance(timedelta(minutes=1))
    asked = ask(db, agent, "Which browsers matter?", 5)
    clock.advance(timedelta(minutes=1))
    questions.answer_question(db, person, asked, "Firefox and Chromium.")

    body = page(db, agent)
    assert [(n["kind"], n["id"]) for n in body["notes"]] == [
        ("question", asked),
        ("output", again),
        ("output", report),
        ("agent_update", progress),
        ("comment", first),
    ]
    assert (body["hasMore"], body["nextCursor"]) == (False, None)
    assert body["task"]["key"] == "CRW-1"
    question, newer, older, note, said = body["notes"]
    assert question["question"] == "Which browsers matter?"
    assert (question["status"], question["answer"]) == ("answered", "Firefox and Chromium.")
    assert question["answeredBy"]["userId"] == owner.id
    assert question["answeredAt"] is not None
    assert question["author"]["tokenId"] == agent.principal
    assert (older["name"], older["version"], older["length"]) == ("audit.md", 1, 908)
    assert (len(older["preview"]), older["contentTruncated"]) == (500, True)
    assert (newer["version"], newer["preview"], newer["contentTruncated"]) == (
        2,
        "# Audit v2\n",
        False,
    )
    assert note["content"] == "Halfway there."
    assert said["content"] == "Please keep the old URL working."
    assert said["author"]["userId"] == owner.id
    assert "contentTruncated" not in said


def test_comments_and_updates_come_whole_up_to_twenty_thousand_characters(
    db: Database, owner: User, agent: Actor
) -> None:
    text = "a" * task_notes.MAX_NOTE_CHARS
    comment(db, agent, text, 1)
    [row] = page(db, agent)["notes"]
    assert row["content"] == text
    assert "contentTruncated" not in row


def test_a_row_too_large_for_an_answer_is_cut_and_says_its_length(
    db: Database, owner: User, agent: Actor
) -> None:
    comment(db, agent, "🙂" * task_notes.MAX_NOTE_CHARS, 1)  # 80,000 bytes in UTF-8
    asked = ask(db, agent, "文" * task_notes.MAX_NOTE_CHARS, 2)
    questions.answer_question(db, person_actor(owner), asked, "語" * task_notes.MAX_NOTE_CHARS)

    rows = page(db, agent)["notes"]
    assert [r["kind"] for r in rows] == ["question", "comment"]
    for row in rows:
        assert size(row) <= present_notes.MAX_ROW_BYTES
        assert row["contentTruncated"] is True
    question, said = rows
    assert said["length"] == task_notes.MAX_NOTE_CHARS
    assert said["content"] == "🙂" * len(said["content"])
    assert len(said["content"]) > 5_000
    assert (question["questionLength"], question["answerLength"]) == (20_000, 20_000)


def test_pages_follow_the_cursor_without_gaps_or_repeats(
    db: Database, owner: User, agent: Actor, clock: ManualClock
) -> None:
    made = []
    for n in range(23):
        if n % 4 == 3:
            made.append(ask(db, agent, f"Question {n}?", n))  # same moment as the comment before
        else:
            made.append(comment(db, agent, f"Note {n}", n))
            clock.advance(timedelta(seconds=n % 2))
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        body = page(db, agent, limit=10, cursor=cursor)
        pages += 1
        seen += [n["id"] for n in body["notes"]]
        if not body["hasMore"]:
            assert body["nextCursor"] is None
            break
        cursor = body["nextCursor"]
    assert pages == 3
    assert sorted(seen) == sorted(made)
    assert len(seen) == len(set(seen))
    assert seen == [n["id"] for n in page(db, agent, limit=100)["notes"]]


def test_a_door_showing_fewer_rows_continues_after_the_last_one_shown(
    db: Database, owner: User, agent: Actor
) -> None:
    for n in range(6):
        comment(db, agent, f"Note {n}", n)
    found = note_reads.list_task_notes(db, agent, task="CRW-1", limit=5)
    shown = present_notes.thread_answer(
        found, [present_notes.fitted_row(n) for n in found.notes[:2]]
    )
    assert shown["hasMore"] is True
    following = page(db, agent, limit=5, cursor=shown["nextCursor"])
    assert [n["content"] for n in following["notes"]] == [f"Note {n}" for n in (3, 2, 1, 0)]
    assert following["hasMore"] is False


def test_kind_takes_one_kind_or_several(db: Database, owner: User, agent: Actor) -> None:
    comment(db, agent, "A comment", 1)
    update(db, agent, "An update", 2)
    output(db, agent, "a.md", "An output", 3)
    ask(db, agent, "A question?", 4)
    only = page(db, agent, kinds=["question"])["notes"]
    assert [n["kind"] for n in only] == ["question"]
    both = page(db, agent, kinds=["comment", "output"])["notes"]
    assert sorted(n["kind"] for n in both) == ["comment", "output"]
    error = refused(ErrorCode.VALIDATION, page, db, agent, kinds=["comment", "chat"])
    assert error.details["field"] == "kind"
    assert error.details["accepted"] == ["comment", "agent_update", "output", "question"]


@pytest.mark.parametrize("limit", [0, 101])
def test_a_limit_outside_one_to_a_hundred_is_refused(
    db: Database, owner: User, agent: Actor, limit: int
) -> None:
    error = refused(ErrorCode.VALIDATION, page, db, agent, limit=limit)
    assert error.details["field"] == "limit"


def test_a_cursor_is_refused_for_another_task_kind_filter_or_caller(
    db: Database, owner: User, agent: Actor
) -> None:
    for n in range(3):
        comment(db, agent, f"Note {n}", n)
        comment(db, agent, f"Other {n}", 10 + n, task="CRW-2")
    cursor = page(db, agent, limit=1)["nextCursor"]
    assert cursor is not None
    # The same request by id instead of key continues.
    task_id = page(db, agent)["task"]["id"]
    assert len(page(db, agent, task=task_id, limit=1, cursor=cursor)["notes"]) == 1
    other_agent = agent_of(db, owner, "other")
    attempts: list[tuple[Actor, dict[str, Any]]] = [
        (agent, {"task": "CRW-2"}),
        (agent, {"kinds": ["comment"]}),
        (other_agent, {}),
        (person_actor(owner), {}),
    ]
    for actor, change in attempts:
        error = refused(ErrorCode.VALIDATION, page, db, actor, limit=1, cursor=cursor, **change)
        assert error.details["field"] == "cursor", change
    for garbage in ("nope", cursor[:-3], "x" * 201):
        error = refused(ErrorCode.VALIDATION, page, db, agent, cursor=garbage)
        assert error.details["field"] == "cursor"


def test_a_task_outside_the_callers_projects_does_not_exist_for_it(
    db: Database, owner: User, agent: Actor
) -> None:
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "OPS")
    tasks.create_task(
        db,
        person_actor(stranger),
        project="OPS",
        workspace_id=None,
        idempotency_key="t",
        title="Secret",
    )
    refused(ErrorCode.NOT_FOUND, page, db, agent, task="OPS-1")
    refused(ErrorCode.NOT_FOUND, page, db, person_actor(owner), task="OPS-1")


# --- get_task's notes section ------------------------------------------------------------------


def read_task(db: Database, actor: Actor) -> dict[str, Any]:
    found = queries.get_task(db, actor, task="CRW-1", include_context_pack=False)
    assert isinstance(found, dict)
    return found


def test_get_task_shows_answers_and_the_newest_notes_of_each_kind_with_totals(
    db: Database, owner: User, agent: Actor, clock: ManualClock
) -> None:
    person = person_actor(owner)
    asked = []
    for n in range(12):
        clock.advance(timedelta(seconds=1))
        asked.append(ask(db, agent, f"Question {n}?", n))
    questions.answer_question(db, person, asked[11], "Yes, do it.")
    questions.answer_question(db, person, asked[0], "No.")
    for n in range(7):
        clock.advance(timedelta(seconds=1))
        comment(db, person, f"Comment {n}", 100 + n)
        update(db, agent, f"Update {n}", 200 + n)
        output(db, agent, f"file-{n}.md", f"Output {n}", 300 + n)
    output(db, agent, "file-6.md", "Output 6, again", 400)

    notes = read_task(db, agent)["notes"]
    assert (notes["questions"]["total"], notes["questions"]["open"]) == (12, 10)
    shown = notes["questions"]["items"]
    assert len(shown) == note_reads.SECTION_QUESTIONS
    assert (shown[0]["status"], shown[0]["answer"]) == ("answered", "Yes, do it.")
    assert shown[0]["answeredBy"] == "owner"
    assert shown[1]["status"] == "open"
    assert shown[0]["author"].endswith("(for owner)")
    assert [q["question"] for q in shown] == [f"Question {n}?" for n in range(11, 1, -1)]
    assert notes["comments"]["total"] == 7
    assert [c["content"] for c in notes["comments"]["items"]] == [
        f"Comment {n}" for n in range(6, 1, -1)
    ]
    assert notes["agentUpdates"]["total"] == 7
    assert len(notes["agentUpdates"]["items"]) == note_reads.SECTION_ROWS
    assert notes["outputs"]["total"] == 7  # output names
    newest = notes["outputs"]["items"][0]
    assert (newest["name"], newest["version"], newest["preview"]) == (
        "file-6.md",
        2,
        "Output 6, again",
    )
    assert [o["name"] for o in notes["outputs"]["items"]] == [
        f"file-{n}.md" for n in range(6, 1, -1)
    ]


def test_get_task_cuts_long_notes_and_keeps_the_section_small(
    db: Database, owner: User, agent: Actor
) -> None:
    person = person_actor(owner)
    for n in range(12):
        asked = ask(db, agent, "Q" * 5_000, n)
        questions.answer_question(db, person, asked, "A" * 5_000)
    for n in range(6):
        comment(db, person, "C" * 1_500, 100 + n)
        update(db, agent, "U" * 1_500, 200 + n)
        output(db, agent, f"f{n}.md", "O" * 3_000, 300 + n)
    notes = read_task(db, agent)["notes"]
    assert size(notes) <= present_notes.SECTION_BYTES
    said = notes["comments"]["items"][0]
    assert (said["contentTruncated"], said["length"]) == (True, 1_500)
    assert len(said["content"]) < 1_500
    question = notes["questions"]["items"][0]
    assert question["contentTruncated"] is True
    assert (question["questionLength"], question["answerLength"]) == (5_000, 5_000)
    assert notes["outputs"]["items"][0]["contentTruncated"] is True


def test_a_short_thread_comes_whole_in_get_task(db: Database, owner: User, agent: Actor) -> None:
    text = "x" * 900
    comment(db, agent, text, 1)
    [row] = read_task(db, agent)["notes"]["comments"]["items"]
    assert row["content"] == text
    assert "contentTruncated" not in row
    empty = read_task(db, agent)["notes"]["questions"]
    assert empty == {"items": [], "total": 0, "open": 0}


def test_agent_brief_says_how_many_questions_are_answered_and_open(
    db: Database, owner: User, agent: Actor
) -> None:
    plain = queries.get_task(db, agent, task="CRW-1", format="agent_brief")
    assert isinstance(plain, str)
    assert "Questions" not in plain
    first = ask(db, agent, "One?", 1)
    ask(db, agent, "Two?", 2)
    questions.answer_question(db, person_actor(owner), first, "Yes.")
    brief = queries.get_task(db, agent, task="CRW-1", format="agent_brief")
    assert isinstance(brief, str)
    assert "1 answered, 1 open" in brief


# --- list_activity mine ------------------------------------------------------------------------


def test_mine_lists_answers_to_this_tokens_questions_only(
    db: Database, owner: User, agent: Actor
) -> None:
    person = person_actor(owner)
    other = agent_of(db, owner, "other")
    mine = ask(db, agent, "Mine?", 1)
    theirs = ask(db, other, "Theirs?", 2)
    questions.answer_question(db, person, theirs, "Theirs: yes.")
    questions.answer_question(db, person, mine, "Mine: " + "y" * 400)
    found = activity.list_activity(db, agent, mine=True)
    entries, cursor = [entry_view(e) for e in found.entries], found.cursor
    assert [(e["type"], e["questionId"]) for e in entries] == [("task.question_answered", mine)]
    [entry] = entries
    assert entry["mine"] is True
    assert entry["taskKey"] == "CRW-1"
    assert entry["answerPreview"].startswith("Mine: yyy")
    assert entry["actor"]["userId"] == owner.id
    assert activity.list_activity(db, agent, mine=True, since=cursor).entries == ()
    everyone = [entry_view(e) for e in activity.list_activity(db, person, task="CRW-1").entries]
    answers = [e for e in everyone if e["type"] == "task.question_answered"]
    assert [(e["questionId"], e["mine"]) for e in answers] == [(mine, False), (theirs, False)]
