"""A `tasks.md` on the web app over real HTTP, on both databases: checkbox lines show as boxes
with their task's key and status; ticking one saves the file's next revision and moves its
task on the board (with the script's JSON and as a plain form); a stale page is refused with
who saved meanwhile and nothing written; a reader sees disabled boxes and cannot tick; an edit
that removes a task's line asks what becomes of its task and saves nothing until answered."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from crewboard.domain.board.tasks import Task, TaskStatus
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.services.identity.users import person_actor
from crewboard.services.specs import files
from crewboard.services.specs.file_lookup import FileRef
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support.factories import grant, make_project, make_user
from tests.support.web import csrf_of, sign_in

PLAN = (
    "# Plan\n\n"
    "- [ ] Write the migration\n"
    "  two columns, both nullable\n"
    "  - backfill in batches\n"
    "- [x] Parse the file\n"
    "- [-] Wire the board\n"
)
JSON = {"accept": "application/json"}


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


def add(db: Database, me: Actor, text: str = PLAN, path: str = "plan/tasks.md") -> dict[str, Any]:
    made = spec_calls.upload_spec_file(
        db, me, project="CRW", workspace_id=None, path=path, content=text.encode(),
        idempotency_key=None,
    )  # fmt: skip
    return dict(made.body["file"])


def tasks_of(db: Database, file_id: str) -> dict[str, Task]:
    """The tasks the file's lines hold now, by title."""
    found = db.read(lambda uow: uow.tasks.of_source_files([file_id]))
    return {task.title: task for task in found}


def task(db: Database, task_id: str) -> Task:
    found = db.read(lambda uow: uow.tasks.get(task_id))
    assert found is not None
    return found


def text_of(db: Database, me: Actor, file_id: str) -> tuple[str, int]:
    read = files.read_file_bytes(db, me, project="CRW", ref=FileRef(file_id=file_id))
    return read.data.decode(), read.file.revision_count


def flash_of(page: httpx2.Response) -> str:
    found = re.search(r'<div class="flash (\w+)"[^>]*>(.*?)</div>', page.text, re.S)
    assert found is not None, page.text[:2000]
    return f"{found.group(1)}: {html.unescape(found.group(2))}"


def box(client: httpx2.Client, made: dict[str, Any], line: int, **fields: str) -> httpx2.Response:
    data = {"csrf": csrf_of(client), "line": str(line), **fields}
    data.setdefault("expected_version", str(made["contentVersion"]))
    return client.post(f"/p/CRW/specs/files/{made['id']}/box", data=data, headers=JSON)


def test_the_page_shows_boxes_with_keys_statuses_and_details_apart_from_titles(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me)
    page = client.get(f"/p/CRW/specs/files/{made['id']}").text
    boxes = re.findall(r'<input type="checkbox" class="task-box" id="task-box-(\d+)"([^>]*)>', page)
    assert [(line, "checked" in attrs, "data-indeterminate" in attrs) for line, attrs in boxes] == [
        ("3", False, False), ("6", True, False), ("7", False, True),
    ]  # fmt: skip
    assert not any("disabled" in attrs for _line, attrs in boxes)
    assert not any(mark in page for mark in ("[ ]", "[x]", "[-]"))
    assert '<label class="task-title" for="task-box-3">Write the migration</label>' in page
    # the detail, not glued to the title: a paragraph of its own (a numbered block of text)
    assert re.search(
        r'<p><span class="src" data-b="\d+" id="b\d+">two columns, both nullable</span></p>', page
    )
    keys = {t.title: f"CRW-{t.number}" for t in tasks_of(db, made["id"]).values()}
    assert f'href="/p/CRW/tasks/{keys["Write the migration"]}"' in page
    assert re.search(r"data-task-status>\s*In progress</span>", page)


def test_ticking_a_box_saves_a_revision_and_moves_its_task(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me)
    answer = box(client, made, 3, box="done")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["ok"], body["box"], body["revision"]) == (True, "x", 2)
    assert body["task"]["status"] == "done"
    assert "saved revision 2" in body["notice"]
    text, revision = text_of(db, me, made["id"])
    assert text == PLAN.replace("- [ ] Write", "- [x] Write")
    assert revision == 2
    assert tasks_of(db, made["id"])["Write the migration"].status is TaskStatus.DONE
    # Unticking from the new version: back to the backlog, a third revision.
    again = box(client, made, 3, expected_version=body["contentVersion"])
    assert again.json()["task"]["status"] == "backlog"
    assert text_of(db, me, made["id"]) == (PLAN, 3)
    assert tasks_of(db, made["id"])["Write the migration"].status is TaskStatus.BACKLOG


def test_a_plain_form_tick_redirects_back_with_what_happened(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me)
    data = {"csrf": csrf_of(client), "line": "7", "box": "done"}
    answer = client.post(
        f"/p/CRW/specs/files/{made['id']}/box",
        data={**data, "expected_version": made["contentVersion"]},
    )
    assert answer.status_code == 303
    assert answer.headers["location"].endswith("#task-line-7")
    shown = client.get(answer.headers["location"])
    assert "Line 7 marked done: saved revision 2." in flash_of(shown)
    assert tasks_of(db, made["id"])["Wire the board"].status is TaskStatus.DONE


def test_a_tick_from_a_stale_page_is_refused_and_writes_nothing(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me)
    spec_calls.update_spec_file(
        db, me, project="CRW", workspace_id=None, ref=FileRef(file_id=made["id"]),
        content=(PLAN + "- [ ] Another\n").encode(), expected_version=made["contentVersion"],
        idempotency_key=None,
    )  # fmt: skip
    answer = box(client, made, 3, box="done")
    assert answer.status_code == 409
    body = answer.json()
    assert (body["ok"], body["conflict"]) == (False, True)
    assert "saved revision 2" in body["error"]
    assert "Nothing was lost" in body["error"]
    assert body["reload"] == f"/p/CRW/specs/files/{made['id']}"
    assert text_of(db, me, made["id"]) == (PLAN + "- [ ] Another\n", 2)
    assert tasks_of(db, made["id"])["Write the migration"].status is TaskStatus.BACKLOG


def test_a_line_without_a_box_and_a_bad_box_are_refused_naming_the_field(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me)
    no_box = box(client, made, 4, box="done")
    assert no_box.status_code == 422
    assert "line 4 of plan/tasks.md is not a checkbox line" in no_box.json()["error"]
    bad = box(client, made, 3, box="cancelled")
    assert bad.status_code == 422
    assert "done, in_progress, pending" in bad.json()["error"]
    assert text_of(db, me, made["id"])[1] == 1


def test_a_reader_sees_disabled_boxes_and_cannot_tick(
    url: str, db: Database, owner: User, me: Actor
) -> None:
    made = add(db, me)
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    client = sign_in(url, reader.email)
    try:
        page = client.get(f"/p/CRW/specs/files/{made['id']}").text
        boxes = re.findall(r'<input type="checkbox" class="task-box"[^>]*>', page)
        assert len(boxes) == 3
        assert all(" disabled" in b for b in boxes)
        assert "ticking a box needs the write role" in page
        refused = box(client, made, 3, box="done")
        assert refused.status_code == 403
    finally:
        client.close()
    assert text_of(db, me, made["id"])[1] == 1


def test_an_older_revision_shows_its_boxes_disabled(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me)
    box(client, made, 3, box="done")
    page = client.get(f"/p/CRW/specs/files/{made['id']}?revision=1").text
    boxes = re.findall(r'<input type="checkbox" class="task-box"[^>]*>', page)
    assert len(boxes) == 3
    assert all(" disabled" in b for b in boxes)
    assert "open the current text to tick boxes" in page


def save(client: httpx2.Client, made: dict[str, Any], text: str, **choices: str) -> httpx2.Response:
    data = {
        "csrf": csrf_of(client),
        "expected_version": made["contentVersion"],
        "content": text,
        **{f"leaving.{task}": choice for task, choice in choices.items()},
    }
    return client.post(f"/p/CRW/specs/files/{made['id']}/edit", data=data)


def test_removing_a_task_line_asks_first_and_saves_nothing_until_answered(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me)
    cut = PLAN.replace("- [-] Wire the board\n", "").replace("Parse the file", "Parse files")
    asked = save(client, made, cut)
    assert asked.status_code == 422
    wired = tasks_of(db, made["id"])["Wire the board"]
    assert "Not saved yet: 1 task loses its line" in asked.text
    assert f">CRW-{wired.number}</a> Wire the board" in asked.text
    assert f'name="leaving.{wired.id}" value="done" required' in asked.text
    assert f'name="leaving.{wired.id}" value="keep" required' in asked.text
    assert f">{html.escape(cut)}</textarea>" in asked.text  # the typed text is kept
    assert text_of(db, me, made["id"])[1] == 1
    assert tasks_of(db, made["id"])["Wire the board"].source_line == 7

    kept = save(client, made, cut, **{wired.id: "keep"})
    assert kept.status_code == 303, kept.text
    shown = client.get(kept.headers["location"])
    assert "kept on the board, no longer in the file" in flash_of(shown)
    now = tasks_of(db, made["id"])
    assert "Wire the board" not in now  # no longer in the file
    assert task(db, wired.id).status is TaskStatus.IN_PROGRESS  # on the board as it was
    assert now["Parse files"].status is TaskStatus.DONE  # a reworded line keeps its task

    # A later save of the file leaves the kept task alone.
    later = dict(made, contentVersion=text_of_version(db, me, made["id"]))
    assert save(client, later, cut + "- [ ] New one\n").status_code == 303
    assert task(db, wired.id).status is TaskStatus.IN_PROGRESS


def text_of_version(db: Database, me: Actor, file_id: str) -> str:
    read = files.read_file_bytes(db, me, project="CRW", ref=FileRef(file_id=file_id))
    return read.file.content_version


def test_removing_a_task_line_with_done_chosen_closes_its_task(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me)
    first = tasks_of(db, made["id"])["Write the migration"]
    cut = PLAN.replace(
        "- [ ] Write the migration\n  two columns, both nullable\n  - backfill in batches\n", ""
    )
    answer = save(client, made, cut, **{first.id: "done"})
    assert answer.status_code == 303, answer.text
    assert "1 task moved to Done." in flash_of(client.get(answer.headers["location"]))
    assert "Write the migration" not in tasks_of(db, made["id"])
    assert task(db, first.id).status is TaskStatus.DONE


def test_a_choice_that_is_not_one_is_refused_naming_the_field(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me)
    wired = tasks_of(db, made["id"])["Wire the board"]
    cut = PLAN.replace("- [-] Wire the board\n", "")
    answer = save(client, made, cut, **{wired.id: "trash"})
    assert answer.status_code == 422
    said = flash_of(answer)
    assert f"“trash” is not a choice for CRW-{wired.number}" in said
    assert "Accepted values: done, keep" in said
    assert text_of(db, me, made["id"])[1] == 1


def test_any_markdown_file_with_checkbox_lines_gets_boxes_that_save_without_a_board(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me, "# Release\n\n- [ ] Tag the build\n- [x] Write notes\n", "release.md")
    page = client.get(f"/p/CRW/specs/files/{made['id']}").text
    assert page.count('type="checkbox" class="task-box"') == 2
    assert "/p/CRW/tasks/" not in page.split('id="content-title"')[1].split("</article>")[0]
    answer = box(client, made, 3, box="done")
    assert answer.status_code == 200, answer.text
    assert (answer.json()["revision"], answer.json()["task"]) == (2, None)
    assert text_of(db, me, made["id"]) == (
        "# Release\n\n- [x] Tag the build\n- [x] Write notes\n",
        2,
    )


def test_the_side_list_of_tasks_shows_their_titles_rendered_not_as_markdown(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    made = add(db, me, "- [ ] Show the **cart summary** with `tax` <b>x</b>\n")
    page = client.get(f"/p/CRW/specs/files/{made['id']}").text
    side = page[page.index('class="plain file-tasks"') :]
    side = side[: side.index("</ul>")]
    assert "<strong>cart summary</strong>" in side
    assert "<code>tax</code>" in side
    assert "**" not in side
    assert "<b>" not in side  # the file's raw HTML stays text
