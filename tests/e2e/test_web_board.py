"""The board and the task page over real HTTP: columns, filters, forms, safety."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from crewboard.contract.board import present_notes
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.services.board import notes as task_notes
from crewboard.services.board import task_updates, tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import task_reads as task_queries
from tests.support.factories import count_rows, grant, make_project, make_user
from tests.support.web import csrf_of, post_form, sign_in

SCRIPT = "<script>alert('x')</script>"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com", is_owner=True)
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    signed_in = sign_in(url, owner.email)
    try:
        yield signed_in
    finally:
        signed_in.close()


def new_task(db: Database, user: User, title: str, project: str = "CRW", **fields: Any) -> str:
    """A task made through the service; its key."""
    result = tasks.create_task(
        db,
        person_actor(user),
        project=project,
        workspace_id=None,
        idempotency_key=None,
        title=title,
        **fields,
    )
    return str(result.body["task"]["key"])


def edit_task(db: Database, user: User, key: str, revision: int, patch: dict[str, Any]) -> None:
    """Another writer's edit, through the service."""
    task_updates.update_task(
        db,
        person_actor(user),
        project="CRW",
        workspace_id=None,
        idempotency_key=None,
        task_id=key,
        expected_revision=revision,
        patch=patch,
    )


def read_task(db: Database, user: User, key: str) -> dict[str, Any]:
    found = task_queries.get_task(db, person_actor(user), task=key, include_context_pack=False)
    assert isinstance(found, dict)
    return dict(found["task"])


def flash_after(client: httpx2.Client, answer: httpx2.Response) -> str:
    """Follow a form's redirect and return the flash text it left (unescaped)."""
    assert answer.status_code == 303, answer.text
    page = client.get(answer.headers["location"])
    found = re.search(r'<div class="flash (\w+)"[^>]*>(.*?)</div>', page.text, re.S)
    assert found is not None, page.text
    return f"{found.group(1)}: {html.unescape(found.group(2))}"


def tiles(page: httpx2.Response) -> list[str]:
    return re.findall(r'<span class="key">([A-Z0-9]+-\d+)</span>', page.text)


# --- the board -------------------------------------------------------------------------------


def test_board_shows_every_column_with_its_count(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    new_task(db, owner, "Write the changelog")
    new_task(db, owner, "Fix login", status="ready_for_ai")
    new_task(db, owner, "Ship it", status="done")
    page = client.get("/p/CRW/board")
    assert page.status_code == 200
    assert 'data-live="board"' in page.text
    assert "data-live-region" in page.text
    for label in ("Backlog", "Ready for AI", "In progress", "Blocked", "Review", "Approved"):
        assert label in page.text
    counts = re.findall(
        r'<h2 id="column-(\w+)"><span>[^<]+</span> <span class="badge"[^>]*>(\d+)<', page.text
    )
    assert dict(counts) == {
        "backlog": "1",
        "ready_for_ai": "1",
        "in_progress": "0",
        "blocked": "0",
        "review": "0",
        "approved": "0",
        "done": "1",
    }
    assert set(tiles(page)) == {"CRW-1", "CRW-2", "CRW-3"}
    assert 'href="/p/CRW/tasks/CRW-1" data-item' in page.text
    assert "data-search" in page.text


def test_bare_board_path_opens_the_current_project(client: httpx2.Client) -> None:
    answer = client.get("/board?tag=x")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/p/CRW/board?tag=x"


def test_filters_narrow_the_board(client: httpx2.Client, db: Database, owner: User) -> None:
    new_task(db, owner, "Invoice export is slow", tags=["billing"])
    new_task(db, owner, "Refresh the logo", tags=["design"])
    new_task(db, owner, "Billing page copy", assignee_id=owner.id, tags=["billing"])
    assert set(tiles(client.get("/p/CRW/board?tag=billing"))) == {"CRW-1", "CRW-3"}
    assert tiles(client.get("/p/CRW/board?q=invoice")) == ["CRW-1"]
    assert tiles(client.get(f"/p/CRW/board?assignee={owner.id}")) == ["CRW-3"]
    assert set(tiles(client.get("/p/CRW/board?assignee=none"))) == {"CRW-1", "CRW-2"}
    both = client.get("/p/CRW/board?assignee=none&tag=billing&q=invoice")
    assert tiles(both) == ["CRW-1"]
    assert 'value="invoice"' in both.text  # the filter stays filled in


def test_a_column_shows_twenty_on_the_board_and_pages_by_fifty_on_its_own(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    for n in range(53):
        new_task(db, owner, f"Task {n}")
    board = client.get("/p/CRW/board")
    assert len(tiles(board)) == 20
    assert 'href="/p/CRW/board?column=backlog&amp;offset=20"' in board.text
    assert "33 more" in board.text
    more = client.get("/p/CRW/board?column=backlog&offset=20")
    assert tiles(more) == [f"CRW-{n}" for n in range(21, 54)]
    rest = client.get("/p/CRW/board?column=backlog&offset=50")
    assert rest.status_code == 200
    assert tiles(rest) == ["CRW-51", "CRW-52", "CRW-53"]
    assert "51–53 of 53" in rest.text
    assert client.get("/p/CRW/board?column=nope").status_code == 422
    for offset in ("-1", str(2**31), "99999999999999999999", "²"):
        assert client.get(f"/p/CRW/board?column=backlog&offset={offset}").status_code == 422
    assert client.get(f"/p/CRW/memory?offset={2**31}").status_code == 422
    too_long = client.get("/p/CRW/board", params={"q": "word " * 40 + "x"})
    assert too_long.status_code == 422
    assert "at most 200 characters" in too_long.text


def test_quick_create_makes_a_task(client: httpx2.Client, db: Database, owner: User) -> None:
    answer = post_form(
        client,
        "/p/CRW/board/tasks",
        {"title": "Draft the launch post", "status": "ready_for_ai", "next": "/p/CRW/board"},
    )
    assert flash_after(client, answer) == "notice: Created CRW-1: Draft the launch post"
    task = read_task(db, owner, "CRW-1")
    assert task["status"] == "ready_for_ai"
    assert tiles(client.get("/p/CRW/board")) == ["CRW-1"]


def test_a_form_over_four_mebibytes_is_refused_unread_and_makes_nothing(
    client: httpx2.Client, db: Database
) -> None:
    title = "x" * (4 * 1024 * 1024)
    answer = post_form(client, "/p/CRW/board/tasks", {"title": title, "next": "/p/CRW/board"})
    assert answer.status_code == 413
    assert count_rows(db, "tasks") == 0


def test_quick_create_sent_twice_with_its_key_makes_one_task(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    form = {"title": "Once", "key": "form-key-1", "next": "/p/CRW/board"}
    post_form(client, "/p/CRW/board/tasks", form)
    post_form(client, "/p/CRW/board/tasks", form)
    total = task_queries.list_tasks(db, person_actor(owner), project="CRW").total
    assert total == 1


def test_quick_create_without_a_title_flashes_the_field(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    answer = post_form(client, "/p/CRW/board/tasks", {"title": " ", "next": "/p/CRW/board"})
    assert answer.headers["location"] == "/p/CRW/board"
    assert flash_after(client, answer) == "error: Title: must not be empty."


def test_move_changes_the_status(client: httpx2.Client, db: Database, owner: User) -> None:
    key = new_task(db, owner, "Move me")
    answer = post_form(
        client,
        f"/p/CRW/tasks/{key}/status",
        {"status": "review", "expected_revision": "1", "next": "/p/CRW/board?tag="},
    )
    assert answer.headers["location"] == "/p/CRW/board?tag="
    assert flash_after(client, answer) == "notice: CRW-1 moved to Review."
    assert read_task(db, owner, key)["status"] == "review"


def test_move_from_a_stale_revision_flashes_the_conflict(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Contended")
    edit_task(db, owner, key, 1, {"title": "Contended, renamed"})
    answer = post_form(
        client,
        f"/p/CRW/tasks/{key}/status",
        {"status": "done", "expected_revision": "1", "next": "/p/CRW/board"},
    )
    flash = flash_after(client, answer)
    assert flash.startswith(f"error: {key} was not moved: Not saved: owner changed it at ")
    assert "revision 2" in flash
    assert "get_task" not in flash
    assert not re.search(r"\d{4}-\d\d-\d\dT", flash)  # no raw ISO time
    assert read_task(db, owner, key)["status"] == "backlog"


def test_a_refused_move_comes_back_as_a_flash(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Nobody works on this")
    answer = post_form(
        client,
        f"/p/CRW/tasks/{key}/status",
        {"status": "in_progress", "expected_revision": "1", "next": "/p/CRW/board"},
    )
    flash = flash_after(client, answer)
    assert flash.startswith(f"error: {key} was not moved: Assignee:")
    assert "assigneeId" not in flash


def test_a_reader_sees_the_board_but_cannot_move(url: str, db: Database, owner: User) -> None:
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    key = new_task(db, owner, "Look, don't touch")
    client = sign_in(url, reader.email)
    try:
        assert tiles(client.get("/p/CRW/board")) == [key]
        answer = post_form(
            client,
            f"/p/CRW/tasks/{key}/status",
            {"status": "done", "expected_revision": "1", "next": "/p/CRW/board"},
        )
        assert flash_after(client, answer).startswith("error:")
    finally:
        client.close()
    assert read_task(db, owner, key)["status"] == "backlog"


# --- the task page ---------------------------------------------------------------------------


def test_task_page_shows_the_task_and_renders_markdown_safely(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    parent = new_task(db, owner, "Parent work")
    key = new_task(
        db,
        owner,
        f"Title {SCRIPT}",
        description=f"Some **bold** words.\n\n{SCRIPT}\n\n- [ ] write tests\n- [x] write code",
        brief="Read [the spec](javascript:alert(1)) first.",
        tags=["billing"],
        due_date="2026-12-01",
        parent_task_id=read_task(db, owner, parent)["id"],
    )
    page = client.get(f"/p/CRW/tasks/{key}")
    assert page.status_code == 200
    assert 'data-live="task"' in page.text
    assert "<script>alert" not in page.text
    assert "Title &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page.text
    assert "<strong>bold</strong>" in page.text
    assert 'href="javascript:' not in page.text
    assert "2026-12-01" in page.text
    assert "billing" in page.text
    assert "write tests" in page.text
    assert "1 checklist item(s) open" in page.text
    assert f'href="/p/CRW/tasks/{parent}"' in page.text
    assert "Created in Backlog" in page.text  # the lifecycle timeline
    # Only the app's own script files: no inline script anywhere on the page.
    assert not re.search(r'<script(?! src="/static/[\w./-]+\.js" defer></script>)', page.text)
    assert ' style="' not in page.text
    assert not re.search(r" on[a-z]+=", page.text)
    by_id = client.get(f"/p/CRW/tasks/{read_task(db, owner, key)['id']}")
    assert by_id.status_code == 200


def test_every_form_on_the_pages_carries_the_csrf_token(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Forms")
    token = csrf_of(client)
    for path in ("/p/CRW/board", f"/p/CRW/tasks/{key}"):
        text = client.get(path).text
        forms = re.findall(r'<form[^>]*method="post"[^>]*>(.*?)</form>', text, re.S)
        assert forms
        for form in forms:
            assert f'name="csrf" value="{token}"' in form


def test_comments_post_and_show_escaped(client: httpx2.Client, db: Database, owner: User) -> None:
    key = new_task(db, owner, "Discuss")
    answer = post_form(
        client,
        f"/p/CRW/tasks/{key}/comments",
        {"content": f"Looks *good* {SCRIPT}", "key": "c-1", "next": f"/p/CRW/tasks/{key}"},
    )
    assert answer.headers["location"] == f"/p/CRW/tasks/{key}#comments"
    assert flash_after(client, answer) == "notice: Comment posted."
    page = client.get(f"/p/CRW/tasks/{key}")
    assert "<em>good</em>" in page.text
    assert "<script>alert" not in page.text
    listed = present_notes.comment_page_view(
        task_notes.list_comments(db, person_actor(owner), task=key)
    )
    assert listed["total"] == 1


def test_an_empty_comment_is_refused_with_a_flash(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Quiet")
    answer = post_form(
        client, f"/p/CRW/tasks/{key}/comments", {"content": "", "next": f"/p/CRW/tasks/{key}"}
    )
    # the page comes back with the comment form open and the reason, nothing posted
    assert answer.status_code == 422
    assert "Not posted: Content: must not be empty." in html.unescape(answer.text)
    assert 'id="comment-form" open' in answer.text


def shown_form(page: httpx2.Response, key: str) -> dict[str, str]:
    """The edit form's hidden fields (the values it showed, the revision) as a browser sends
    them back, with `next`."""
    form = re.search(
        rf'<form method="post" action="/p/CRW/tasks/{key}">(.*?)</form>', page.text, re.S
    )
    assert form is not None
    hidden = re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', form.group(1))
    return {name: html.unescape(value) for name, value in hidden if name != "csrf"}


def updated_events(db: Database) -> list[dict[str, Any]]:
    rows = db.read(lambda uow: uow.events.list_after(project_id=None, limit=1000))
    return [r["payload"] for r in rows if r["type"] == "task.updated"]


def test_an_edit_sends_only_the_fields_changed_with_plain_newlines(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Before", description="One\ntwo", priority="low", tags=["a"])
    form = shown_form(client.get(f"/p/CRW/tasks/{key}"), key)
    assert form["was_description"] == "One\ntwo"
    # What a browser sends: every field, a textarea's line ends as CRLF.
    sent = {
        **form,
        "title": "After",
        "brief": "",
        "description": "One\r\ntwo\r\nthree",
        "priority": "low",
        "tags": "a",
        "due_date": "",
    }
    answer = post_form(client, f"/p/CRW/tasks/{key}", sent)
    assert flash_after(client, answer) == f"notice: Saved {key} (title, description)."
    task = read_task(db, owner, key)
    assert (task["title"], task["description"], task["revision"]) == ("After", "One\ntwo\nthree", 2)
    assert updated_events(db)[-1]["changed"] == ["description", "title"]
    # Sending the form again unchanged saves nothing.
    again = shown_form(client.get(f"/p/CRW/tasks/{key}"), key)
    unchanged = {
        **again,
        **{name[4:]: value for name, value in again.items() if name.startswith("was_")},
    }
    assert flash_after(client, post_form(client, f"/p/CRW/tasks/{key}", unchanged)) == (
        "notice: Nothing changed; nothing saved."
    )
    assert read_task(db, owner, key)["revision"] == 2


def test_an_update_names_only_the_fields_it_changed_whatever_the_client_sends(
    db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Same", priority="high")
    edit_task(db, owner, key, 1, {"title": "Same", "priority": "low", "tags": []})
    assert updated_events(db)[-1]["changed"] == ["priority"]


def test_edits_save_and_a_stale_edit_keeps_the_text_beside_the_other_change(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Before", description="Shared text")
    form = {
        "title": "After",
        "description": "New *text*",
        "brief": "Do it",
        "priority": "high",
        "tags": "a, b",
        "due_date": "2026-05-01",
        "expected_revision": "1",
        "next": f"/p/CRW/tasks/{key}",
    }
    answer = post_form(client, f"/p/CRW/tasks/{key}", form)
    assert flash_after(client, answer).startswith(f"notice: Saved {key} (")
    task = read_task(db, owner, key)
    assert (task["title"], task["priority"], task["tags"], task["dueDate"]) == (
        "After",
        "high",
        ["a", "b"],
        "2026-05-01",
    )
    assert task["revision"] == 2

    # Two people open the page at revision 2; the other one saves a new title and brief first.
    shown = shown_form(client.get(f"/p/CRW/tasks/{key}"), key)
    edit_task(db, owner, key, 2, {"title": "Their title", "brief": "Their brief"})
    mine = {**shown, **{n[4:]: v for n, v in shown.items() if n.startswith("was_")}}
    mine |= {"title": "My title", "description": "My long\r\ndescription"}
    stale = post_form(client, f"/p/CRW/tasks/{key}", mine)
    assert stale.status_code == 409
    page = html.unescape(stale.text)
    assert "saved this task meanwhile; it is at revision 3 now" in page
    assert "Changed meanwhile" in page
    assert "Their title" in page  # the other change, beside the form
    resent = shown_form(stale, key)
    assert resent["expected_revision"] == "3"
    # The form keeps this person's text where they changed it, and takes the other change
    # where they did not (the brief), so saving again loses neither.
    form_text = stale.text.split("<form", 2)[-1]
    assert 'name="title" value="My title"' in form_text
    assert "My long\ndescription</textarea>" in form_text
    assert "Their brief</textarea>" in form_text
    assert read_task(db, owner, key)["title"] == "Their title"
    merged = {
        **resent,
        "title": "My title",
        "brief": "Their brief",
        "description": "My long\ndescription",
    }
    merged |= {
        "priority": resent["was_priority"],
        "tags": resent["was_tags"],
        "due_date": resent["was_due_date"],
    }
    assert flash_after(client, post_form(client, f"/p/CRW/tasks/{key}", merged)).startswith(
        f"notice: Saved {key}"
    )
    final = read_task(db, owner, key)
    assert (final["title"], final["brief"], final["description"]) == (
        "My title",
        "Their brief",
        "My long\ndescription",
    )


def test_outputs_show_as_plain_text(client: httpx2.Client, db: Database, owner: User) -> None:
    key = new_task(db, owner, "Produce")
    task_notes.save_output(
        db,
        person_actor(owner),
        task=key,
        workspace_id=None,
        name="report.md",
        content=f"# Heading\n{SCRIPT}",
        idempotency_key="o-1",
        answer=present_notes.output_answer,
    )
    page = client.get(f"/p/CRW/tasks/{key}")
    assert f'href="/p/CRW/tasks/{key}/outputs/report.md"' in page.text
    shown = client.get(f"/p/CRW/tasks/{key}/outputs/report.md")
    assert shown.status_code == 200
    assert "# Heading" in shown.text
    assert "&lt;script&gt;" in shown.text
    assert "<script>alert" not in shown.text
    assert client.get(f"/p/CRW/tasks/{key}/outputs/missing.md").status_code == 404


def test_another_projects_task_is_not_found(
    url: str, client: httpx2.Client, db: Database, owner: User
) -> None:
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "OTH")
    other = new_task(db, stranger, "Secret plans", project="OTH")
    mine = new_task(db, owner, "Mine")
    assert client.get(f"/p/CRW/tasks/{other}").status_code == 404
    assert client.get(f"/p/OTH/tasks/{other}").status_code == 404
    assert client.get("/p/OTH/board").status_code == 404
    assert "Secret plans" not in client.get(f"/p/CRW/tasks/{other}").text
    # A task of a project the person can open is still not shown under another project.
    make_project(db, owner, "TWO")
    assert client.get(f"/p/TWO/tasks/{mine}").status_code == 404
    answer = post_form(
        client,
        f"/p/CRW/tasks/{other}/status",
        {"status": "done", "expected_revision": "1", "next": "/p/CRW/board"},
    )
    assert flash_after(client, answer).startswith("error:")
    assert read_task(db, stranger, other)["status"] == "backlog"


def test_a_post_without_the_csrf_token_is_refused(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Guarded")
    for path, data in (
        ("/p/CRW/board/tasks", {"title": "Sneaky"}),
        (f"/p/CRW/tasks/{key}/status", {"status": "done", "expected_revision": "1"}),
        (f"/p/CRW/tasks/{key}/comments", {"content": "Sneaky"}),
        (f"/p/CRW/tasks/{key}", {"title": "Sneaky", "expected_revision": "1"}),
    ):
        assert client.post(path, data=data).status_code == 403
        assert client.post(path, data={**data, "csrf": "wrong"}).status_code == 403
    task = read_task(db, owner, key)
    assert (task["title"], task["status"], task["revision"]) == ("Guarded", "backlog", 1)
    assert task_notes.list_comments(db, person_actor(owner), task=key).total == 0


def test_get_changes_nothing(client: httpx2.Client, db: Database, owner: User) -> None:
    key = new_task(db, owner, "Still")
    for path in (
        "/p/CRW/board?title=x&status=done",
        f"/p/CRW/tasks/{key}?status=done&title=x",
        "/p/CRW/board?column=backlog&offset=0",
    ):
        assert client.get(path).status_code == 200
    for path in ("/p/CRW/board/tasks?title=x", f"/p/CRW/tasks/{key}/status?status=done"):
        assert client.get(path).status_code == 405
    task = read_task(db, owner, key)
    assert (task["title"], task["status"], task["revision"]) == ("Still", "backlog", 1)
    total = task_queries.list_tasks(db, person_actor(owner), project="CRW").total
    assert total == 1


def test_a_stranger_is_sent_to_sign_in(url: str, owner: User) -> None:
    with httpx2.Client(base_url=url, follow_redirects=False) as anonymous:
        answer = anonymous.get("/p/CRW/board")
        assert answer.status_code == 303
        assert answer.headers["location"].startswith("/login?next=")
