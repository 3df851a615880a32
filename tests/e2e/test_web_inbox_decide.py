"""Deciding from the inbox list over real HTTP (the forms without a script, and the JSON the
inbox's script asks for), undoing a decision, a hand-in's versions with what changed, the
follow-up task linked after a decision, the first-run page, and no MCP tool name shown to
people on any page of an empty project."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from html.parser import HTMLParser
from typing import Any

import httpx2
import pytest

from crewboard.contract.catalogue import default_catalogue
from crewboard.contract.review.present import draft_read_view, hand_in_view
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor, User
from crewboard.services.identity.users import person_actor
from crewboard.services.review import drafts
from crewboard.services.review.undo import UNDO_WINDOW
from crewboard.storage.database import Database
from tests.support.factories import make_user
from tests.support.review import review_world
from tests.support.web import post_form, sign_in

MINUTE = timedelta(minutes=1)
INBOX = "/p/CRW/inbox"


@pytest.fixture
def owner(db: Database) -> User:
    return make_user(db, "owner@example.com", is_owner=True)


@pytest.fixture
def world(db: Database, owner: User) -> dict[str, str]:
    """CRW with the AI seat Coder, its task CRW-1 and an agent token acting as Coder."""
    return review_world(db, owner)


@pytest.fixture
def agent(db: Database, world: dict[str, str]) -> Actor:
    from crewboard.services.identity import tokens  # noqa: PLC0415 - this fixture's

    return tokens.authenticate_token(db, world["secret"])


@pytest.fixture
def client(url: str, owner: User, world: dict[str, str]) -> Iterator[httpx2.Client]:
    signed = sign_in(url, owner.email)
    try:
        yield signed
    finally:
        signed.close()


def hand_in(db: Database, agent: Actor, key: str, task: str = "CRW-1", **more: Any) -> str:
    """A result handed in on `task` (moving it to review when it can); its draft id."""
    arguments: dict[str, Any] = {
        "project": "CRW",
        "workspace_id": None,
        "task": task,
        "idempotency_key": key,
        "expected_revision": 1,
        "context_receipt_id": None,
        "title": "Redirect fixed",
        "summary": "The loop is gone",
        "content": "# Fixed\n\nThe loop is gone.\nNo tests yet.",
    }
    made = drafts.submit_result(db, agent, **(arguments | more), answer=hand_in_view)
    return str(made.body["draft"]["id"])


def status_of(db: Database, owner: User, draft_id: str) -> str:
    return str(draft_read_view(drafts.get_draft(db, person_actor(owner), draft_id))["status"])


def from_list(client: httpx2.Client, draft_id: str, decision: str, **data: str) -> httpx2.Response:
    return post_form(
        client,
        f"{INBOX}/drafts/{draft_id}/{decision}",
        {"next": INBOX, "from": "list", **data},
    )


def as_script(client: httpx2.Client, draft_id: str, decision: str, **data: str) -> httpx2.Response:
    page = client.get(INBOX).text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None
    return client.post(
        f"{INBOX}/drafts/{draft_id}/{decision}",
        data={"csrf": csrf.group(1), "next": INBOX, "from": "list", **data},
        headers={"accept": "application/json"},
    )


# --- deciding from the list ----------------------------------------------------------------------


def test_each_waiting_card_carries_approve_revise_and_reject(
    db: Database, agent: Actor, client: httpx2.Client
) -> None:
    draft = hand_in(db, agent, "h-1")
    html = client.get(INBOX).text
    for decision in ("approve", "revise", "reject"):
        assert f'action="{INBOX}/drafts/{draft}/{decision}"' in html
    assert 'name="comment" rows="3" required' in html  # a note, a reason: asked for
    assert html.count('name="from" value="list"') == 3


def test_approving_from_the_list_stays_on_the_list_and_offers_undo(
    db: Database, owner: User, agent: Actor, client: httpx2.Client
) -> None:
    draft = hand_in(db, agent, "h-1")
    answer = from_list(client, draft, "approve")
    assert answer.headers["location"] == INBOX
    html = client.get(INBOX).text
    assert f'data-decided="{draft}"' in html
    assert f'action="{INBOX}/drafts/{draft}/take-back"' in html
    assert f'id="item-{draft}"' not in html  # decided: off the list
    # The note is said once: the next visit has no note.
    assert "data-decided=" not in client.get(INBOX).text
    undone = from_list(client, draft, "take-back")
    assert undone.headers["location"] == INBOX
    page = client.get(INBOX).text
    assert "It waits for review again." in page
    assert f'id="item-{draft}"' in page
    assert status_of(db, owner, draft) == "pending"


def test_a_revision_from_the_list_links_its_follow_up_task(
    db: Database, agent: Actor, client: httpx2.Client
) -> None:
    draft = hand_in(db, agent, "h-1")
    from_list(client, draft, "revise", comment="Add a test for the redirect.")
    html = client.get(INBOX).text
    assert 'href="/p/CRW/tasks/CRW-2" data-follow-up>CRW-2 Revise: Fix the login redirect' in html


def test_the_inbox_script_gets_json_for_a_decision_and_for_a_refusal(
    db: Database, agent: Actor, client: httpx2.Client
) -> None:
    draft = hand_in(db, agent, "h-1")
    answer = as_script(client, draft, "revise", comment="Add a test.")
    assert answer.status_code == 200
    body = answer.json()
    assert body["ok"] is True
    assert body["decided"]["followUp"]["key"] == "CRW-2"
    assert body["decided"]["followUp"]["url"] == "/p/CRW/tasks/CRW-2"
    assert body["decided"]["undo"] == f"{INBOX}/drafts/{draft}/take-back"
    again = as_script(client, draft, "approve")
    assert again.status_code == 422
    assert again.json()["ok"] is False
    assert "revision_requested" in again.json()["error"]
    undone = as_script(client, draft, "take-back")
    assert undone.json()["ok"] is True
    assert undone.json()["decided"] is None  # it waits again: nothing decided to tell


def test_undo_is_refused_in_words_once_the_window_closed(
    db: Database, clock: ManualClock, agent: Actor, client: httpx2.Client
) -> None:
    draft = hand_in(db, agent, "h-1")
    from_list(client, draft, "approve")
    clock.advance(UNDO_WINDOW + MINUTE)
    html = client.get(INBOX).text
    assert "take-back" not in html  # no Undo offered any more
    answer = as_script(client, draft, "take-back")
    assert answer.status_code == 422
    assert "10 minutes" in answer.json()["error"]


def test_a_decision_on_the_hand_in_page_tells_its_follow_up_on_the_next_page(
    db: Database, agent: Actor, client: httpx2.Client
) -> None:
    draft = hand_in(db, agent, "h-1")
    path = f"{INBOX}/drafts/{draft}"
    answer = post_form(client, f"{path}/revise", {"next": path, "comment": "Shorter."})
    assert answer.headers["location"] == INBOX  # nothing else waits
    html = client.get(INBOX).text
    assert "Sent back for revision" in html
    assert 'href="/p/CRW/tasks/CRW-2" data-follow-up' in html


# --- versions -------------------------------------------------------------------------------------


def test_a_resubmission_is_version_2_with_what_changed(
    db: Database, clock: ManualClock, agent: Actor, client: httpx2.Client
) -> None:
    first = hand_in(db, agent, "h-1")
    from_list(client, first, "revise", comment="Add a test for the redirect.")
    clock.advance(MINUTE)
    second = hand_in(
        db, agent, "h-2", task="CRW-2", summary="The loop is gone, with a test",
        content="# Fixed\n\nThe loop is gone.\nA test covers the redirect.",
    )  # fmt: skip
    html = client.get(INBOX).text
    assert f'id="item-{first}"' not in html
    assert f'id="item-{second}"' in html
    assert "Version 2 — revised after your note" in html
    assert f'href="/p/CRW/inbox/drafts/{first}">version 1</a>' in html
    assert "Add a test for the redirect." in html  # the note it answers
    page = client.get(f"{INBOX}/drafts/{second}").text
    assert 'id="changes"' in page
    assert "The loop is gone<ins>, with a test</ins>" in page  # the summary, word by word
    assert '<div class="diff-row removed">' in page
    assert "No tests yet." in page
    assert "<ins>covers the redirect</ins>" in page


# --- the first-run page ---------------------------------------------------------------------------


def test_the_first_run_page_shows_each_client_and_the_steps(
    db: Database, url: str, owner: User
) -> None:
    from tests.support.factories import make_project  # noqa: PLC0415 - this test's

    make_project(db, owner, "NEW")
    signed = sign_in(url, owner.email)
    try:
        empty = signed.get("/p/NEW/inbox").text
        assert 'href="/p/NEW/start"' in empty
        page = signed.get("/p/NEW/start").text
    finally:
        signed.close()
    for client_name in ("Claude Code", "Claude Desktop", "Cursor", "VS Code", "Codex CLI"):
        assert f"<summary>{client_name}</summary>" in page
    assert "YOUR_TOKEN" in page
    assert 'href="/settings/tokens"' in page
    assert 'action="/p/NEW/board/tasks"' in page
    assert "step-done" not in page  # nothing done yet


def test_the_first_run_page_marks_what_is_done(
    db: Database, agent: Actor, client: httpx2.Client
) -> None:
    hand_in(db, agent, "h-1")
    page = client.get("/p/CRW/start").text
    assert "done: 1 task on the board" in page
    assert "done: 1 hand-in" in page
    assert "Open the newest hand-in" in page


# --- no tool names for people ---------------------------------------------------------------------


class _Visible(HTMLParser):
    """The text a person sees (and hears): text outside scripts and styles, and the words
    of labels, titles, placeholders and alt texts."""

    HIDDEN = frozenset({"script", "style", "template"})
    SAID = ("aria-label", "title", "placeholder", "alt", "value")

    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self._skip += 1
        shown = dict(attrs)
        if tag == "input" and shown.get("type") == "hidden":
            return
        self.words.extend(str(shown[name]) for name in self.SAID if shown.get(name))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.words.append(data)


EMPTY_PROJECT_PAGES = (
    "/p/NEW/inbox",
    "/p/NEW/start",
    "/p/NEW/board",
    "/p/NEW/memory",
    "/p/NEW/memory/documents/decisions",
    "/p/NEW/state",
    "/p/NEW/week",
    "/p/NEW/team",
    "/p/NEW/activity",
    "/p/NEW/search?q=anything",
    "/p/NEW/specs",
    "/p/NEW/specs?trashed=1",
    "/p/NEW/attachments",
    "/p/NEW/artifacts",
    "/p/NEW/handoffs",
    "/p/NEW/sessions",
    "/p/NEW/settings/project",
    "/p/NEW/settings/spec-sessions",
    "/notifications",
    "/settings/tokens",
    "/settings/models",
    "/settings/workspaces",
    "/settings/password",
)


def test_no_page_of_an_empty_project_shows_an_mcp_tool_name(
    db: Database, url: str, owner: User
) -> None:
    from tests.support.factories import make_project  # noqa: PLC0415 - this test's

    make_project(db, owner, "NEW")
    tools = re.compile(r"\b(" + "|".join(sorted(default_catalogue().names)) + r")\b")
    named: dict[str, list[str]] = {}
    signed = sign_in(url, owner.email)
    try:
        for path in EMPTY_PROJECT_PAGES:
            answer = signed.get(path)
            assert answer.status_code == 200, path
            parser = _Visible()
            parser.feed(answer.text)
            found = sorted(set(tools.findall(" ".join(parser.words))))
            if found:
                named[path] = found
    finally:
        signed.close()
    assert named == {}


def test_the_hand_in_page_offers_undo_of_its_decision_to_the_person_who_took_it(
    db: Database, owner: User, agent: Actor, client: httpx2.Client
) -> None:
    draft = hand_in(db, agent, "h-1")
    path = f"{INBOX}/drafts/{draft}"
    post_form(client, f"{path}/reject", {"next": path, "comment": "Wrong file."})
    page = client.get(path).text
    assert f'action="{path}/take-back"' in page
    answer = post_form(client, f"{path}/take-back", {"next": path})
    assert answer.headers["location"] == path
    assert status_of(db, owner, draft) == "pending"
    assert "Undo this decision" not in client.get(path).text  # waiting: nothing to undo
