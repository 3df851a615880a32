"""Inbox read markers through the services: per person, mark and unmark, mark all, the one-query
count that the header shows, and the AI seat kept in what an agent writes."""

from __future__ import annotations

from typing import Any

import pytest

from crewboard.contract.board import present_notes
from crewboard.contract.projects import present
from crewboard.contract.review.present import draft_read_view, hand_in_view
from crewboard.contract.review.present_inbox import posted_view
from crewboard.contract.review.present_proposals import proposal_view, proposed_view
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.board import questions
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import decisions, drafts, inbox, messages, proposals, reads
from crewboard.storage.database import Database
from tests.support.errors import refused
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor
from tests.support.review import review_world


@pytest.fixture
def owner(db: Database) -> User:
    return make_user(db, "owner@example.com")


@pytest.fixture
def world(db: Database, owner: User) -> dict[str, str]:
    return review_world(db, owner)


@pytest.fixture
def agent(db: Database, world: dict[str, str]) -> Actor:
    """The agent token of the world: it acts as the project's only AI seat, Coder."""
    return tokens.authenticate_token(db, world["secret"])


@pytest.fixture
def other(db: Database, owner: User, world: dict[str, str]) -> User:
    """A second reviewer on CRW."""
    user = make_user(db, "other@example.com")
    grant(db, owner, "CRW", user, Role.WRITE)
    return user


def hand_in(db: Database, agent: Actor, key: str = "h-1") -> dict[str, Any]:
    made = drafts.create_draft(
        db, agent, task="CRW-1", idempotency_key=key, title="Redirect fixed",
        summary="The loop is gone", content="Fixed.", answer=hand_in_view,
    )  # fmt: skip
    return dict(made.body["draft"])


def fill_inbox(db: Database, agent: Actor, owner: User) -> dict[str, str]:
    """One item of each kind; the message is for the owner. Their ids by kind."""
    draft = hand_in(db, agent)
    card = proposals.propose_task(
        db, agent, project="CRW", title="Add a logout button", answer=proposed_view
    )
    asked = questions.ask_question(
        db, agent, task="CRW-1", workspace_id=None, question="Which browser?",
        idempotency_key="q-1",
        answer=present_notes.question_answer,
    )  # fmt: skip
    posted = messages.post_message(
        db, agent, project="CRW", workspace_id=None, participant_id=owner.id, body="Heads-up",
        answer=posted_view,
    )  # fmt: skip
    return {
        "hand_in": draft["id"],
        "proposal": card.body["proposal"]["id"],
        "question": asked.body["question"]["id"],
        "message": posted.body["message"]["id"],
    }


def unread(db: Database, user: User) -> int:
    return reads.unread_count(db, person_actor(user), "CRW")


def listed(db: Database, user: User) -> dict[str, bool]:
    """Each inbox item of the user's CRW inbox: whether they have read it."""
    found = inbox.inbox(db, person_actor(user), project="CRW")
    assert found.unread == unread(db, user)  # the list and the one-query count agree
    return {item.id: item.read for item in found.items}


def test_reading_is_per_person(db: Database, owner: User, other: User, agent: Actor) -> None:
    ids = fill_inbox(db, agent, owner)
    assert (unread(db, owner), unread(db, other)) == (4, 3)  # the message is the owner's
    reads.mark_read(db, person_actor(owner), "CRW", [("hand_in", ids["hand_in"])])
    assert (unread(db, owner), unread(db, other)) == (3, 3)
    assert listed(db, owner)[ids["hand_in"]] is True
    assert listed(db, other)[ids["hand_in"]] is False


def test_mark_and_unmark_one_item_and_again_changes_nothing(
    db: Database, owner: User, agent: Actor
) -> None:
    ids = fill_inbox(db, agent, owner)
    me = person_actor(owner)
    for _ in range(2):
        reads.mark_read(db, me, "CRW", [("question", ids["question"])])
    assert unread(db, owner) == 3
    assert count_rows(db, "inbox_reads") == 1
    assert reads.mark_unread(db, me, "CRW", "question", ids["question"]).changed is True
    assert reads.mark_unread(db, me, "CRW", "question", ids["question"]).changed is False
    assert unread(db, owner) == 4
    assert listed(db, owner)[ids["question"]] is False


def test_mark_all_read_then_a_new_item_is_new(db: Database, owner: User, agent: Actor) -> None:
    fill_inbox(db, agent, owner)
    me = person_actor(owner)
    assert reads.mark_all_read(db, me, "CRW", kind="question").marked == 1
    assert unread(db, owner) == 3
    assert reads.mark_all_read(db, me, "CRW").marked == 3
    assert reads.mark_all_read(db, me, "CRW").marked == 0
    assert unread(db, owner) == 0
    second = hand_in(db, agent, key="h-2")
    assert unread(db, owner) == 1
    assert listed(db, owner)[second["id"]] is False


def test_decided_and_dismissed_items_leave_the_count(
    db: Database, owner: User, agent: Actor
) -> None:
    ids = fill_inbox(db, agent, owner)
    me = person_actor(owner)
    decisions.approve(db, me, ids["hand_in"])
    proposals.dismiss_proposal(db, me, ids["proposal"])
    questions.answer_question(db, me, ids["question"], "Chromium.")
    messages.dismiss_message(db, me, "CRW", ids["message"])
    assert unread(db, owner) == 0


def test_a_message_to_a_seat_the_person_holds_counts_for_them_only(
    db: Database, owner: User, other: User, agent: Actor
) -> None:
    seat = present.add_team_role(
        db, person_actor(owner), project="CRW", name="Reviewer", kind="human",
        member_email=other.email,
    )  # fmt: skip
    messages.post_message(
        db, agent, project="CRW", workspace_id=None, participant_id=seat["id"], body="For you",
        answer=posted_view,
    )  # fmt: skip
    assert (unread(db, owner), unread(db, other)) == (0, 1)


def test_refusals_name_the_problem(db: Database, owner: User, agent: Actor) -> None:
    ids = fill_inbox(db, agent, owner)
    me = person_actor(owner)
    error = refused(ErrorCode.VALIDATION, reads.mark_read, db, me, "CRW", [("draft", "x")])
    assert error.details["field"] == "kind"
    make_project(db, owner, "OPS")
    refused(ErrorCode.NOT_FOUND, reads.mark_read, db, me, "OPS", [("hand_in", ids["hand_in"])])
    refused(ErrorCode.NOT_FOUND, reads.mark_unread, db, me, "CRW", "proposal", ids["hand_in"])
    refused(ErrorCode.PERMISSION_DENIED, reads.mark_all_read, db, agent, "CRW")
    stranger = person_actor(make_user(db, "stranger@example.com"))
    refused(ErrorCode.NOT_FOUND, reads.unread_count, db, stranger, "CRW")
    assert reads.unread_count(db, agent, "CRW") == 0  # a token has no inbox
    assert count_rows(db, "inbox_reads") == 0


# --- the AI seat in what an agent writes ------------------------------------------------------


def test_what_an_agent_writes_carries_its_seat_and_a_persons_token_does_not(
    db: Database, owner: User, world: dict[str, str], agent: Actor
) -> None:
    ids = fill_inbox(db, agent, owner)
    me = person_actor(owner)
    seat = {"roleId": world["seat"], "roleName": "Coder", "roleKind": "ai"}
    stamps = [
        draft_read_view(drafts.get_draft(db, me, ids["hand_in"]))["author"],
        proposal_view(proposals.get_proposal(db, me, ids["proposal"]))["author"],
        present_notes.open_questions_view(questions.list_open_questions(db, me, "CRW"))[
            "questions"
        ][0]["askedBy"],
        messages.list_thread(db, me, "CRW", owner.id).messages[0].author,
    ]
    for stamp in stamps:
        assert {k: stamp.get(k) for k in seat} == seat
        assert stamp["kind"] == "agent_token"
    personal = token_actor(db, owner, ["read", "tasks.manage", "drafts.create"])
    mine = hand_in(db, personal, key="h-personal")
    assert "roleName" not in mine["author"]
    assert personal.token is not None
    assert mine["author"]["tokenName"] == personal.token.name
