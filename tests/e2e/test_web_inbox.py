"""The web inbox over real HTTP: the list, a hand-in, a proposal card, questions, decisions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from crewboard.contract.board import present_notes
from crewboard.contract.review.present import draft_read_view, hand_in_view
from crewboard.contract.review.present_inbox import posted_view
from crewboard.contract.review.present_proposals import proposal_view, proposed_view
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import NotFound, PermissionDenied
from crewboard.services.board import questions, task_updates, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.services.review import drafts, messages, proposals, rules
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from crewboard.web.pages.review.inbox import KIND_LABELS
from tests.support import task_reads as task_queries
from tests.support.factories import grant, make_project, make_user, token_actor
from tests.support.web import csrf_of, post_form, sign_in

AGENT_SCOPES = ["read", "tasks.manage", "drafts.create", "messages.write"]
HOSTILE = "<script>alert(1)</script> and <img src=x onerror=alert(1)>"
LIVE_TAG_WITH_HANDLER = re.compile(r"<[^>]*onerror=", re.IGNORECASE)


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW", collections=["general", "architecture"])
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


@pytest.fixture
def agent(db: Database, owner: User, me: Actor) -> Actor:
    """The owner's personal token (an AI client acting for them) and a task CRW-1 for it."""
    tasks.create_task(
        db, me, project="CRW", workspace_id=None, idempotency_key="t-1",
        title="Fix the login redirect", status="ready_for_ai",
    )  # fmt: skip
    return token_actor(db, owner, AGENT_SCOPES)


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    signed = sign_in(url, owner.email)
    try:
        yield signed
    finally:
        signed.close()


def hand_in(db: Database, agent: Actor, key: str = "h-1", **overrides: Any) -> str:
    """A hand-in on CRW-1 through the services; its draft id."""
    arguments: dict[str, Any] = {
        "project": "CRW",
        "workspace_id": None,
        "task": "CRW-1",
        "idempotency_key": key,
        "expected_revision": 1,
        "context_receipt_id": None,
        "title": "Redirect fixed",
        "summary": "The loop is gone",
        "content": "# Fixed\n\nThe **loop** is gone.",
        "collection": "architecture",
        "document": "decisions",
        "references": [
            {"kind": "commit", "value": "a1b2c3d"},
            {"kind": "link", "value": "CI run", "url": "https://ci.example.com/run/7"},
        ],
    }
    result = drafts.submit_result(db, agent, **(arguments | overrides), answer=hand_in_view)
    return str(result.body["draft"]["id"])


def status_of(db: Database, me: Actor, draft_id: str) -> str:
    return str(draft_read_view(drafts.get_draft(db, me, draft_id))["status"])


def decide(client: httpx2.Client, draft_id: str, decision: str, **data: str) -> httpx2.Response:
    path = f"/p/CRW/inbox/drafts/{draft_id}"
    return post_form(client, f"{path}/{decision}", {"next": path, **data})


def flash_after(client: httpx2.Client, answer: httpx2.Response) -> str:
    """The page a redirect leads to (which shows the flash it set)."""
    assert answer.status_code == 303, answer.text
    return client.get(answer.headers["location"]).text


# --- the list ----------------------------------------------------------------------------------


def test_inbox_lists_what_waits_newest_first_with_counts_per_kind(
    db: Database, owner: User, agent: Actor, client: httpx2.Client
) -> None:
    draft_id = hand_in(db, agent)
    proposals.propose_task(
        db, agent, project="CRW", title="Add a logout button", answer=proposed_view
    )
    questions.ask_question(
        db, agent, task="CRW-1", workspace_id=None, question="Which *browser*?",
        idempotency_key="q-1",
        answer=present_notes.question_answer,
    )  # fmt: skip
    messages.post_message(
        db, agent, project="CRW", workspace_id=None, participant_id=owner.id,
        body="Heads-up: **tests** are slow", task="CRW-1", answer=posted_view,
    )  # fmt: skip
    page = client.get("/p/CRW/inbox")
    assert page.status_code == 200
    html = page.text
    assert 'data-live="inbox"' in html
    assert "data-live-region" in html
    for kind, label in KIND_LABELS.items():
        assert f'data-count="{kind}">{label} 1</a>' in html
    assert 'aria-current="page">All 4</a>' in html
    assert "New task: Add a logout button" in html
    assert f'href="/p/CRW/inbox/drafts/{draft_id}"' in html
    assert "Add a logout button" in html
    assert "<em>browser</em>" in html
    assert "<strong>tests</strong>" in html
    assert re.search(r"to you\s+· about", html)  # a space before the dot
    assert 'href="/p/CRW/tasks/CRW-1"' in html
    only = client.get("/p/CRW/inbox?kind=question").text
    assert "Which" in only
    assert "Redirect fixed" not in only
    assert client.get("/p/CRW/inbox?kind=nope").status_code == 422


def test_inbox_without_a_project_goes_to_the_current_one(client: httpx2.Client) -> None:
    answer = client.get("/inbox?kind=hand_in")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/p/CRW/inbox?kind=hand_in"


def test_a_project_the_person_cannot_open_is_not_found(
    db: Database, url: str, owner: User, agent: Actor, client: httpx2.Client
) -> None:
    other = make_user(db, "other@example.com")
    make_project(db, other, "OTH")
    draft_id = hand_in(db, agent)
    assert client.get("/p/OTH/inbox").status_code == 404
    stranger = sign_in(url, other.email)
    try:
        assert stranger.get(f"/p/OTH/inbox/drafts/{draft_id}").status_code == 404
        assert stranger.get(f"/p/CRW/inbox/drafts/{draft_id}").status_code == 404
    finally:
        stranger.close()
    grant(db, other, "OTH", owner, Role.READ)
    # Open to the owner, but not a draft of OTH: its page lives under CRW only.
    assert client.get(f"/p/OTH/inbox/drafts/{draft_id}").status_code == 404


def test_agent_titles_in_the_list_are_escaped(
    db: Database, agent: Actor, client: httpx2.Client
) -> None:
    hand_in(db, agent, title=f"Title {HOSTILE}", summary=HOSTILE)
    html = client.get("/p/CRW/inbox").text
    assert "<script>" not in html
    assert not LIVE_TAG_WITH_HANDLER.search(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# --- a hand-in ---------------------------------------------------------------------------------


def test_hand_in_page_shows_the_result_safely_with_its_references(
    db: Database, agent: Actor, client: httpx2.Client
) -> None:
    content = f"# Result\n\n{HOSTILE}\n\n[bad](javascript:alert(1)) and [good](https://example.com)"
    draft_id = hand_in(db, agent, title="<script>x</script>", content=content)
    page = client.get(f"/p/CRW/inbox/drafts/{draft_id}")
    assert page.status_code == 200
    html = page.text
    assert "<script>" not in html
    assert not LIVE_TAG_WITH_HANDLER.search(html)
    assert 'href="javascript:' not in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert "&lt;img src=x" in html
    assert "<h1>Result</h1>" in html
    assert '<a href="https://example.com" rel="noopener noreferrer nofollow">good</a>' in html
    assert "a1b2c3d" in html
    assert (
        '<a href="https://ci.example.com/run/7" rel="noopener noreferrer nofollow">'
        "https://ci.example.com/run/7</a>"
    ) in html
    assert 'href="/p/CRW/tasks/CRW-1"' in html
    assert '<option value="architecture" selected>' in html
    assert '<option value="decisions" selected>' in html
    assert html.count('name="csrf"') >= 5  # sign-out and the four decisions


@pytest.mark.usefixtures("agent")  # CRW-1
def test_an_input_changed_since_the_agent_read_it_is_named_in_words(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    task_updates.update_task(
        db, me, project="CRW", workspace_id=None, idempotency_key="brief-1",
        task_id="CRW-1", expected_revision=1, patch={"brief": "Fix the loop."},
    )  # fmt: skip

    def file(uow: UnitOfWork) -> None:  # a project with memory hands out receipts
        project = uow.projects.get_by_key("CRW")
        assert project is not None
        memory.file_record(
            uow, me, project, title="Sessions live in Redis", summary="Where sessions are",
            content="Sessions are kept in Redis.", collection="architecture", document=None,
            source_draft_id=None,
        )  # fmt: skip

    db.write(file)
    issued = tokens.issue_token(db, me, kind="agent", scopes=AGENT_SCOPES, project="CRW")
    seat = tokens.authenticate_token(db, issued.secret)  # an agent token gets a receipt
    read = task_queries.get_task(db, seat, task="CRW-1")
    assert isinstance(read, dict)
    draft = hand_in(db, seat, expected_revision=2, context_receipt_id=read["contextReceiptId"])
    task_updates.update_task(
        db, me, project="CRW", workspace_id=None, idempotency_key="brief-2",
        task_id="CRW-1", expected_revision=3, patch={"brief": "Fix the loop, and log it."},
    )  # fmt: skip
    page = client.get(f"/p/CRW/inbox/drafts/{draft}").text
    card = page.split('id="changed-title"', 1)[1].split("</section>", 1)[0]
    assert re.search(r"<li>Task brief: Fix the login redirect —\s*rewritten</li>", card), card
    assert not re.search(r"version [0-9a-f]{16}", card)  # a brief's version is a hash: not shown


def test_approve_approves_and_goes_back_to_the_inbox_with_a_notice(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    draft_id = hand_in(db, agent)
    answer = decide(client, draft_id, "approve")
    assert answer.headers["location"] == "/p/CRW/inbox"
    assert "Approved" in flash_after(client, answer)
    assert status_of(db, me, draft_id) == "approved"


def test_approve_and_save_files_the_result_where_the_person_chose(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    draft_id = hand_in(db, agent)
    answer = decide(client, draft_id, "save", collection="general", document="notes")
    assert answer.headers["location"] == "/p/CRW/inbox"
    found = draft_read_view(drafts.get_draft(db, me, draft_id))
    assert found["status"] == "saved_to_memory"
    assert found["memoryRecordId"] is not None
    decided = client.get(f"/p/CRW/inbox/drafts/{draft_id}").text
    assert found["memoryRecordId"] in decided
    assert "Approve and save" not in decided  # no forms once decided


def test_reject_and_request_revision_change_the_status(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    rejected = hand_in(db, agent)
    decide(client, rejected, "reject", comment="Not this way.")
    found = draft_read_view(drafts.get_draft(db, me, rejected))
    assert (found["status"], found["reviewComment"]) == ("rejected", "Not this way.")
    revised = hand_in(db, agent, key="h-2", expected_revision=3)
    decide(client, revised, "revise", comment="Cover expired tokens too.")
    found = draft_read_view(drafts.get_draft(db, me, revised))
    assert found["status"] == "revision_requested"
    assert found["followUpTask"] is not None
    page = client.get(f"/p/CRW/inbox/drafts/{revised}").text
    assert f'href="/p/CRW/tasks/{found["followUpTask"]["key"]}"' in page
    assert "Cover expired tokens too." in page


def test_a_revision_without_a_comment_comes_back_as_a_flash(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    draft_id = hand_in(db, agent)
    answer = decide(client, draft_id, "revise", comment="  ")
    assert answer.headers["location"] == f"/p/CRW/inbox/drafts/{draft_id}"
    html = flash_after(client, answer)
    assert 'class="flash error"' in html
    assert "comment" in html
    assert status_of(db, me, draft_id) == "pending"


def test_a_decision_on_a_decided_draft_flashes_an_error(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    draft_id = hand_in(db, agent)
    decide(client, draft_id, "approve")
    answer = decide(client, draft_id, "reject")
    assert answer.headers["location"] == f"/p/CRW/inbox/drafts/{draft_id}"
    html = flash_after(client, answer)
    assert 'class="flash error"' in html
    assert "approved" in html
    assert status_of(db, me, draft_id) == "approved"


def test_undo_puts_a_rule_acceptance_back_in_review(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    rules.add_rule(db, me, "CRW", match="all", collection="general")
    draft_id = hand_in(db, agent)
    assert status_of(db, me, draft_id) == "accepted_by_rule"
    page = client.get(f"/p/CRW/inbox/drafts/{draft_id}").text
    assert f'action="/p/CRW/inbox/drafts/{draft_id}/undo"' in page
    decide(client, draft_id, "undo")
    assert status_of(db, me, draft_id) == "returned_to_review"
    again = client.get(f"/p/CRW/inbox/drafts/{draft_id}").text
    assert "/undo" not in again
    assert f'action="/p/CRW/inbox/drafts/{draft_id}/approve"' in again


def test_a_reader_is_refused_with_a_flash_naming_the_problem(
    db: Database, url: str, owner: User, me: Actor, agent: Actor
) -> None:
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    draft_id = hand_in(db, agent)
    client = sign_in(url, reader.email)
    try:
        assert client.get(f"/p/CRW/inbox/drafts/{draft_id}").status_code == 200
        html = flash_after(client, decide(client, draft_id, "approve"))
    finally:
        client.close()
    assert 'class="flash error"' in html
    assert "write" in html
    assert status_of(db, me, draft_id) == "pending"


def test_a_post_without_the_csrf_token_is_refused(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    draft_id = hand_in(db, agent)
    answer = client.post(f"/p/CRW/inbox/drafts/{draft_id}/approve", data={})
    assert answer.status_code == 403
    wrong = client.post(f"/p/CRW/inbox/drafts/{draft_id}/approve", data={"csrf": "nope"})
    assert wrong.status_code == 403
    assert status_of(db, me, draft_id) == "pending"


def test_get_never_decides(db: Database, me: Actor, agent: Actor, client: httpx2.Client) -> None:
    draft_id = hand_in(db, agent)
    for decision in ("approve", "save", "reject", "revise", "undo"):
        answer = client.get(f"/p/CRW/inbox/drafts/{draft_id}/{decision}")
        assert answer.status_code in (404, 405)
    assert status_of(db, me, draft_id) == "pending"


def test_an_unknown_decision_changes_nothing(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    draft_id = hand_in(db, agent)
    html = flash_after(client, decide(client, draft_id, "explode"))
    assert 'class="flash error"' in html
    assert status_of(db, me, draft_id) == "pending"


# --- proposal cards ----------------------------------------------------------------------------


def test_a_proposed_task_is_accepted_from_its_card(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    made = proposals.propose_task(
        db, agent, project="CRW", title="Add <b>logout</b>", answer=proposed_view
    )
    card = made.body["proposal"]["id"]
    page = client.get(f"/p/CRW/inbox/proposals/{card}")
    assert page.status_code == 200
    assert "Add &lt;b&gt;logout&lt;/b&gt;" in page.text
    answer = post_form(client, f"/p/CRW/inbox/proposals/{card}/accept", {})
    assert answer.headers["location"] == "/p/CRW/inbox"
    decided = proposal_view(proposals.get_proposal(db, me, card))
    assert decided["status"] == "accepted"
    assert decided["result"]["taskKey"] == "CRW-2"
    again = client.get(f"/p/CRW/inbox/proposals/{card}").text
    assert 'href="/p/CRW/tasks/CRW-2"' in again
    assert "/accept" not in again


def test_a_task_change_shows_its_diff_and_is_dismissed(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    made = proposals.propose_task_update(
        db,
        agent,
        task="CRW-1",
        changes={"title": "Fix the logout redirect"},
        reason="Typo",
        answer=proposed_view,
    )
    card = made.body["proposal"]["id"]
    html = client.get(f"/p/CRW/inbox/proposals/{card}").text
    assert 'class="diff"' in html
    assert "<del>Fix the login redirect</del>" in html
    assert "<ins>Fix the logout redirect</ins>" in html
    post_form(client, f"/p/CRW/inbox/proposals/{card}/dismiss", {})
    assert proposal_view(proposals.get_proposal(db, me, card))["status"] == "dismissed"
    answer = post_form(
        client, f"/p/CRW/inbox/proposals/{card}/accept", {"next": f"/p/CRW/inbox/proposals/{card}"}
    )
    assert 'class="flash error"' in flash_after(client, answer)
    assert proposal_view(proposals.get_proposal(db, me, card))["status"] == "dismissed"


def test_a_task_deletion_card_warns(db: Database, agent: Actor, client: httpx2.Client) -> None:
    made = proposals.propose_task_delete(
        db, agent, task="CRW-1", reason="Duplicate", answer=proposed_view
    )
    html = client.get(f"/p/CRW/inbox/proposals/{made.body['proposal']['id']}").text
    assert '<span class="badge bad">Deletes</span>' in html
    assert "data-confirm" in html


# --- questions ---------------------------------------------------------------------------------


def test_a_question_is_answered_from_the_inbox(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    asked = questions.ask_question(
        db, agent, task="CRW-1", workspace_id=None, question="Which browser?",
        idempotency_key="q-1",
        answer=present_notes.question_answer,
    )  # fmt: skip
    question = asked.body["question"]["id"]
    html = client.get("/p/CRW/inbox").text
    assert f'action="/p/CRW/inbox/questions/{question}/answer"' in html
    answer = post_form(
        client,
        f"/p/CRW/inbox/questions/{question}/answer",
        {"answer": "Firefox and Chromium.", "next": "/p/CRW/inbox?kind=question"},
    )
    assert answer.headers["location"] == "/p/CRW/inbox?kind=question"
    assert "Answer sent" in flash_after(client, answer)
    assert questions.list_open_questions(db, me, "CRW").total == 0
    assert "Which browser?" not in client.get("/p/CRW/inbox").text


def test_a_blank_answer_comes_back_as_a_flash(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    asked = questions.ask_question(
        db, agent, task="CRW-1", workspace_id=None, question="Which browser?",
        idempotency_key="q-1",
        answer=present_notes.question_answer,
    )  # fmt: skip
    question = asked.body["question"]["id"]
    answer = post_form(
        client, f"/p/CRW/inbox/questions/{question}/answer", {"answer": "", "next": "/p/CRW/inbox"}
    )
    assert 'class="flash error"' in flash_after(client, answer)
    assert questions.list_open_questions(db, me, "CRW").total == 1


def test_csrf_token_is_on_the_inbox_page(client: httpx2.Client) -> None:
    assert csrf_of(client, "/p/CRW/inbox")


def test_a_team_card_lists_its_seats_and_an_admin_accepts_it(
    db: Database, owner: User, me: Actor, client: httpx2.Client
) -> None:
    team_agent = token_actor(db, owner, ["read", "team.manage"])
    made = proposals.propose_composition(
        db, team_agent, project="CRW", rationale="A small crew",
        seats=[{"role": "Reviewer", "typeHint": "human"}, {"role": "Coder", "name": "<i>Ada</i>"}], answer=proposed_view,
    )  # fmt: skip
    card = made.body["proposal"]["id"]
    assert "Team of 2 seats" in client.get("/p/CRW/inbox?kind=proposal").text
    html = client.get(f"/p/CRW/inbox/proposals/{card}").text
    assert "<td>Reviewer</td>" in html
    assert "&lt;i&gt;Ada&lt;/i&gt;" in html
    post_form(client, f"/p/CRW/inbox/proposals/{card}/accept", {})
    decided = proposal_view(proposals.get_proposal(db, me, card))
    assert decided["status"] == "accepted"
    assert len(decided["result"]["roleIds"]) == 2
    assert "Added 2 seats" in client.get(f"/p/CRW/inbox/proposals/{card}").text


def test_a_message_is_dismissed_from_the_inbox_and_stays_in_its_thread(
    db: Database, owner: User, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    posted = messages.post_message(
        db, agent, project="CRW", workspace_id=None, participant_id=owner.id,
        body="Build is green again", answer=posted_view,
    )  # fmt: skip
    message_id = posted.body["message"]["id"]
    page = client.get("/p/CRW/inbox").text
    assert "Build is green again" in page
    assert f'action="/p/CRW/inbox/messages/{message_id}/dismiss"' in page
    answer = post_form(
        client, f"/p/CRW/inbox/messages/{message_id}/dismiss", {"next": "/p/CRW/inbox"}
    )
    assert "Message dismissed." in flash_after(client, answer)
    assert "Build is green again" not in client.get("/p/CRW/inbox").text
    thread = messages.list_thread(db, me, "CRW", owner.id)
    assert [m.body for m in thread.messages] == ["Build is green again"]
    assert thread.messages[0].dismissed_at is not None
    # Again: nothing changes, one event in all.
    messages.dismiss_message(db, me, "CRW", message_id)
    rows = db.read(lambda uow: uow.events.list_after(project_id=None, limit=1000))
    assert [r["type"] for r in rows].count("message.dismissed") == 1


def test_only_its_reader_dismisses_a_message_and_never_through_a_token(
    db: Database, owner: User, me: Actor, agent: Actor
) -> None:
    other = make_user(db, "other@example.com")
    grant(db, owner, "CRW", other, Role.WRITE)
    posted = messages.post_message(
        db, me, project="CRW", workspace_id=None, participant_id=other.id, body="For Other",
        answer=posted_view,
    )  # fmt: skip
    message_id = posted.body["message"]["id"]
    with pytest.raises(NotFound):
        messages.dismiss_message(db, me, "CRW", message_id)  # addressed to someone else
    with pytest.raises(PermissionDenied):
        messages.dismiss_message(db, agent, "CRW", message_id)
    seen = messages.dismiss_message(db, person_actor(other), "CRW", message_id)
    assert seen.dismissed_at is not None


def test_an_agent_shows_as_its_token_and_a_person_via_a_token_names_it(
    db: Database, owner: User, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    issued = tokens.issue_token(
        db, me, kind="agent", scopes=AGENT_SCOPES, name="ci-bot", project="CRW"
    )
    bot = tokens.authenticate_token(db, issued.secret)
    messages.post_message(
        db, bot, project="CRW", workspace_id=None, participant_id=owner.id, body="From the bot",
        answer=posted_view,
    )  # fmt: skip
    messages.post_message(
        db, agent, project="CRW", workspace_id=None, participant_id=owner.id, body="From me",
        answer=posted_view,
    )  # fmt: skip
    page = client.get("/p/CRW/inbox").text
    assert re.search(
        r'ci-bot <span class="muted">\(for [^<]+\)</span> <span class="badge">AI</span>', page
    )
    assert agent.token is not None
    assert f'<span class="muted">via {agent.token.name}</span>' in page


def test_the_board_refuses_to_settle_a_task_whose_hand_in_waits_and_points_at_it(
    db: Database, me: Actor, agent: Actor, client: httpx2.Client
) -> None:
    draft_id = hand_in(db, agent)  # CRW-1 is in review now, at revision 2
    for target in ("approved", "done"):
        answer = post_form(
            client,
            "/p/CRW/tasks/CRW-1/status",
            {"status": target, "expected_revision": "2", "next": "/p/CRW/board"},
        )
        assert answer.status_code == 303
        assert answer.headers["location"] == f"/p/CRW/inbox/drafts/{draft_id}"
        page = client.get(answer.headers["location"]).text
        assert "CRW-1 was not moved to" in page
        assert "a hand-in of it waits for review" in page
    assert status_of(db, me, draft_id) == "pending"
    # Approving the hand-in, where the refusal pointed, settles the task: both agree.
    decide(client, draft_id, "approve")
    assert status_of(db, me, draft_id) == "approved"
    task = task_queries.get_task(db, me, task="CRW-1", include_context_pack=False)
    assert isinstance(task, dict)
    assert task["task"]["status"] == "approved"
