"""The board's moves as its script sends them (`Accept: application/json`), over real HTTP:
where a dropped card lands, what a refusal says and names, the conflict view's data, a
waiting hand-in, and a gap used up by repeated drops."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from crewboard.contract.review.present import hand_in_view
from crewboard.domain.identity.records import User
from crewboard.services.identity.users import person_actor
from crewboard.services.review import drafts
from crewboard.storage.database import Database
from tests.e2e.test_web_board import edit_task, new_task, read_task
from tests.support.factories import make_project, make_user
from tests.support.web import csrf_of, sign_in

JSON = {"accept": "application/json"}


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


def move(
    client: httpx2.Client,
    key: str,
    status: str,
    revision: int | str,
    *,
    after: str = "",
    before: str = "",
    **more: str,
) -> httpx2.Response:
    """A drop as board.js sends it: the column, the card's revision and its new neighbours."""
    fields = {
        "csrf": csrf_of(client, "/p/CRW/board"),
        "status": status,
        "expected_revision": str(revision),
        "after": after,
        "before": before,
        **more,
    }
    return client.post(f"/p/CRW/tasks/{key}/status", data=fields, headers=JSON)


def column(client: httpx2.Client, status: str) -> list[str]:
    """The keys of a column in board order, from its own page (50 a page)."""
    page = client.get(f"/p/CRW/board?column={status}")
    assert page.status_code == 200
    shown = page.text.split(f'data-column="{status}"', 1)[1].split("</ol>", 1)[0]
    return re.findall(r'<span class="key">([A-Z0-9]+-\d+)</span>', shown)


def test_a_card_dropped_between_two_lands_between_them(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    a, b, c = (new_task(db, owner, title) for title in ("Alpha", "Bravo", "Charlie"))
    assert column(client, "backlog") == [a, b, c]
    answer = move(client, c, "backlog", 1, after=a, before=b)
    assert answer.status_code == 200
    assert answer.json() == {
        "ok": True,
        "notice": f"{c} moved to Backlog.",
        "key": c,
        "status": "backlog",
        "revision": 2,
    }
    assert column(client, "backlog") == [a, c, b]
    # Into another column, above the card there.
    d = new_task(db, owner, "Delta", status="review")
    assert move(client, a, "review", 1, before=d).json()["status"] == "review"
    assert column(client, "review") == [a, d]
    assert column(client, "backlog") == [c, b]


def test_a_stale_move_answers_409_with_the_task_as_it_is_now(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Contended")
    edit_task(db, owner, key, 1, {"title": "Contended, renamed", "priority": "high"})
    answer = move(client, key, "review", 1)
    assert answer.status_code == 409
    body = answer.json()
    assert body["ok"] is False
    assert body["error"].startswith(f"{key} was not moved: ")
    now = body["conflict"]
    assert (now["key"], now["title"], now["priority"], now["revision"]) == (
        key,
        "Contended, renamed",
        "high",
        2,
    )
    assert (now["status"], now["statusLabel"], now["updatedBy"]) == ("backlog", "Backlog", "owner")
    assert not re.search(r"\d{4}-\d\d-\d\dT", now["when"])  # written as people write times
    assert read_task(db, owner, key)["status"] == "backlog"
    # The retry from the revision the conflict view showed is saved.
    assert move(client, key, "review", now["revision"]).json()["revision"] == 3


def test_a_move_to_approved_while_a_hand_in_waits_links_it_and_approves_only_when_asked(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    key = new_task(db, owner, "Ship the export", status="review")
    made = drafts.create_draft(
        db,
        person_actor(owner),
        task=key,
        title="Export",
        summary="Streams rows",
        content="Done.",
        idempotency_key="handin-1",
        answer=hand_in_view,
    )
    draft = str(made.body["draft"]["id"])
    answer = move(client, key, "approved", 1)
    assert answer.status_code == 409
    body = answer.json()
    assert body["handIn"] == {"id": draft, "url": f"/p/CRW/inbox/drafts/{draft}"}
    assert "waits for review" in body["error"]
    assert read_task(db, owner, key)["status"] == "review"
    # Naming another hand-in than the waiting one is not a choice to approve it.
    assert move(client, key, "approved", 1, approve_hand_in="drf_other").status_code == 409
    approved = move(client, key, "approved", 1, approve_hand_in=draft)
    assert approved.status_code == 200, approved.text
    assert approved.json()["notice"] == f"Approved the hand-in of {key}; {key} is in Approved."
    assert read_task(db, owner, key)["status"] == "approved"
    inbox = client.get("/p/CRW/inbox").text
    assert f"/inbox/drafts/{draft}" not in inbox.split("data-live-region", 1)[1]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"status": "shipped"}, (422, "“shipped” is not a column of the board; choose one of")),
        ({"revision": "two"}, (422, "Revision: reload the page")),
        ({"revision": "-1"}, (422, "Revision: reload the page")),
        ({"after": "CRW-99"}, (404, "CRW-99")),
        ({"after": "OTH-1"}, (404, "OTH-1")),
    ],
)
def test_a_refused_move_names_the_task_and_the_field_in_words(
    client: httpx2.Client,
    db: Database,
    owner: User,
    fields: dict[str, str],
    expected: tuple[int, str],
) -> None:
    code, said = expected
    make_project(db, owner, "OTH")
    new_task(db, owner, "Elsewhere", project="OTH")
    key = new_task(db, owner, "Stay put")
    answer = move(
        client,
        key,
        fields.get("status", "review"),
        fields.get("revision", "1"),
        after=fields.get("after", ""),
    )
    assert answer.status_code == code, answer.text
    error = answer.json()["error"]
    assert error.startswith(f"{key} was not moved: ")
    assert said in error
    assert not re.search(r"ready_for_ai|expected_revision|expectedRevision|_task", error)
    assert read_task(db, owner, key)["status"] == "backlog"
    assert read_task(db, owner, key)["revision"] == 1


def test_a_neighbour_that_left_the_column_is_named_and_nothing_moves(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    gone = new_task(db, owner, "Moved away", status="review")
    key = new_task(db, owner, "Stay put")
    answer = move(client, key, "backlog", 1, after=gone)
    assert answer.status_code == 422
    assert f"{gone} is no longer in that column" in answer.json()["error"]
    assert read_task(db, owner, key)["revision"] == 1


def test_drops_that_use_up_a_gap_space_the_column_out_and_keep_every_order(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    """Each drop halves the gap between the top card and the last one dropped: after some 30
    the midpoint is no longer distinct, and the column is spaced out again (orders only)."""
    top, bottom = new_task(db, owner, "Top"), new_task(db, owner, "Bottom")
    dropped: list[str] = []
    for n in range(40):
        key = new_task(db, owner, f"Dropped {n}", status="ready_for_ai")
        below = dropped[-1] if dropped else bottom
        answer = move(client, key, "backlog", 1, after=top, before=below)
        assert answer.status_code == 200, (n, answer.text)
        dropped.append(key)
    assert column(client, "backlog") == [top, *reversed(dropped), bottom]
    # Spacing out changes where cards sit, not the cards: no revision moved.
    revisions: dict[str, Any] = {k: read_task(db, owner, k)["revision"] for k in (top, bottom)}
    assert revisions == {top: 1, bottom: 1}
    orders = [read_task(db, owner, k)["boardOrder"] for k in (top, *reversed(dropped), bottom)]
    assert orders == sorted(orders)
    assert len(set(orders)) == len(orders)
