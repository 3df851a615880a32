"""The board's bulk bar, saved views, sort and grouping and the refused move's fix over real
HTTP, as a form without the script sends them and as the script does (JSON)."""

from __future__ import annotations

import html
import re

import httpx2

from crewboard.contract.projects import present as project_present
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.e2e.test_web_board import client, flash_after, new_task, owner, read_task, tiles
from tests.support.factories import count_rows, grant, make_user
from tests.support.web import csrf_of, post_form, sign_in

__all__ = ["client", "owner"]  # fixtures shared with test_web_board

JSON = {"Accept": "application/json"}


def test_the_bulk_form_changes_each_card_and_the_flash_names_the_refused_one(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    a = new_task(db, owner, "Alpha", assignee_id=owner.id)
    b = new_task(db, owner, "Bravo")
    answer = post_form(
        client,
        "/p/CRW/board/bulk",
        {"task": [f"{a}@1", f"{b}@1"], "status": "in_progress", "next": "/p/CRW/board?tag="},
    )
    assert answer.headers["location"] == "/p/CRW/board?tag="
    flash = flash_after(client, answer)
    assert flash.startswith("error: Saved 1 of 2 cards.")
    assert f"{b} was not changed: Assignee:" in flash
    assert "assigneeId" not in flash
    assert read_task(db, owner, a)["status"] == "in_progress"
    assert read_task(db, owner, b)["status"] == "backlog"

    # The script's way: JSON with one result a card; assignee and tags in the same change.
    sent = client.post(
        "/p/CRW/board/bulk",
        data={
            "csrf": csrf_of(client), "task": [f"{b}@1", f"{a}@2"], "status": "in_progress",
            "assignee": owner.id, "add_tags": "ui, sprint", "remove_tags": "",
        },
        headers=JSON,
    )  # fmt: skip
    body = sent.json()
    assert sent.status_code == 200
    assert body["ok"] is True
    assert [(r["key"], r["ok"], r["revision"]) for r in body["results"]] == [
        (b, True, 2), (a, True, 3),
    ]  # fmt: skip
    assert body["results"][0]["changed"] == ["assignee_id", "status", "tags"]
    assert read_task(db, owner, b)["tags"] == ["ui", "sprint"]
    again = post_form(
        client,
        "/p/CRW/board/bulk",
        {"task": [f"{a}@3", f"{b}@2"], "status": "in_progress", "next": "/p/CRW/board"},
    )
    assert flash_after(client, again) == "notice: Saved 2 of 2 cards. 2 of them were so already."
    assert read_task(db, owner, a)["revision"] == 3  # nothing written for a card already so


def test_the_bulk_bar_refuses_bad_input_a_reader_and_a_form_without_its_token(
    url: str, client: httpx2.Client, db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Guarded")
    for data, field in (
        ({"task": [f"{key}@1"]}, "Change:"),
        ({"task": [f"{key}@1"], "status": "limbo"}, "Status:"),
        ({"task": [key], "status": "done"}, "Tasks:"),
        ({"status": "done"}, "Tasks:"),
    ):
        sent = post_form(client, "/p/CRW/board/bulk", {**data, "next": "/p/CRW/board"})
        flash = flash_after(client, sent)
        assert flash.startswith(f"error: {field}"), flash
    assert client.post("/p/CRW/board/bulk", data={"task": f"{key}@1"}).status_code == 403
    assert client.post("/p/CRW/board/views", data={"name": "x"}).status_code == 403
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    other = sign_in(url, reader.email)
    try:
        answer = post_form(
            other,
            "/p/CRW/board/bulk",
            {"task": f"{key}@1", "status": "done", "next": "/p/CRW/board"},
        )
        assert flash_after(other, answer).startswith("error:")
    finally:
        other.close()
    assert read_task(db, owner, key)["status"] == "backlog"


def test_a_move_refused_for_no_assignee_says_which_fix_and_moves_with_the_assignee_given(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    seat = project_present.add_team_role(
        db, person_actor(owner), project="CRW", name="Coder", kind="ai"
    )
    key = new_task(db, owner, "Nobody yet")
    refused = client.post(
        f"/p/CRW/tasks/{key}/status",
        data={"csrf": csrf_of(client), "status": "in_progress", "expected_revision": "1"},
        headers=JSON,
    )
    assert refused.status_code == 422
    assert refused.json()["fix"] == "assignee"
    moved = client.post(
        f"/p/CRW/tasks/{key}/status",
        data={
            "csrf": csrf_of(client), "status": "in_progress", "expected_revision": "1",
            "assignee": seat["id"],
        },
        headers=JSON,
    )  # fmt: skip
    assert moved.json()["ok"] is True
    task = read_task(db, owner, key)
    assert (task["status"], task["assigneeId"]) == ("in_progress", seat["id"])


def test_sort_and_group_show_on_the_board_and_unknown_ones_are_named(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    for title, priority in (("beta", "low"), ("Alpha", "high"), ("gamma", "medium")):
        new_task(db, owner, title, priority=priority)
    assert tiles(client.get("/p/CRW/board?sort=title")) == ["CRW-2", "CRW-1", "CRW-3"]
    grouped = client.get("/p/CRW/board?group=priority&sort=priority").text
    heads = re.findall(r'<h3 class="group-head">([^<]+)<', grouped)
    assert [head.strip() for head in heads] == ["High priority", "Medium priority", "Low priority"]
    bad = client.get("/p/CRW/board?sort=colour")
    assert bad.status_code == 422
    assert "Sort" in html.unescape(bad.text)
    assert "priority" in bad.text


def test_saved_views_save_list_open_and_delete_per_person(
    url: str, client: httpx2.Client, db: Database, owner: User
) -> None:
    new_task(db, owner, "Tagged", tags=["ui"])
    answer = post_form(
        client,
        "/p/CRW/board/views",
        {"name": "UI work", "query": "tag=ui&group=assignee&evil=1&csrf=x"},
    )
    assert answer.headers["location"] == "/p/CRW/board?tag=ui&group=assignee"
    assert flash_after(client, answer) == "notice: Saved the view “UI work”."
    board = client.get("/p/CRW/board").text
    assert 'href="/p/CRW/board?tag=ui&amp;group=assignee"' in board
    assert ">UI work</a>" in board
    view_id = re.search(r'name="view" value="(bvw_[0-9a-z]+)"', board)
    assert view_id is not None

    other = make_user(db, "other@example.com")
    grant(db, owner, "CRW", other, Role.WRITE)
    theirs = sign_in(url, other.email)
    try:
        assert "UI work" not in theirs.get("/p/CRW/board").text
        refused = post_form(
            theirs, "/p/CRW/board/views/delete", {"view": view_id.group(1), "next": "/p/CRW/board"}
        )
        assert flash_after(theirs, refused).startswith("error:")
    finally:
        theirs.close()
    assert count_rows(db, "board_views") == 1
    gone = post_form(
        client, "/p/CRW/board/views/delete", {"view": view_id.group(1), "next": "/p/CRW/board"}
    )
    assert flash_after(client, gone) == "notice: Deleted the view “UI work”."
    assert count_rows(db, "board_views") == 0
    empty = post_form(
        client, "/p/CRW/board/views", {"name": "  ", "query": "", "next": "/p/CRW/board"}
    )
    assert flash_after(client, empty).startswith("error: Name:")
