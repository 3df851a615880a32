"""The spec session pages over real HTTP, against a real model server on loopback: the list
(filters, search, pages of 20) and the form that starts a session; a session's page with its
conversation and a form for each kind of pending proposal, each doing what it says; refusals
as flashes that keep what was typed; read-role members and tokens decide nothing; the owner's
model settings (never a key); the live reply stream."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import anyio
import httpx2
import pytest

from crewboard.contract.sessions import present
from crewboard.contract.specs import present as files
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.domain.sessions import Mode
from crewboard.errors import PermissionDenied
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import conversation, sessions
from crewboard.services.sessions.waiting import wait_for_turn
from crewboard.services.specs.file_lookup import FileRef
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support.factories import grant, make_project, make_user, personal_secret, token_actor
from tests.support.model_server import Broken, ModelServer, Reply
from tests.support.sessions import (
    code_reading_workflow,
    configure_model,
    last_user_message,
    proposes,
    questions,
)
from tests.support.sessions_module import Serve
from tests.support.web import post_form, sign_in

SESSION = re.compile(r"/p/CRW/sessions/(ses_[A-Za-z0-9_]+)$")


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com", is_owner=True)
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    with closing(sign_in(url, owner.email)) as signed_in:
        yield signed_in


def follow(client: httpx2.Client, answer: httpx2.Response) -> httpx2.Response:
    assert answer.status_code == 303, answer.text
    return client.get(answer.headers["location"])


def flash_of(page: httpx2.Response) -> str:
    parts = page.text.split('class="flash ')
    assert len(parts) > 1, page.text
    return parts[1].split("</div>")[0]


def start(db: Database, user: User, prompt: str = "Spec the CSV export.", **more: Any) -> str:
    made = sessions.start_session(
        db, person_actor(user), project="CRW", workspace_id=None, mode=Mode.GENERATE,
        prompt=prompt, **more, answer=present.started_answer,
    )  # fmt: skip
    return str(made.body["sessionId"])


def shown(db: Database, user: User, ref: str) -> dict[str, Any]:
    return present.screen_view(
        conversation.session_page(db, person_actor(user), project="CRW", ref=ref)
    )


def settle(db: Database, user: User, ref: str) -> dict[str, Any]:
    """Wait (at most 15 s) for the session's latest turn to end; the page's data then."""
    turn = shown(db, user, ref)["turn"]
    assert anyio.run(wait_for_turn, db, turn["id"], 15.0, 0.1), "the turn did not end"
    return shown(db, user, ref)


def waiting_with(db: Database, owner: User, server: ModelServer, reply: str) -> str:
    """A session whose first reply was `reply`, settled."""
    server.script(Reply(reply))
    ref = start(db, owner)
    settle(db, owner, ref)
    return ref


def pending(db: Database, owner: User, ref: str, kind: str) -> dict[str, Any]:
    found = [p for p in shown(db, owner, ref)["proposals"] if p["status"] == "pending"]
    return next(p for p in found if p["kind"] == kind)


# --- the list and a new session ----------------------------------------------------------------


def test_the_list_filters_by_archive_and_status_searches_titles_and_pages_by_twenty(
    db: Database, serve: Serve, owner: User
) -> None:
    for n in range(21):
        start(db, owner, title=f"Invoice export {n}")
    login = start(db, owner, title="Login flow")
    sessions.set_archived(db, person_actor(owner), project="CRW", workspace_id=None, ref=login,
                          archived=True)  # fmt: skip
    with serve(session_runners=0) as url, closing(sign_in(url, owner.email)) as client:
        first = client.get("/p/CRW/sessions")
        assert first.status_code == 200
        assert "21 sessions." in first.text
        assert first.text.count('class="row-title"') == 20
        assert "Login flow" not in first.text
        assert 'href="/p/CRW/sessions?offset=20&amp;archive=active' in first.text
        second = client.get("/p/CRW/sessions?offset=20")
        assert second.text.count('class="row-title"') == 1
        archived = client.get("/p/CRW/sessions?archive=archived")
        assert "Login flow" in archived.text
        assert "1 session." in archived.text
        found = client.get("/p/CRW/sessions?archive=all&q=LOGIN")
        assert "Login flow" in found.text
        assert "1 session." in found.text
        assert "0 sessions." in client.get("/p/CRW/sessions?status=waiting").text
        assert "21 sessions." in client.get("/p/CRW/sessions?status=running").text
        bad = client.get("/p/CRW/sessions?status=sleeping")
        assert bad.status_code == 422
        assert client.get("/sessions").headers["location"] == "/p/CRW/sessions"


def test_the_new_session_form_starts_one_for_the_person_and_opens_it_at_once(
    db: Database, serve: Serve, owner: User
) -> None:
    with serve(session_runners=0) as url, closing(sign_in(url, owner.email)) as client:
        form = client.get("/p/CRW/sessions")
        assert 'data-mode="edit"' in form.text  # the workflows, marked with their mode
        answer = post_form(client, "/p/CRW/sessions", {
            "mode": "generate", "workflow": "", "language": "de", "model": "",
            "title": "Invoice export", "prompt": "Customers export invoices as CSV.",
            "key": "form-1",
        })  # fmt: skip
        assert answer.status_code == 303
        found = SESSION.search(answer.headers["location"])
        assert found is not None
        page = client.get(answer.headers["location"])
        assert "Customers export invoices as CSV." in page.text
        assert 'data-stream="/p/CRW/sessions/' in page.text  # the reply streams in
        assert "German" in page.text
    session = shown(db, owner, found.group(1))["session"]
    assert (session["title"], session["language"]) == ("Invoice export", "de")
    assert session["createdBy"]["displayName"] == "owner"


def test_a_refused_new_session_says_why_and_keeps_the_typed_message(
    owner: User, client: httpx2.Client
) -> None:
    answer = post_form(client, "/p/CRW/sessions", {
        "mode": "generate", "workflow": "crewboard-edit-v1", "language": "en", "model": "",
        "title": "", "prompt": "My long opening message",
    })  # fmt: skip
    assert answer.status_code == 422
    assert "Workflow" in flash_of(answer)
    assert "My long opening message</textarea>" in answer.text


# --- the conversation and its forms -------------------------------------------------------------


def test_the_page_renders_the_reply_as_markdown_and_answers_go_to_the_model(
    db: Database, owner: User, client: httpx2.Client, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    items = [
        {"id": "who", "text": "Who exports?", "kind": "single", "options": ["Admins", "Everyone"]},
        {"id": "what", "text": "Which formats?", "kind": "multiple", "options": ["CSV", "XLSX"]},
        {"id": "why", "text": "Why now?", "kind": "text"},
    ]
    reply = f"Some **questions** <b>raw</b>.\n\n<questions>{json.dumps(items)}</questions>"
    ref = waiting_with(db, owner, model_server, reply)
    page = client.get(f"/p/CRW/sessions/{ref}")
    assert "Some <strong>questions</strong> &lt;b&gt;raw&lt;/b&gt;." in page.text
    assert 'type="radio" name="answer-who" value="Admins"' in page.text
    assert 'type="checkbox" name="answer-what" value="XLSX"' in page.text
    assert 'name="answer-why"' in page.text
    proposal = pending(db, owner, ref, "questions")
    answer = post_form(client, f"/p/CRW/sessions/{ref}/proposals/{proposal['id']}/answer", {
        "question": ["who", "what", "why"], "multiple": "what", "answer-who": "Admins",
        "answer-what": ["CSV", "XLSX"], "answer-why": "Auditors ask",
    })  # fmt: skip
    assert "The model is writing its reply." in flash_of(follow(client, answer))
    settle(db, owner, ref)
    said = last_user_message(model_server.requests[-1].body)
    assert "My answers:" in said
    assert "Admins" in said
    assert "CSV; XLSX" in said
    assert "Auditors ask" in said


def test_an_answer_not_among_the_options_is_refused_and_the_answers_kept(
    db: Database, owner: User, client: httpx2.Client, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    ref = waiting_with(db, owner, model_server, questions("Is CSV enough?", "Admins too?"))
    proposal = pending(db, owner, ref, "questions")
    answer = post_form(client, f"/p/CRW/sessions/{ref}/proposals/{proposal['id']}/answer", {
        "question": ["q1", "q2"], "answer-q1": "Yes", "answer-q2": "Perhaps",
    })  # fmt: skip
    assert answer.status_code == 422
    assert "Perhaps" in flash_of(answer)
    assert 'name="answer-q1" value="Yes" checked' in answer.text
    assert pending(db, owner, ref, "questions")["id"] == proposal["id"]


def test_a_choice_is_buttons_and_the_one_pressed_is_sent(
    db: Database, owner: User, client: httpx2.Client, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    choice = {"question": "Which first?", "options": ["Requirements", "Design"]}
    ref = waiting_with(db, owner, model_server, f"Pick.\n<choice>{json.dumps(choice)}</choice>")
    page = client.get(f"/p/CRW/sessions/{ref}")
    assert '<button type="submit" name="option" value="Design">Design</button>' in page.text
    proposal = pending(db, owner, ref, "choice")
    answer = post_form(
        client, f"/p/CRW/sessions/{ref}/proposals/{proposal['id']}/choose", {"option": "Design"}
    )
    assert "You chose Design." in flash_of(follow(client, answer))
    settle(db, owner, ref)
    assert last_user_message(model_server.requests[-1].body) == "I choose: Design"


def test_review_findings_are_checkboxes_and_the_unticked_are_dismissed(
    db: Database, owner: User, client: httpx2.Client, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    items = {"items": [{"id": "r1", "text": "Name the CSV columns"},
                       {"id": "r2", "text": "Drop the PDF export"}]}  # fmt: skip
    ref = waiting_with(db, owner, model_server, f"Findings.\n<review>{json.dumps(items)}</review>")
    page = client.get(f"/p/CRW/sessions/{ref}")
    assert 'type="checkbox" id="r-' in page.text
    proposal = pending(db, owner, ref, "review")
    post_form(client, f"/p/CRW/sessions/{ref}/proposals/{proposal['id']}/review",
              {"accepted": "r1"})  # fmt: skip
    settle(db, owner, ref)
    said = last_user_message(model_server.requests[-1].body)
    assert "- apply: Name the CSV columns" in said
    assert "- dismiss: Drop the PDF export" in said


def test_a_new_proposed_file_shows_whole_and_accepting_saves_it_with_a_link(
    db: Database, owner: User, client: httpx2.Client, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    content = "# Export\n\n- [ ] 1. Write the CSV writer\n"
    ref = waiting_with(db, owner, model_server, proposes("specs/export/tasks.md", content))
    page = client.get(f"/p/CRW/sessions/{ref}")
    assert "New file" in page.text
    assert "- [ ] 1. Write the CSV writer" in page.text
    proposal = pending(db, owner, ref, "file")
    answer = post_form(client, f"/p/CRW/sessions/{ref}/proposals/{proposal['id']}/accept", {})
    assert "Saved as revision 1." in flash_of(follow(client, answer))
    settle(db, owner, ref)
    page = client.get(f"/p/CRW/sessions/{ref}")
    saved = files.get_spec_file(
        db, person_actor(owner), project="CRW", ref=FileRef(path="specs/export/tasks.md")
    )["file"]
    assert f'href="/p/CRW/specs/files/{saved["id"]}">specs/export/tasks.md</a>' in page.text


def test_a_changed_file_shows_a_diff_and_a_file_saved_meanwhile_is_not_overwritten(
    db: Database, owner: User, client: httpx2.Client, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    actor = person_actor(owner)
    made = spec_calls.upload_spec_file(db, actor, project="CRW", workspace_id=None,
                                  path="specs/export/design.md", content=b"# Design\nold line\n",
                                  idempotency_key=None).body["file"]  # fmt: skip
    reply = proposes("specs/export/design.md", "# Design\nnew line\n")
    ref = waiting_with(db, owner, model_server, reply)
    page = client.get(f"/p/CRW/sessions/{ref}")
    assert "<del>-old line</del>" in page.text
    assert "<ins>+new line</ins>" in page.text
    spec_calls.update_spec_file(db, actor, project="CRW", workspace_id=None,
                           ref=FileRef(file_id=made["id"]), content=b"# Design\nhers\n",
                           expected_version=made["contentVersion"], idempotency_key=None)  # fmt: skip
    proposal = pending(db, owner, ref, "file")
    answer = post_form(client, f"/p/CRW/sessions/{ref}/proposals/{proposal['id']}/accept", {})
    assert answer.status_code == 409
    assert "revision 2" in flash_of(answer)
    assert "Send it back" in flash_of(answer)
    empty = post_form(client, f"/p/CRW/sessions/{ref}/proposals/{proposal['id']}/send-back",
                      {"feedback": "  "})  # fmt: skip
    assert empty.status_code == 422
    sent = post_form(client, f"/p/CRW/sessions/{ref}/proposals/{proposal['id']}/send-back",
                     {"feedback": "Start from her text"})  # fmt: skip
    assert "Sent back" in flash_of(follow(client, sent))
    settle(db, owner, ref)
    said = last_user_message(model_server.requests[-1].body)
    assert "Please change specs/export/design.md" in said
    assert "Start from her text" in said


def test_a_failed_turn_shows_why_and_sends_again(
    db: Database, owner: User, client: httpx2.Client, model_server: ModelServer
) -> None:
    ref = start(db, owner)
    settle(db, owner, ref)  # no model configured: the turn fails
    page = client.get(f"/p/CRW/sessions/{ref}")
    assert "No model provider is configured" in page.text
    # Its inline code is rendered, never raw backticks.
    assert "<code>crewboard model add</code>" in page.text
    assert "`crewboard model add`" not in page.text
    assert f'action="/p/CRW/sessions/{ref}/resend"' in page.text
    configure_model(db, model_server)
    model_server.script(Reply("Now I can answer."))
    answer = post_form(client, f"/p/CRW/sessions/{ref}/resend", {})
    assert "Sent again." in flash_of(follow(client, answer))
    settle(db, owner, ref)
    assert "Now I can answer." in client.get(f"/p/CRW/sessions/{ref}").text


def test_a_session_that_reads_code_says_at_the_top_that_no_bridge_is_connected(
    db: Database, owner: User, client: httpx2.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = start(db, owner, workflow_id=code_reading_workflow(monkeypatch))
    page = client.get(f"/p/CRW/sessions/{ref}").text
    warnings = page.split('class="session-warnings" role="status"')[1].split("</div>")[0]
    assert "No <code>crewboard reverse</code> is connected for owner in project CRW" in warnings
    assert "<code>crewboard reverse --project CRW &lt;folder&gt;</code>" in warnings
    plain = client.get(f"/p/CRW/sessions/{start(db, owner)}").text
    assert "session-warnings" not in plain


def test_while_a_turn_runs_the_message_box_is_off_and_a_message_is_refused_kept(
    db: Database, serve: Serve, owner: User
) -> None:
    ref = start(db, owner)
    with serve(session_runners=0) as url, closing(sign_in(url, owner.email)) as client:
        page = client.get(f"/p/CRW/sessions/{ref}")
        assert re.search(r'<textarea id="message"[^>]* disabled', page.text)
        answer = post_form(client, f"/p/CRW/sessions/{ref}/message", {"message": "Hurry up"})
        assert answer.status_code == 409
        assert "still writing" in flash_of(answer)
        assert "Hurry up</textarea>" in answer.text


def test_a_message_rename_archive_and_delete_from_the_page(
    db: Database, owner: User, client: httpx2.Client, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    ref = waiting_with(db, owner, model_server, "Hello.")
    sent = post_form(client, f"/p/CRW/sessions/{ref}/message", {"message": "Add an XLSX export"})
    assert sent.status_code == 303
    settle(db, owner, ref)
    assert "You said: Add an XLSX export" in client.get(f"/p/CRW/sessions/{ref}").text
    post_form(client, f"/p/CRW/sessions/{ref}/rename", {"title": "Exports"})
    page = client.get(f"/p/CRW/sessions/{ref}")
    assert "<h1>Exports</h1>" in page.text
    assert f'action="/p/CRW/sessions/{ref}/delete"' not in page.text  # active: archive first
    post_form(client, f"/p/CRW/sessions/{ref}/archive", {"archived": "1"})
    assert f'action="/p/CRW/sessions/{ref}/delete"' in client.get(f"/p/CRW/sessions/{ref}").text
    gone = post_form(client, f"/p/CRW/sessions/{ref}/delete", {})
    assert "Deleted the session" in flash_of(follow(client, gone))
    assert client.get(f"/p/CRW/sessions/{ref}").status_code == 404


# --- who may decide -----------------------------------------------------------------------------


def test_a_read_role_member_sees_the_session_but_no_form_and_cannot_answer(
    db: Database, url: str, owner: User, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    ref = waiting_with(db, owner, model_server, questions("Is CSV enough?"))
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    proposal = pending(db, owner, ref, "questions")
    with closing(sign_in(url, reader.email)) as client:
        page = client.get(f"/p/CRW/sessions/{ref}")
        assert page.status_code == 200
        assert "Is CSV enough?" in page.text
        assert f'method="post" action="/p/CRW/sessions/{ref}' not in page.text
        assert "New session" not in client.get("/p/CRW/sessions").text
        answer = post_form(client, f"/p/CRW/sessions/{ref}/proposals/{proposal['id']}/answer",
                           {"question": "q1", "answer-q1": "Yes"})  # fmt: skip
        assert answer.status_code == 403
    assert pending(db, owner, ref, "questions")["status"] == "pending"


def test_a_token_cannot_decide_on_a_session(
    db: Database, url: str, owner: User, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    ref = waiting_with(db, owner, model_server, questions("Is CSV enough?"))
    proposal = pending(db, owner, ref, "questions")
    secret = personal_secret(db, person_actor(owner), ["read", "specs.write"])
    answer = httpx2.post(
        f"{url}/p/CRW/sessions/{ref}/proposals/{proposal['id']}/answer",
        data={"question": "q1", "answer-q1": "Yes"},
        headers={"Authorization": f"Bearer {secret}", "sec-fetch-site": "same-origin"},
    )
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/login")
    agent = token_actor(db, owner, ["read", "specs.write"])
    with pytest.raises(PermissionDenied):
        conversation.answer_questions(db, agent, project="CRW", ref=ref, turn_limit=80,
                                      proposal_id=proposal["id"], answers={"q1": "Yes"})  # fmt: skip
    assert pending(db, owner, ref, "questions")["status"] == "pending"


# --- models -------------------------------------------------------------------------------------


def test_only_the_owner_sees_the_model_settings_and_no_key_is_ever_shown(
    db: Database, url: str, owner: User, client: httpx2.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CREWBOARD_TEST_WEB_KEY", "sk-secret-value-123")
    assert 'href="/settings/models"' in client.get("/settings/tokens").text
    saved = post_form(client, "/settings/models/providers", {
        "id": "local", "kind": "openai", "base_url": "http://127.0.0.1:9/v1",
        "key_from": "env", "key": "CREWBOARD_TEST_WEB_KEY", "timeout": "30", "retries": "1",
        "stream": "1",
    })  # fmt: skip
    assert "Saved the provider local." in flash_of(follow(client, saved))
    post_form(client, "/settings/models/models", {
        "model_id": "small", "provider": "local", "model": "gpt-test", "label": "Small",
        "max_tokens": "2048", "default": "1",
    })  # fmt: skip
    page = client.get("/settings/models")
    assert "env:CREWBOARD_TEST_WEB_KEY" in page.text
    assert "sk-secret-value-123" not in page.text
    assert "gpt-test" in page.text
    bad = post_form(client, "/settings/models/providers", {
        "id": "rel", "kind": "openai", "key_from": "file", "key": "relative/key.txt",
    })  # fmt: skip
    assert bad.status_code == 422
    assert "Key file" in flash_of(bad)
    post_form(client, "/settings/models/remove", {"what": "model", "id": "small"})
    assert "gpt-test" not in client.get("/settings/models").text
    writer = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer, Role.ADMIN)
    with closing(sign_in(url, writer.email)) as other:
        assert other.get("/settings/models").status_code == 403
        assert 'href="/settings/models"' not in other.get("/settings/tokens").text
        refused = post_form(other, "/settings/models/models", {
            "model_id": "sneaky", "provider": "local", "model": "x",
        })  # fmt: skip
        assert refused.status_code == 303
    assert "sneaky" not in str(
        present.config_view(conversation.owner_model_config(db, person_actor(owner)))
    )


def test_a_project_admin_sets_the_default_model_and_a_writer_cannot(
    db: Database, url: str, owner: User, client: httpx2.Client, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    assert 'href="/p/CRW/settings/spec-sessions"' in client.get("/p/CRW/settings/project").text
    done = post_form(client, "/p/CRW/settings/spec-sessions", {"model": "test-model"})
    assert "test-model" in flash_of(follow(client, done))
    choices = present.choices_view(
        conversation.session_choices(db, person_actor(owner), project="CRW")
    )
    assert choices["projectModel"] == "test-model"
    assert "The project's default (test-model)" in client.get("/p/CRW/sessions").text
    writer = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer, Role.WRITE)
    with closing(sign_in(url, writer.email)) as other:
        assert 'id="default-model"' not in other.get("/p/CRW/settings/spec-sessions").text
        refused = post_form(other, "/p/CRW/settings/spec-sessions", {"model": ""})
        assert refused.status_code == 303
    assert conversation.session_choices(db, person_actor(owner), project="CRW").project_model


# --- the live reply -----------------------------------------------------------------------------


def read_events(client: httpx2.Client, path: str) -> list[tuple[str, dict[str, Any]]]:
    """Every event of the stream until it closes."""
    events, kind = [], "message"
    with client.stream("GET", path) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        for line in answer.iter_lines():
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                events.append((kind, json.loads(line[5:])))
    return events


def test_the_stream_sends_the_reply_as_it_grows_and_then_its_end(
    db: Database, owner: User, client: httpx2.Client, model_server: ModelServer
) -> None:
    configure_model(db, model_server, timeout=3.0)
    model_server.script(Broken("Half a reply, then silence", ending="stall"))
    ref = start(db, owner)
    events = read_events(client, f"/p/CRW/sessions/{ref}/stream")
    text = ""
    for kind, data in events:
        if kind == "partial":
            text = data["text"]
        elif kind == "more":
            text += data["text"]
    assert text == "Half a reply, then silence"
    assert events[-1][0] == "ended"
    assert events[-1][1]["status"] == "failed"
    again = read_events(client, f"/p/CRW/sessions/{ref}/stream")  # an ended turn: at once
    assert [kind for kind, _ in again] == ["ended"]
    assert client.get("/p/CRW/sessions/ses_nope/stream").status_code == 404
    assert httpx2.get(str(client.base_url) + f"/p/CRW/sessions/{ref}/stream").status_code == 401
