"""Spec files and attachments in the web app, over real HTTP: the list and trash bin, a file
shown (markdown rendered safely, other text numbered), upload typed or chosen, editing from the
version shown with a conflict that keeps the person's text, the diff of two revisions, and
downloads that can never act as a page."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import httpx2
import pytest

from crewboard.contract.specs import present as attachments
from crewboard.contract.specs import present as files
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.specs import MAX_ATTACHMENT_BYTES
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.specs.file_lookup import FileRef
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support.factories import make_project, make_user, token_actor
from tests.support.web import csrf_of, sign_in

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(64))
SCRIPT = "<script>window.__x = 1</script>"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    signed_in = sign_in(url, owner.email)
    try:
        yield signed_in
    finally:
        signed_in.close()


def add(db: Database, me: Actor, path: str, text: str) -> dict[str, object]:
    made = spec_calls.upload_spec_file(
        db, me, project="CRW", workspace_id=None, path=path, content=text.encode(),
        idempotency_key=None,
    )  # fmt: skip
    return dict(made.body["file"])


def flash_of(page: httpx2.Response) -> str:
    found = re.search(r'<div class="flash (\w+)"[^>]*>(.*?)</div>', page.text, re.S)
    assert found is not None, page.text[:2000]
    return f"{found.group(1)}: {html.unescape(found.group(2))}"


def test_a_typed_file_is_added_and_shown_with_markdown_rendered_safely(
    client: httpx2.Client,
) -> None:
    text = f"# Login\n\nSessions expire after **15 minutes**.\n\n{SCRIPT}\n"
    answer = client.post(
        "/p/CRW/specs",
        data={"csrf": csrf_of(client, "/p/CRW/specs"), "path": "docs//login.md", "content": text},
        files={"file": ("", b"", "application/octet-stream")},
    )
    assert answer.status_code == 303, answer.text
    page = client.get(answer.headers["location"])
    assert flash_of(page) == "notice: Added docs/login.md."
    assert "<strong>15 minutes</strong>" in page.text
    assert SCRIPT not in page.text  # agent or person text never runs as script
    listed = client.get("/p/CRW/specs").text
    assert "login.md" in listed
    assert ">docs<" in listed  # grouped under its folder


def test_a_chosen_file_is_uploaded_with_its_own_name_and_binary_files_download(
    client: httpx2.Client,
) -> None:
    answer = client.post(
        "/p/CRW/specs",
        data={"csrf": csrf_of(client, "/p/CRW/specs"), "path": "", "content": ""},
        files={"file": ("diagram.png", PNG, "image/png")},
    )
    assert answer.status_code == 303, answer.text
    page = client.get(answer.headers["location"])
    assert "A binary file" in page.text
    raw = re.search(r'href="(/p/CRW/specs/files/spf_[^"/]+/raw)"', page.text)
    assert raw is not None
    download = client.get(raw.group(1))
    assert download.content == PNG
    assert download.headers["content-type"] == "application/octet-stream"
    assert download.headers["content-disposition"].startswith('attachment; filename="diagram.png"')
    assert download.headers["x-content-type-options"] == "nosniff"
    assert download.headers["content-security-policy"].startswith("sandbox")


def test_a_bad_path_is_refused_in_words_and_the_typed_text_stays(client: httpx2.Client) -> None:
    answer = client.post(
        "/p/CRW/specs",
        data={"csrf": csrf_of(client, "/p/CRW/specs"), "path": "../etc/x.md", "content": "kept"},
        files={"file": ("", b"", "application/octet-stream")},
    )
    assert answer.status_code == 422
    assert "Not saved: Path:" in flash_of(answer)
    assert ">kept</textarea>" in answer.text


def test_long_text_is_numbered_and_paged_by_two_thousand_lines(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me, "notes/big.txt", "".join(f"row {n}\n" for n in range(1, 2501)))
    first = client.get(f"/p/CRW/specs/files/{made['id']}").text
    assert '<li id="L1"><code>row 1</code></li>' in first
    assert 'id="L2001"' not in first
    assert "Lines from 2001 of 2500" in first
    second = client.get(f"/p/CRW/specs/files/{made['id']}?offset=2001").text
    assert '<ol class="lines" start="2001">' in second
    assert '<li id="L2500"><code>row 2500</code></li>' in second


def test_an_edit_saves_a_revision_and_a_conflict_keeps_the_typed_text_beside_theirs(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me, "docs/plan.md", "# Plan\nStep one\n")
    form = client.get(f"/p/CRW/specs/files/{made['id']}/edit").text
    version = re.search(r'name="expected_version" value="([^"]+)"', form)
    assert version is not None
    assert version.group(1) == made["contentVersion"]
    saved = client.post(
        f"/p/CRW/specs/files/{made['id']}/edit",
        data={"csrf": csrf_of(client), "expected_version": version.group(1),
              "content": "# Plan\r\nStep one\r\nStep two\r\n"},
    )  # fmt: skip
    assert saved.status_code == 303
    assert "revision 2" in flash_of(client.get(saved.headers["location"]))
    stored = files.read_spec_file(db, me, project="CRW", ref=FileRef(path="docs/plan.md"))
    assert stored["text"] == "# Plan\nStep one\nStep two\n"  # line ends made plain

    # Someone saves meanwhile; the form still holds revision 2's version.
    form = client.get(f"/p/CRW/specs/files/{made['id']}/edit").text
    version = re.search(r'name="expected_version" value="([^"]+)"', form)
    assert version is not None
    spec_calls.update_spec_file(
        db, me, project="CRW", workspace_id=None, ref=FileRef(path="docs/plan.md"),
        content=b"# Plan\nStep one, theirs\n", expected_version=version.group(1),
        idempotency_key=None,
    )  # fmt: skip
    refused = client.post(
        f"/p/CRW/specs/files/{made['id']}/edit",
        data={"csrf": csrf_of(client), "expected_version": version.group(1),
              "content": "# Plan\nMy step\n"},
    )  # fmt: skip
    assert refused.status_code == 409
    assert "Changed meanwhile" in refused.text
    assert "# Plan\nMy step\n</textarea>" in refused.text  # the typed text stays
    assert "Step one, theirs" in refused.text  # theirs beside it
    again = re.search(r'name="expected_version" value="([^"]+)"', refused.text)
    assert again is not None
    assert again.group(1) != version.group(1)


def test_two_revisions_compare_line_by_line(client: httpx2.Client, db: Database, me: Actor) -> None:
    made = add(db, me, "docs/a.txt", "one\ntwo\nthree\n")
    spec_calls.update_spec_file(
        db, me, project="CRW", workspace_id=None, ref=FileRef(path="docs/a.txt"),
        content=b"one\n2\nthree\n", expected_version=str(made["contentVersion"]),
        idempotency_key=None,
    )  # fmt: skip
    page = client.get(f"/p/CRW/specs/files/{made['id']}?from=1&to=2").text
    assert "From revision 1 to revision 2:" in page
    # One row a line; the sign is the row's kind (drawn in its own column), not its text.
    rows = re.findall(r'<div class="dl (\w+)">.*?<(?:ins|del|span) class="t">(.*?)</', page)
    assert rows == [("hunk", "Lines 1–3"), ("same", "one"), ("removed", "two"), ("added", "2"),
                    ("same", "three")]  # fmt: skip


def test_trash_and_restore_from_the_pages(client: httpx2.Client, db: Database, me: Actor) -> None:
    made = add(db, me, "docs/old.md", "old\n")
    answer = client.post(f"/p/CRW/specs/files/{made['id']}/trash", data={"csrf": csrf_of(client)})
    assert flash_of(client.get(answer.headers["location"])).startswith(
        "notice: Moved docs/old.md to the trash bin"
    )
    assert "old.md" not in client.get("/p/CRW/specs").text
    assert "old.md" in client.get("/p/CRW/specs?trashed=1").text
    answer = client.post(f"/p/CRW/specs/files/{made['id']}/restore", data={"csrf": csrf_of(client)})
    assert "old.md" in client.get("/p/CRW/specs").text


def test_a_form_without_its_token_is_refused(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me, "docs/keep.md", "keep\n")
    answer = client.post(f"/p/CRW/specs/files/{made['id']}/trash", data={})
    assert answer.status_code == 403
    assert files.list_spec_files(db, me, project="CRW")["total"] == 1


def test_attachments_list_with_previews_and_images_alone_show_inline(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    answer = client.post(
        "/p/CRW/attachments",
        data={"csrf": csrf_of(client, "/p/CRW/attachments"), "name": ""},
        files={"file": ("shot.png", PNG, "image/png")},
    )
    assert answer.status_code == 303, answer.text
    spec_calls.upload_attachment(
        db, me, project="CRW", workspace_id=None, name="page.html",
        content=b"<html><script>alert(1)</script></html>\n", override=False, idempotency_key=None,
    )  # fmt: skip
    page = client.get("/p/CRW/attachments").text
    preview = re.search(r'<img class="preview" src="([^"]+)" alt="Preview of shot.png"', page)
    assert preview is not None
    image = client.get(preview.group(1))
    assert image.content == PNG
    assert image.headers["content-type"] == "image/png"
    assert image.headers["content-disposition"].startswith("inline")
    listed = attachments.list_attachments(db, me, project="CRW")["attachments"]
    html_file = next(a for a in listed if a["name"] == "page.html")
    served = client.get(f"/p/CRW/attachments/{html_file['id']}/raw")
    assert served.headers["content-type"].startswith("text/plain")  # never text/html
    assert served.headers["content-disposition"].startswith("attachment")
    assert served.headers["x-content-type-options"] == "nosniff"


def test_a_ten_mib_file_is_attached_from_the_form_and_a_larger_one_refused_in_words(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    largest = PNG + bytes(MAX_ATTACHMENT_BYTES - len(PNG))
    for name, data, status in (("big.png", largest, 303), ("bigger.png", largest + b"\x00", 422)):
        answer = client.post(
            "/p/CRW/attachments",
            data={"csrf": csrf_of(client, "/p/CRW/attachments"), "name": ""},
            files={"file": (name, data, "image/png")},
        )
        assert answer.status_code == status, answer.text
    assert "10 MiB" in flash_of(answer)
    listed = attachments.list_attachments(db, me, project="CRW")["attachments"]
    assert [(a["name"], a["size"]) for a in listed] == [("big.png", MAX_ATTACHMENT_BYTES)]


def test_an_attachment_of_another_type_is_refused_naming_the_accepted_ones(
    client: httpx2.Client,
) -> None:
    answer = client.post(
        "/p/CRW/attachments",
        data={"csrf": csrf_of(client, "/p/CRW/attachments"), "name": ""},
        files={"file": ("tool.exe", b"MZ\x90\x00\x03\x00\x00\x00", "application/octet-stream")},
    )
    assert answer.status_code == 422
    assert "PDF, DOCX, XLSX, PNG, JPEG, GIF, WebP, UTF-8 text" in flash_of(answer)


def test_a_thread_starts_on_a_quoted_passage_and_people_reply_resolve_and_reopen(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me, "docs/login.md", "# Login\n\nSessions expire after 15 minutes.\n")
    base = f"/p/CRW/specs/files/{made['id']}"
    refused = client.post(
        f"{base}/threads",
        data={"csrf": csrf_of(client), "quote": "after 20 minutes", "body": "Is this right?"},
    )
    assert refused.status_code == 422
    assert "Not saved:" in flash_of(refused)
    assert ">after 20 minutes</textarea>" in refused.text  # both kept for another try
    assert ">Is this right?</textarea>" in refused.text
    started = client.post(
        f"{base}/threads",
        data={"csrf": csrf_of(client), "quote": "after 15 minutes", "body": "Is this right?"},
    )
    assert started.status_code == 303
    page = client.get(started.headers["location"].split("#")[0]).text
    assert '<blockquote class="quote"><p>after 15 minutes</p>' in page
    assert "1 open" in page
    thread = re.search(r'action="/p/CRW/specs/threads/(sct_[^/]+)/resolve"', page)
    assert thread is not None
    thread_id = thread.group(1)
    client.post(
        f"/p/CRW/specs/threads/{thread_id}/reply",
        data={"csrf": csrf_of(client), "body": "Yes, 15.", "file_id": made["id"]},
    )
    client.post(f"/p/CRW/specs/threads/{thread_id}/resolve", data={"csrf": csrf_of(client)})
    page = client.get(base).text
    assert "Yes, 15." in page
    assert '<span class="badge ok">resolved</span>' in page
    assert "0 open" in page
    client.post(f"/p/CRW/specs/threads/{thread_id}/reopen", data={"csrf": csrf_of(client)})
    assert "1 open" in client.get(base).text


def test_a_tasks_md_lists_its_tasks_and_each_task_links_back_to_its_line(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me, "release/tasks.md", "# Plan\n\n- [ ] Write the migration\n- [x] Ship\n")
    page = client.get(f"/p/CRW/specs/files/{made['id']}").text
    listed = re.findall(r'<li><a href="/p/CRW/tasks/(CRW-\d+)">\1</a> ([^<]+) <span', page)
    assert [title.strip() for _key, title in listed] == ["Write the migration", "Ship"]
    assert 'data-file-task-line="3">Backlog</span> <span class="muted">line 3</span>' in page
    task_page = client.get(f"/p/CRW/tasks/{listed[0][0]}").text
    source = f'<a href="/p/CRW/specs/files/{made["id"]}">release/tasks.md</a>, line 3'
    assert source in task_page
    other = add(db, me, "notes.md", "- [ ] not a task here\n")
    assert "On the board" not in client.get(f"/p/CRW/specs/files/{other['id']}").text


def test_work_done_through_a_token_is_credited_to_its_person_or_its_agent(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    laptop = token_actor(db, owner, ["read", "specs.write"], name="laptop")
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=["read", "specs.write"], project="CRW",
        name="night agent",
    )  # fmt: skip
    agent = tokens.authenticate_token(db, issued.secret)
    add(db, laptop, "docs/by-person.md", "# Mine\n")
    add(db, agent, "docs/by-agent.md", "# Its\n")
    listed = html.unescape(client.get("/p/CRW/specs").text)
    assert "by owner via laptop" in listed
    assert "by night agent (for owner)" in listed
    assert "by laptop" not in listed


def selection_form(
    client: httpx2.Client, revision: int, start: str, end: str, words: str
) -> dict[str, str]:
    return {
        "csrf": csrf_of(client), "body": "Both rotate?", "quote": "", "sel_revision": str(revision),
        "sel_start": start, "sel_end": end, "sel_text": words,
    }  # fmt: skip


def test_words_selected_on_the_page_anchor_on_their_source_even_where_they_repeat(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    text = "# Keys\n\nTokens **rotate daily**.\n\n- Keys [rotate daily](https://x.io).\n"
    made = add(db, me, "docs/keys.md", text)
    base = f"/p/CRW/specs/files/{made['id']}"
    page = client.get(base).text
    assert '<span class="src" data-b="2" id="b2">Keys <a href="https://x.io"' in page
    # the list item's words (block 2, after "Keys "): found twice in the shown text
    started = client.post(
        f"{base}/threads", data=selection_form(client, 1, "2:5", "2:17", "rotate daily")
    )
    assert started.status_code == 303, flash_of(started)
    assert re.search(r"#thread-sct_\w+$", started.headers["location"])
    listed = files.list_spec_file_comments(
        db, me, project="CRW", ref=FileRef(file_id=str(made["id"]))
    )
    anchor = listed["threads"][0]["anchor"]
    assert (anchor["quote"], anchor["start"]) == ("rotate daily", text.rindex("rotate daily"))
    shown = client.get(base).text
    assert (
        '<a href="https://x.io" rel="noopener noreferrer nofollow"><mark class="hl open"' in shown
    )
    # the page showed other words there than the file holds: refused in plain words
    refused = client.post(f"{base}/threads", data=selection_form(client, 1, "1:0", "1:6", "Keys r"))
    assert refused.status_code == 422
    assert flash_of(refused) == (
        "error: Not saved: That passage is no longer in the file — select it again. Your text is "
        "still in the form."
    )
    assert ">Both rotate?</textarea>" in refused.text


def test_a_pasted_passage_the_file_lacks_is_refused_without_naming_a_tool(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me, "docs/keys.md", "Keys rotate daily.\n\nKeys rotate daily.\n")
    base = f"/p/CRW/specs/files/{made['id']}/threads"
    missing = client.post(base, data={"csrf": csrf_of(client), "quote": "hourly", "body": "?"})
    twice = client.post(base, data={"csrf": csrf_of(client), "quote": "Keys", "body": "?"})
    assert "That passage is no longer in the file — select it again." in flash_of(missing)
    assert "in the file 2 times — select a longer passage" in flash_of(twice)
    for answer in (missing, twice):
        assert "read_spec_file" not in answer.text
        assert "anchorPrefix" not in answer.text


def test_a_thread_whose_passage_is_gone_is_listed_last_and_an_old_revision_marks_nothing(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    text = "# Keys\n\nKeys rotate daily.\n\nTokens expire.\n"
    made = add(db, me, "docs/keys.md", text)
    base = f"/p/CRW/specs/files/{made['id']}"
    for quote in ("Tokens expire.", "rotate daily"):
        client.post(f"{base}/threads", data={"csrf": csrf_of(client), "quote": quote, "body": "?"})
    spec_calls.update_spec_file(
        db, me, project="CRW", workspace_id=None, ref=FileRef(file_id=str(made["id"])),
        content=text.replace("Tokens expire.\n", "").encode(), expected_version=made["contentVersion"],
        idempotency_key=None,
    )  # fmt: skip
    page = client.get(base).text
    threads = re.findall(r'<article class="thread ([^"]*)" id="thread-sct_\w+" ([^>]*)>', page)
    assert [(kind, "data-block" in rest) for kind, rest in threads] == [
        ("open", True),
        ("open orphaned", False),
    ]
    assert page.count('<mark class="hl open"') == 1
    assert '<span class="badge bad">passage gone</span>' in page
    older = client.get(f"{base}?revision=1").text
    assert "<mark" not in older
    assert "data-block" not in older
