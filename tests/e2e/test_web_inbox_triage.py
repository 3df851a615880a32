"""Triaging the web inbox over real HTTP: the unread count in the header and the tab title,
read markers (opening an item, the row buttons, mark all), "next" after a decision, and an
agent shown as its seat on what it hands in over MCP."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from html import unescape
from typing import Any

import httpx2
import pytest

from crewboard.contract.board import present_notes
from crewboard.contract.review.present import draft_read_view, hand_in_view
from crewboard.contract.review.present_proposals import proposed_view
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.services.board import questions, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import drafts, proposals, reads
from crewboard.storage.database import Database
from tests.support.factories import grant, make_user, token_actor
from tests.support.mcp_client import body_of, mcp_client
from tests.support.review import review_world
from tests.support.web import post_form, sign_in

BADGE = re.compile(r"data-unread-count(?P<hidden> hidden)?>(?P<count>\d+)<")
ARIA = re.compile(r'aria-label="([^"]+)"')
MINUTE = timedelta(minutes=1)
HANDS = ["read", "drafts.create"]  # what a token needs to hand in a draft
MINE = "CRW-1&#39;s hand-in"  # as the page escapes it


@pytest.fixture
def owner(db: Database) -> User:
    return make_user(db, "owner@example.com")


@pytest.fixture
def world(db: Database, owner: User) -> dict[str, str]:
    """CRW with the AI seat Coder, its task CRW-1 and an agent token acting as Coder."""
    return review_world(db, owner)


@pytest.fixture
def agent(db: Database, world: dict[str, str]) -> Actor:
    return tokens.authenticate_token(db, world["secret"])


@pytest.fixture
def client(url: str, owner: User, world: dict[str, str]) -> Iterator[httpx2.Client]:
    signed = sign_in(url, owner.email)
    try:
        yield signed
    finally:
        signed.close()


def hand_in(
    db: Database, agent: Actor, key: str, title: str = "Redirect fixed", task: str = "CRW-1"
) -> str:
    made = drafts.create_draft(
        db,
        agent,
        task=task,
        idempotency_key=key,
        title=title,
        content=f"Result {key}.",
        answer=hand_in_view,
    )
    return str(made.body["draft"]["id"])


def another_task(db: Database, owner: User) -> str:
    """CRW-2: a hand-in on it is not superseded when one on CRW-1 is approved."""
    made = tasks.create_task(
        db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key="t-2",
        title="Write the notes",
    )  # fmt: skip
    return str(made.body["task"]["key"])


def ask(db: Database, agent: Actor, text: str, key: str) -> str:
    asked = questions.ask_question(
        db,
        agent,
        task="CRW-1",
        workspace_id=None,
        question=text,
        idempotency_key=key,
        answer=present_notes.question_answer,
    )
    return str(asked.body["question"]["id"])


def badge(html: str) -> int | None:
    """The header's unread count; None when the badge is hidden."""
    found = BADGE.search(html)
    assert found is not None, "no unread badge in the header"
    return None if found["hidden"] else int(found["count"])


def title(html: str) -> str:
    found = re.search(r"<title>(.*?)</title>", html)
    assert found is not None
    return found.group(1)


def row(html: str, item_id: str) -> str:
    """The inbox row of an item (its <li> up to the next one)."""
    start = html.index(f'id="item-{item_id}"')
    end = html.find("<li id=", start + 1)
    return html[start : end if end != -1 else len(html)]


def followed(client: httpx2.Client, answer: httpx2.Response) -> str:
    assert answer.status_code == 303, answer.text
    return client.get(answer.headers["location"]).text


# --- the count ---------------------------------------------------------------------------------


def test_the_header_and_tab_title_count_what_is_new_on_every_page(
    db: Database, agent: Actor, client: httpx2.Client
) -> None:
    empty = client.get("/p/CRW/inbox").text
    assert badge(empty) is None
    assert title(empty) == "Inbox · Crewboard"
    hand_in(db, agent, "h-1")
    ask(db, agent, "Which browser?", "q-1")
    proposals.propose_task(
        db, agent, project="CRW", title="Add a logout button", answer=proposed_view
    )
    inbox = client.get("/p/CRW/inbox").text
    assert badge(inbox) == 3
    assert title(inbox) == "(3) Inbox · Crewboard"
    assert '3<span class="visually-hidden"> new</span>' in inbox  # the link says "Inbox 3 new"
    board = client.get("/p/CRW/board").text
    assert badge(board) == 3
    assert title(board).startswith("(3) Board")


# --- read markers --------------------------------------------------------------------------------


def test_opening_a_hand_in_marks_it_read_for_that_person_only(
    db: Database, url: str, owner: User, agent: Actor, client: httpx2.Client
) -> None:
    other = make_user(db, "other@example.com")
    grant(db, owner, "CRW", other, Role.WRITE)
    draft = hand_in(db, agent, "h-1")
    before = client.get("/p/CRW/inbox").text
    assert 'class="unread"' in row(before, draft)
    assert '<span class="badge new">new</span>' in row(before, draft)
    assert client.get(f"/p/CRW/inbox/drafts/{draft}").status_code == 200
    after = client.get("/p/CRW/inbox").text
    assert 'class="read"' in row(after, draft)
    assert "badge new" not in row(after, draft)
    assert badge(after) is None
    assert reads.unread_count(db, person_actor(other), "CRW") == 1
    second = sign_in(url, other.email)
    try:
        assert badge(second.get("/p/CRW/inbox").text) == 1
    finally:
        second.close()


def test_a_row_is_marked_read_and_unread_by_its_buttons_and_all_at_once(
    db: Database, agent: Actor, client: httpx2.Client
) -> None:
    draft = hand_in(db, agent, "h-1")
    question = ask(db, agent, "Which browser?", "q-1")
    html = client.get("/p/CRW/inbox").text
    assert f'aria-label="Mark read: {MINE}"' in html
    assert 'aria-label="Mark read: the question on CRW-1"' in html
    answer = post_form(
        client,
        f"/p/CRW/inbox/read/hand_in/{draft}",
        {"next": "/p/CRW/inbox", "label": "CRW-1's hand-in"},
    )
    assert answer.headers["location"] == f"/p/CRW/inbox#item-{draft}"
    html = followed(client, answer)
    assert f"Marked {MINE} read." in html
    assert f'aria-label="Mark unread: {MINE}"' in html
    assert badge(html) == 1
    html = followed(
        client, post_form(client, f"/p/CRW/inbox/unread/hand_in/{draft}", {"next": "/p/CRW/inbox"})
    )
    assert badge(html) == 2
    assert 'class="unread"' in row(html, draft)
    answer = post_form(client, "/p/CRW/inbox/read-all", {"next": "/p/CRW/inbox", "kind": ""})
    html = followed(client, answer)
    assert "Marked 2 items read." in html
    assert badge(html) is None
    assert "Mark all read" not in html
    assert 'class="read"' in row(html, question)


def test_a_bad_kind_or_item_comes_back_as_a_flash_naming_it(
    db: Database, agent: Actor, client: httpx2.Client
) -> None:
    hand_in(db, agent, "h-1")
    html = followed(
        client, post_form(client, "/p/CRW/inbox/read/draft/drf_nope", {"next": "/p/CRW/inbox"})
    )
    assert 'class="flash error"' in html
    assert "Kind" in html
    assert "hand_in" in html  # the accepted values
    html = followed(
        client, post_form(client, "/p/CRW/inbox/read/hand_in/drf_nope", {"next": "/p/CRW/inbox"})
    )
    assert 'class="flash error"' in html
    assert "drf_nope" in html
    assert badge(html) == 1


def test_repeated_row_buttons_have_unique_accessible_names(
    db: Database, owner: User, agent: Actor, client: httpx2.Client
) -> None:
    # Three hands (a resubmission by the same one would be a version of one card).
    hand_in(db, agent, "h-1", title="First try")
    hand_in(db, token_actor(db, owner, HANDS), "h-2", title="Second try")
    hand_in(db, token_actor(db, owner, HANDS), "h-3", title="Second try")
    ask(db, agent, "Which browser?", "q-1")
    ask(db, agent, "Which browser?", "q-2")
    labels = [unescape(label) for label in ARIA.findall(client.get("/p/CRW/inbox").text)]
    repeated = [label for label, n in Counter(labels).items() if n > 1]
    assert repeated == []
    assert "Mark read: CRW-1's hand-in “First try”" in labels


# --- next after a decision -----------------------------------------------------------------------


def test_after_a_decision_the_next_item_waiting_opens_then_the_inbox(
    db: Database, clock: ManualClock, owner: User, agent: Actor, client: httpx2.Client
) -> None:
    older = hand_in(db, agent, "h-1", title="Older", task=another_task(db, owner))
    clock.advance(MINUTE)
    card = proposals.propose_task(
        db, agent, project="CRW", title="Add a logout button", answer=proposed_view
    )
    card_id = card.body["proposal"]["id"]
    clock.advance(MINUTE)
    newer = hand_in(db, agent, "h-2", title="Newer")
    # Newest first: deciding the newest leads to the card, then to the older hand-in.
    answer = post_form(client, f"/p/CRW/inbox/drafts/{newer}/approve", {})
    assert answer.headers["location"] == f"/p/CRW/inbox/proposals/{card_id}"
    html = followed(client, answer)
    assert "Approved “Newer”. Next: the new-task proposal “Add a logout button”." in html
    answer = post_form(client, f"/p/CRW/inbox/proposals/{card_id}/dismiss", {})
    assert answer.headers["location"] == f"/p/CRW/inbox/drafts/{older}"
    answer = post_form(client, f"/p/CRW/inbox/drafts/{older}/reject", {"comment": "No."})
    assert answer.headers["location"] == "/p/CRW/inbox"
    assert "Rejected “Older”. Nothing else waits for you here." in followed(client, answer)


def test_answering_a_question_goes_on_to_the_next_question_of_the_kind_shown(
    db: Database, clock: ManualClock, agent: Actor, client: httpx2.Client
) -> None:
    first = ask(db, agent, "Which browser?", "q-1")
    clock.advance(MINUTE)
    second = ask(db, agent, "Which port?", "q-2")
    clock.advance(MINUTE)
    hand_in(db, agent, "h-1")  # newer, but not a question
    answer = post_form(
        client,
        f"/p/CRW/inbox/questions/{second}/answer",
        {"answer": "8080.", "next": "/p/CRW/inbox?kind=question", "kind": "question"},
    )
    assert answer.headers["location"] == f"/p/CRW/inbox?kind=question#item-{first}"
    assert "Answer sent. Next: the question on CRW-1." in followed(client, answer)


def test_a_decided_hand_in_links_its_memory_record_and_follow_up_task(
    db: Database, owner: User, agent: Actor, client: httpx2.Client
) -> None:
    saved = hand_in(db, agent, "h-1", title="Sessions explained")
    post_form(client, f"/p/CRW/inbox/drafts/{saved}/save", {"collection": "architecture"})
    decided: dict[str, Any] = draft_read_view(drafts.get_draft(db, person_actor(owner), saved))
    html = client.get(f"/p/CRW/inbox/drafts/{saved}").text
    record = decided["memoryRecordId"]
    assert f'href="/p/CRW/memory/records/{record}">“Sessions explained”</a>' in html
    revised = hand_in(db, agent, "h-2", title="Needs work")
    post_form(client, f"/p/CRW/inbox/drafts/{revised}/revise", {"comment": "More tests."})
    follow_up = draft_read_view(drafts.get_draft(db, person_actor(owner), revised))["followUpTask"]
    html = client.get(f"/p/CRW/inbox/drafts/{revised}").text
    assert f'href="/p/CRW/tasks/{follow_up["key"]}"' in html


# --- agents shown as themselves ----------------------------------------------------------------


@pytest.mark.anyio
async def test_a_hand_in_over_mcp_shows_its_seat_on_the_inbox_and_its_page(
    url: str, world: dict[str, str], client: httpx2.Client
) -> None:
    async with mcp_client(url, world["secret"], "legacy") as agent:
        read = body_of(await agent.call_tool("get_task", {"taskId": world["task"]}))
        done = body_of(
            await agent.call_tool(
                "submit_result",
                {
                    "projectId": "CRW",
                    "workspaceId": None,
                    "taskId": world["task"],
                    "idempotencyKey": "mcp-1",
                    "expectedRevision": read["task"]["revision"],
                    "contextReceiptId": read.get("contextReceiptId"),
                    "title": "Redirect fixed over MCP",
                    "content": "Done.",
                },
            )
        )
    draft = done["draft"]
    assert (draft["author"]["roleName"], draft["author"]["roleKind"]) == ("Coder", "ai")
    seat = 'Coder <span class="muted">(for owner)</span> <span class="badge">AI</span>'
    assert seat in row(client.get("/p/CRW/inbox").text, draft["id"])
    page = client.get(f"/p/CRW/inbox/drafts/{draft['id']}").text
    assert f"handed in by {seat}" in page
    assert "for owner" in page  # whose token it is
