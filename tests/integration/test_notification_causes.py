"""The notification path serves the board and the inbox too, on both databases: people a task
comment mentions, the person whose agent asked a question when someone else answers it, and
the person whose agent handed work in when someone else decides it; never the one who acted,
each once per cause."""

from __future__ import annotations

import pytest

from crewboard.contract.board import present_notes
from crewboard.contract.review.present import hand_in_view
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.notifications import mentions
from crewboard.services.board import notes, questions
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.notifications import inbox
from crewboard.services.projects import team
from crewboard.services.review import decisions, drafts
from crewboard.storage.database import Database
from tests.support.factories import grant, make_project, make_task, make_user


@pytest.fixture
def ada(db: Database) -> User:
    user = make_user(db, "ada@example.com")
    make_project(db, user, "CRW")
    make_task(db, user, "CRW", "Fix the login")
    return user


@pytest.fixture
def bo(db: Database, ada: User) -> User:
    user = make_user(db, "bo@example.com")
    grant(db, ada, "CRW", user, Role.WRITE)
    return user


def agent_of(db: Database, user: User) -> Actor:
    issued = tokens.issue_token(
        db, person_actor(user), kind="agent", project="CRW",
        scopes=["read", "tasks.manage", "drafts.create"],
    )  # fmt: skip
    return tokens.authenticate_token(db, issued.secret)


def told(db: Database, user: User) -> list[dict[str, str]]:
    return inbox.list_notifications(db, person_actor(user))["notifications"]  # type: ignore[no-any-return]


def test_mentions_are_emails_or_their_first_part_outside_words() -> None:
    text = "@Ada please look; cc @bo@example.com, not me@example.com nor x@y. @ada again."
    assert mentions(text) == ["ada", "bo@example.com"]


def test_a_comment_tells_the_people_it_mentions_once(db: Database, ada: User, bo: User) -> None:
    outsider = make_user(db, "carl@example.com")  # not of the project
    notes.post_comment(
        db, person_actor(ada), task="CRW-1", workspace_id=None, idempotency_key="c1",
        content="@bo can you check the cookie? @ada (me) and @carl@example.com too",
        answer=present_notes.comment_answer,
    )  # fmt: skip
    [note] = told(db, bo)
    assert note["title"] == "ada mentioned you on CRW-1"
    assert note["link"].startswith("/p/CRW/tasks/CRW-1#cmt_")
    assert told(db, ada) == []
    assert told(db, outsider) == []


def test_an_agents_mention_names_the_agent_and_whose_it_is(
    db: Database, ada: User, bo: User
) -> None:
    agent = agent_of(db, ada)
    notes.post_comment(
        db, agent, task="CRW-1", workspace_id=None, idempotency_key="c2",
        content="@bo the cookie is fixed", answer=present_notes.comment_answer,
    )  # fmt: skip
    assert agent.token is not None
    [note] = told(db, bo)
    assert note["title"] == f"{agent.token.name} (for ada) mentioned you on CRW-1"
    team.add_team_role(db, person_actor(ada), project="CRW", name="Builder", role="backend")
    notes.post_comment(
        db, agent, task="CRW-1", workspace_id=None, idempotency_key="c3",
        content="@bo and the header too", answer=present_notes.comment_answer,
    )  # fmt: skip
    # The token names no seat and Builder is the project's only AI seat: it acts as Builder.
    assert "Builder (for ada) mentioned you on CRW-1" in [n["title"] for n in told(db, bo)]


def test_an_answer_tells_the_person_behind_the_asking_agent(
    db: Database, ada: User, bo: User
) -> None:
    asked = questions.ask_question(
        db, agent_of(db, ada), task="CRW-1", workspace_id=None, idempotency_key="q1",
        question="Which browser?",
        answer=present_notes.question_answer,
    ).body["question"]  # fmt: skip
    questions.answer_question(db, person_actor(bo), asked["id"], "Firefox 140.")
    [note] = told(db, ada)
    assert (note["title"], note["body"]) == ("bo answered a question on CRW-1", "Firefox 140.")


def test_a_decision_tells_the_person_behind_the_hand_in_unless_they_decided(
    db: Database, ada: User, bo: User
) -> None:
    agent = agent_of(db, ada)
    first = drafts.create_draft(
        db,
        agent,
        task="CRW-1",
        title="A fix",
        content="Set SameSite.",
        idempotency_key="d1",
        answer=hand_in_view,
    ).body["draft"]
    decisions.approve(db, person_actor(bo), first["id"], comment="Good.")
    [note] = told(db, ada)
    assert note["title"] == "Your hand-in “A fix” was approved"
    assert note["link"] == f"/p/CRW/inbox/drafts/{first['id']}"
    second = drafts.create_draft(
        db,
        agent,
        task="CRW-1",
        title="Another",
        content="x",
        idempotency_key="d2",
        answer=hand_in_view,
    ).body["draft"]
    decisions.reject(db, person_actor(ada), second["id"], comment="No.")
    assert len(told(db, ada)) == 1  # ada decided her own agent's hand-in: nothing new
