"""Full task editing on the task page over real HTTP: every field, subtasks and blockers, the
history from → to, refusals that keep the typed text, and conflicts on every edit form."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx2
import pytest

from crewboard.contract import memory_present as memory_edits
from crewboard.contract.projects import present
from crewboard.contract.review.present import hand_in_view
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor, User
from crewboard.services.board import batch, task_updates, tasks
from crewboard.services.identity.users import person_actor
from crewboard.services.projects import state
from crewboard.services.review import drafts
from crewboard.storage.database import Database
from tests.support import task_reads as task_queries
from tests.support.factories import make_project, make_user, token_actor
from tests.support.review import AGENT_SCOPES
from tests.support.web import post_form, sign_in

PAGE = "/p/CRW/tasks/{key}"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com", is_owner=True)
    make_project(db, user, "CRW", collections=["general"])
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


@pytest.fixture
def coder(db: Database, me: Actor) -> str:
    """An AI seat of CRW named Coder; its role id."""
    seat = present.add_team_role(db, me, project="CRW", name="Coder", role="Backend", kind="ai")
    return str(seat["id"])


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    signed_in = sign_in(url, owner.email)
    try:
        yield signed_in
    finally:
        signed_in.close()


def new_task(db: Database, me: Actor, title: str, project: str = "CRW", **fields: Any) -> str:
    """A task made through the service; its key."""
    made = tasks.create_task(
        db, me, project=project, workspace_id=None, idempotency_key=None, title=title, **fields
    )
    return str(made.body["task"]["key"])


def read_task(db: Database, me: Actor, key: str) -> dict[str, Any]:
    found = task_queries.get_task(db, me, task=key, include_context_pack=False)
    assert isinstance(found, dict)
    return dict(found["task"])


def edit_form(page: httpx2.Response, key: str) -> dict[str, str]:
    """Every field of the edit form as a browser sends it back unchanged: the hidden ones, the
    inputs, the textareas (their text) and the selected option of each select."""
    found = re.search(
        rf'<form method="post" action="/p/CRW/tasks/{key}">(.*?)</form>', page.text, re.S
    )
    assert found is not None, page.text
    form = found.group(1)
    fields = {
        name: html.unescape(value)
        for name, value in re.findall(r'<input type="\w+"[^>]* name="(\w+)" value="([^"]*)"', form)
    }
    for name, text in re.findall(
        r'<textarea id="[\w-]+" name="(\w+)"[^>]*>\n(.*?)</textarea>', form, re.S
    ):
        fields[name] = html.unescape(text)
    for name, options in re.findall(
        r'<select id="[\w-]+" name="(\w+)"[^>]*>(.*?)</select>', form, re.S
    ):
        chosen = re.search(r'<option value="([^"]*)" selected>', options)
        fields[name] = html.unescape(chosen.group(1)) if chosen else ""
    fields.pop("csrf", None)
    return fields


def send_edit(
    client: httpx2.Client, key: str, changes: dict[str, str], shown: httpx2.Response | None = None
) -> httpx2.Response:
    """Open the task page (or use `shown`), change `changes` in the form and send all of it."""
    page = shown if shown is not None else client.get(PAGE.format(key=key))
    return post_form(client, PAGE.format(key=key), {**edit_form(page, key), **changes})


def flash_after(client: httpx2.Client, answer: httpx2.Response) -> str:
    assert answer.status_code == 303, answer.text
    return flash_of(client.get(answer.headers["location"]))


def flash_of(page: httpx2.Response) -> str:
    found = re.search(r'<div class="flash (\w+)"[^>]*>(.*?)</div>', page.text, re.S)
    assert found is not None, page.text
    return f"{found.group(1)}: {html.unescape(found.group(2))}"


def history(page: httpx2.Response) -> str:
    """The task page's history section as text."""
    found = re.search(r'<h2 id="h-timeline">History</h2>(.*?)</section>', page.text, re.S)
    assert found is not None
    return html.unescape(re.sub(r"<[^>]+>", " ", found.group(1)))


def updated_events(db: Database) -> list[dict[str, Any]]:
    rows = db.read(lambda uow: uow.events.list_after(project_id=None, limit=1000))
    return [r["payload"] for r in rows if r["type"] == "task.updated"]


# --- two fields, plain newlines, the history ---------------------------------------------------


def test_an_edit_of_two_fields_names_those_two_and_saves_plain_newlines(
    client: httpx2.Client, db: Database, me: Actor, clock: ManualClock
) -> None:
    key = new_task(db, me, "Before", description="One\ntwo", priority="medium")
    clock.advance(timedelta(minutes=1))
    answer = send_edit(client, key, {"title": "After", "description": "One\r\ntwo\r\nthree"})
    assert flash_after(client, answer) == f"notice: Saved {key} (title, description)."
    saved = read_task(db, me, key)
    assert (saved["title"], saved["description"]) == ("After", "One\ntwo\nthree")
    event = updated_events(db)[-1]
    assert event["changed"] == ["description", "title"]
    assert event["changes"] == {"title": {"from": "Before", "to": "After"}}  # no text dump
    said = history(client.get(PAGE.format(key=key)))
    assert "Title: “Before” → “After”" in said
    assert "Changed description" in said
    assert "Created in Backlog" in said
    assert "One\ntwo" not in said


def test_assignee_type_status_and_priority_change_and_read_from_to_with_names(
    client: httpx2.Client, db: Database, me: Actor, coder: str, clock: ManualClock
) -> None:
    key = new_task(db, me, "Wire the login", priority="medium")
    clock.advance(timedelta(minutes=1))
    answer = send_edit(
        client,
        key,
        {"assignee": coder, "type": "development", "status": "in_progress", "priority": "high"},
    )
    assert flash_after(client, answer) == (
        f"notice: Saved {key} (assignee, type, status, priority)."
    )
    saved = read_task(db, me, key)
    assert (saved["assigneeId"], saved["assigneeType"], saved["type"]) == (
        coder,
        "ai",
        "development",
    )
    assert (saved["status"], saved["priority"]) == ("in_progress", "high")
    page = client.get(PAGE.format(key=key))
    said = history(page)
    assert "Assignee: Unassigned → Coder" in said
    assert "Status: Backlog → In progress" in said
    assert said.count("Backlog → In progress") == 1  # the lifecycle event is not said twice
    assert "Type: General → Development" in said
    assert "Priority: medium → high" in said
    assert "assigneeId" not in page.text.split('id="h-timeline"')[1].split("</section>")[0]
    # The form shows the new values, so sending it again changes nothing.
    assert edit_form(page, key)["assignee"] == coder
    again = send_edit(client, key, {}, shown=page)
    assert flash_after(client, again) == "notice: Nothing changed; nothing saved."
    # Back to nobody: the assignee is cleared (a task in progress needs one, so move it too).
    back = send_edit(client, key, {"assignee": "", "status": "ready_for_ai"})
    assert flash_after(client, back).startswith(f"notice: Saved {key}")
    assert read_task(db, me, key)["assigneeId"] is None
    assert "Assignee: Coder → Unassigned" in history(client.get(PAGE.format(key=key)))


def test_a_batch_change_from_an_agent_reads_from_to_as_well(
    client: httpx2.Client, db: Database, me: Actor, coder: str, clock: ManualClock
) -> None:
    key = new_task(db, me, "Planned", priority="medium")
    clock.advance(timedelta(minutes=1))
    batch.update_tasks(
        db,
        me,
        project="CRW",
        workspace_id=None,
        idempotency_key="plan-1",
        task_ids=[key],
        fields={"priority": "low", "assignee_id": coder, "due_date": "2026-06-01"},
    )
    said = history(client.get(PAGE.format(key=key)))
    assert "Priority: medium → low" in said
    assert "Due date: none → 2026-06-01" in said
    assert said.count("Assignee: Unassigned → Coder") == 1


def test_an_older_event_without_values_still_reads_as_a_change(
    client: httpx2.Client, db: Database, me: Actor, clock: ManualClock
) -> None:
    key = new_task(db, me, "Old history")
    task = read_task(db, me, key)
    clock.advance(timedelta(minutes=1))

    def old_style(uow: Any) -> None:  # what update_task wrote before it kept values
        uow.record_event(
            "task.updated",
            actor=me.as_payload(),
            payload={"task": {"id": task["id"], "key": key}, "changed": ["priority"]},
            project_id=task["projectId"],
        )

    db.write(old_style)
    said = history(client.get(PAGE.format(key=key)))
    assert "Changed priority" in said


# --- parent, blockers, subtasks ----------------------------------------------------------------


def test_the_parent_is_set_by_key_and_cleared(
    client: httpx2.Client, db: Database, me: Actor, clock: ManualClock
) -> None:
    parent = new_task(db, me, "The epic")
    key = new_task(db, me, "A part")
    clock.advance(timedelta(minutes=1))
    number = parent.split("-")[1]
    answer = send_edit(client, key, {"parent": f" #{number} "})  # a bare number is a key here
    assert flash_after(client, answer) == f"notice: Saved {key} (parent task)."
    assert read_task(db, me, key)["parentTaskId"] == read_task(db, me, parent)["id"]
    page = client.get(PAGE.format(key=key))
    assert edit_form(page, key)["parent"] == parent
    assert f"Parent task: none → {parent}" in history(page)
    clock.advance(timedelta(minutes=1))
    assert flash_after(client, send_edit(client, key, {"parent": ""})).startswith("notice: Saved")
    assert read_task(db, me, key)["parentTaskId"] is None
    assert f"Parent task: {parent} → none" in history(client.get(PAGE.format(key=key)))


@pytest.mark.parametrize(
    "case",
    [
        ("CRW-99", "Parent task: CRW-99 is not a task of CRW."),
        ("OTH-1", "Parent task: OTH-1 is not a task of CRW."),
        ("self", "Parent task: a task cannot point at itself."),
    ],
)
def test_a_parent_that_is_no_task_here_is_refused_naming_the_field_and_keeps_the_typed_text(
    client: httpx2.Client, db: Database, me: Actor, owner: User, case: tuple[str, str]
) -> None:
    parent, said = case
    make_project(db, owner, "OTH")
    new_task(db, me, "Elsewhere", project="OTH")
    key = new_task(db, me, "Mine", description="Old")
    typed = "My new text\nover two lines"
    answer = send_edit(
        client, key, {"parent": key if parent == "self" else parent, "description": typed}
    )
    assert answer.status_code == 422
    assert flash_of(answer) == f"error: Not saved: {said} Your changes are still in the form."
    form = edit_form(answer, key)
    assert form["description"] == typed
    assert form["parent"] == (key if parent == "self" else parent)
    assert 'name="parent" value="' in answer.text
    assert re.search(r'name="parent"[^>]*aria-invalid="true"', answer.text)
    assert "parentTaskId" not in answer.text
    assert read_task(db, me, key)["revision"] == 1  # nothing saved


def test_a_parent_below_the_task_is_refused_as_a_loop(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    top = new_task(db, me, "Top")
    middle = new_task(db, me, "Middle", parent_task_id=top)
    new_task(db, me, "Bottom", parent_task_id=middle)
    bottom = "CRW-3"
    answer = send_edit(client, top, {"parent": bottom, "title": "Top, renamed"})
    assert answer.status_code == 422
    said = flash_of(answer)
    assert said.startswith(f"error: Not saved: Parent task: {bottom} is a subtask of this task")
    assert "loop" in said
    assert edit_form(answer, top)["title"] == "Top, renamed"
    assert read_task(db, me, top)["parentTaskId"] is None


def test_blockers_are_added_and_removed_by_key_and_read_from_to(
    client: httpx2.Client, db: Database, me: Actor, clock: ManualClock
) -> None:
    key = new_task(db, me, "Blocked one")
    first = new_task(db, me, "First blocker")
    second = new_task(db, me, "Second blocker")
    clock.advance(timedelta(minutes=1))
    answer = send_edit(client, key, {"blocked_by": f"{first}, {second.lower()}"})
    assert flash_after(client, answer) == f"notice: Saved {key} (blocked by)."
    ids = {read_task(db, me, other)["id"] for other in (first, second)}
    assert set(read_task(db, me, key)["blockedByTaskIds"]) == ids
    assert updated_events(db)[-1]["changed"] == ["blockedByTaskIds"]
    page = client.get(PAGE.format(key=key))
    assert f"Blocked by: none → {first}, {second}" in history(page)
    clock.advance(timedelta(minutes=1))
    answer = send_edit(client, key, {"blocked_by": second}, shown=page)
    assert flash_after(client, answer).startswith(f"notice: Saved {key}")
    assert read_task(db, me, key)["blockedByTaskIds"] == [read_task(db, me, second)["id"]]
    assert f"Blocked by: {first}, {second} → {second}" in history(client.get(PAGE.format(key=key)))
    refused = send_edit(client, key, {"blocked_by": f"{second}, CRW-77"})
    assert refused.status_code == 422
    assert "Blocked by: CRW-77 is not a task of CRW." in flash_of(refused)
    assert edit_form(refused, key)["blocked_by"] == f"{second}, CRW-77"


def test_an_existing_task_is_added_as_a_subtask_and_taken_off_again(
    client: httpx2.Client, db: Database, me: Actor, clock: ManualClock
) -> None:
    key = new_task(db, me, "The parent")
    child = new_task(db, me, "The child")
    clock.advance(timedelta(minutes=1))
    added = post_form(client, f"/p/CRW/tasks/{key}/subtasks", {"add": child.lower()})
    assert flash_after(client, added) == f"notice: {child} is now a subtask of {key}."
    assert read_task(db, me, child)["parentTaskId"] == read_task(db, me, key)["id"]
    page = client.get(PAGE.format(key=key))
    assert f'aria-label="Remove {child} from the subtasks of {key}"' in page.text
    clock.advance(timedelta(minutes=1))
    removed = post_form(client, f"/p/CRW/tasks/{key}/subtasks", {"remove": child})
    assert flash_after(client, removed) == f"notice: {child} is no longer a subtask of {key}."
    assert read_task(db, me, child)["parentTaskId"] is None
    assert f"Parent task: {key} → none" in history(client.get(PAGE.format(key=child)))
    # Taking off a task that is no subtask here any more changes nothing.
    again = post_form(client, f"/p/CRW/tasks/{key}/subtasks", {"remove": child})
    assert "is not a subtask of" in flash_after(client, again)


@pytest.mark.parametrize(
    ("add", "said"),
    [
        ("CRW-99", "error: Subtask: CRW-99 is not a task of CRW."),
        ("", "error: Subtask: type the key of a task to add"),
        ("self", "was not added as a subtask: a task cannot point at itself."),
    ],
)
def test_a_subtask_that_cannot_be_added_is_refused_in_words(
    client: httpx2.Client, db: Database, me: Actor, add: str, said: str
) -> None:
    key = new_task(db, me, "The parent")
    answer = post_form(
        client, f"/p/CRW/tasks/{key}/subtasks", {"add": key if add == "self" else add}
    )
    flash = flash_after(client, answer)
    assert said in flash
    assert "parentTaskId" not in flash
    assert "list_tasks" not in flash


def test_a_subtask_loop_is_refused(client: httpx2.Client, db: Database, me: Actor) -> None:
    top = new_task(db, me, "Top")
    below = new_task(db, me, "Below", parent_task_id=top)
    answer = post_form(client, f"/p/CRW/tasks/{below}/subtasks", {"add": top})
    assert "would make a loop" in flash_after(client, answer)
    assert read_task(db, me, top)["parentTaskId"] is None


# --- status with a hand-in waiting -------------------------------------------------------------


def test_approving_from_the_form_while_a_hand_in_waits_is_refused_with_a_link_keeping_the_text(
    client: httpx2.Client, db: Database, me: Actor, owner: User
) -> None:
    key = new_task(db, me, "Fix the redirect", status="ready_for_ai")
    agent = token_actor(db, owner, AGENT_SCOPES)
    draft = drafts.submit_result(
        db,
        agent,
        project="CRW",
        workspace_id=None,
        task=key,
        idempotency_key="h-1",
        expected_revision=1,
        context_receipt_id=None,
        title="Redirect fixed",
        summary="The loop is gone",
        content="Fixed.",
        answer=hand_in_view,
    ).body["draft"]["id"]
    answer = send_edit(client, key, {"status": "approved", "brief": "Typed brief"})
    assert answer.status_code == 409
    assert flash_of(answer).startswith(f"error: Not saved: a hand-in of {key} waits for review")
    assert f'href="/p/CRW/inbox/drafts/{draft}"' in answer.text
    assert edit_form(answer, key)["brief"] == "Typed brief"
    assert read_task(db, me, key)["status"] == "review"


# --- conflicts on every edit form --------------------------------------------------------------


def test_a_task_edit_conflict_keeps_the_typed_fields_and_shows_the_other_change(
    client: httpx2.Client, db: Database, me: Actor, coder: str
) -> None:
    key = new_task(db, me, "Shared")
    shown = client.get(PAGE.format(key=key))
    task_updates.update_task(
        db, me, project="CRW", workspace_id=None, idempotency_key=None, task_id=key,
        expected_revision=1, patch={"priority": "high", "assignee_id": coder},
    )  # fmt: skip
    answer = send_edit(
        client, key, {"description": "Mine\r\ntyped", "priority": "low"}, shown=shown
    )
    assert answer.status_code == 409
    assert "Changed meanwhile" in answer.text
    form = edit_form(answer, key)
    assert (form["description"], form["priority"]) == ("Mine\ntyped", "low")  # mine kept
    assert form["assignee"] == coder  # theirs, where I changed nothing
    assert form["expected_revision"] == "2"
    assert "(you changed it too)" in answer.text
    assert flash_after(client, send_edit(client, key, {}, shown=answer)).startswith(
        f"notice: Saved {key}"
    )
    saved = read_task(db, me, key)
    assert (saved["description"], saved["priority"], saved["assigneeId"]) == (
        "Mine\ntyped",
        "low",
        coder,
    )


def test_a_record_edit_conflict_keeps_the_typed_text_beside_the_other_change(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    record = _record(db, me)
    path = f"/p/CRW/memory/records/{record}"
    memory_edits.update_record(db, me, record, expected_version=1, content="Their content")
    typed = {
        "title": "Sessions",
        "summary": "Where sessions live",
        "content": "My content\r\nline two",
        "collection": "general",
        "document": "",
        "status": "approved",
        "expected_version": "1",
    }
    answer = post_form(client, path, typed)
    assert answer.status_code == 409
    assert "Not saved" in flash_of(answer)
    assert "My content\nline two</textarea>" in answer.text
    conflict = answer.text.split('id="h-theirs"')[1].split("</div>")[0]
    assert "Their content" in conflict
    assert 'name="expected_version" value="2"' in answer.text
    refused = post_form(client, path, {**typed, "title": "", "expected_version": "2"})
    assert refused.status_code == 422
    assert "Title" in flash_of(refused)
    assert "My content\nline two</textarea>" in refused.text


def test_a_document_edit_conflict_keeps_the_typed_text_beside_the_other_change(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    path = "/p/CRW/memory/documents/decisions"
    memory_edits.set_document(db, me, "CRW", "decisions", "Their decisions", expected_version=0)
    answer = post_form(client, path, {"content": "My decisions\r\nmore", "expected_version": "0"})
    assert answer.status_code == 409
    assert "My decisions\nmore</textarea>" in answer.text
    conflict = answer.text.split('id="h-theirs"')[1].split("</div>")[0]
    assert "Their decisions" in conflict
    assert 'name="expected_version" value="1"' in answer.text


def test_a_state_edit_conflict_keeps_the_typed_text_beside_the_other_change(
    client: httpx2.Client, db: Database, me: Actor
) -> None:
    present.update_project_state(
        db, me, project="CRW", workspace_id=None, content="Their state", expected_revision=0
    )
    answer = post_form(client, "/p/CRW/state", {"content": "My state\r\nnow", "revision": "0"})
    assert answer.status_code == 409
    assert "My state\nnow</textarea>" in answer.text
    conflict = answer.text.split('id="h-theirs"')[1].split("</div>")[0]
    assert "Their state" in conflict
    too_long = "x" * (state.MAX_STATE_LENGTH + 1)
    refused = post_form(client, "/p/CRW/state", {"content": too_long, "revision": "1"})
    assert refused.status_code == 422
    assert too_long in refused.text  # nothing typed is lost


def _record(db: Database, me: Actor) -> str:
    def file(uow: Any) -> dict[str, Any]:
        from crewboard.services.memory import records  # noqa: PLC0415 - the one test that files

        project = uow.projects.get_with_role("CRW", me.user_id)[0]
        return records.file_record(
            uow,
            me,
            project,
            title="Sessions",
            summary="Where sessions live",
            content="Redis.",
            collection="general",
            document=None,
            source_draft_id=None,
        )

    return str(db.write(file).id)
