"""The search page over real HTTP: every kind found and linked, the results region alone for
the Ctrl/⌘-K dialog, "more" links and paging, a refused query that keeps its text, escaping
of agent text, access."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import httpx2
import pytest

from crewboard.contract.board import present_notes
from crewboard.contract.review.present import hand_in_view
from crewboard.domain.identity.records import User
from crewboard.services.board import notes
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.services.review import drafts
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_task, make_user
from tests.support.review import review_world
from tests.support.web import sign_in

XSS = '<script>window.__xss = 1</script><img src=x onerror="alert(1)"> payload'
_HREF = re.compile(r'<a href="([^"]+)" data-result>')


@pytest.fixture
def owner(db: Database) -> User:
    return make_user(db, "owner@example.com")


@pytest.fixture
def world(db: Database, owner: User) -> dict[str, Any]:
    """CRW with a record, task CRW-1, a hand-in, a comment and an agent update on Redis."""
    made = review_world(db, owner)
    agent = tokens.authenticate_token(db, made["secret"])
    made["draft"] = hand_in(db, agent, "Cache warmed", "The **Redis** cache is warmed.")
    notes.post_comment(
        db, person_actor(owner), task="CRW-1", workspace_id=None, idempotency_key="c-1",
        content="Check the redis timeout first.",
        answer=present_notes.comment_answer,
    )  # fmt: skip
    notes.agent_update(
        db, agent, task="CRW-1", workspace_id=None, idempotency_key="u-1",
        content="Reading the Redis client code.",
        answer=present_notes.agent_update_answer,
    )  # fmt: skip
    return {**made, "agent": agent}


@pytest.fixture
def client(url: str, owner: User, world: dict[str, Any]) -> Iterator[httpx2.Client]:
    signed_in = sign_in(url, owner.email)
    yield signed_in
    signed_in.close()


def hand_in(db: Database, agent: Any, title: str, content: str) -> str:
    made = drafts.create_draft(
        db, agent, task="CRW-1", project="CRW", workspace_id=None, title=title,
        summary="A hand-in", content=content, answer=hand_in_view,
    )  # fmt: skip
    return str(made.body["draft"]["id"])


def file_record(db: Database, owner: User, title: str) -> None:
    actor = person_actor(owner)
    db.write(
        lambda uow: memory.file_record(
            uow, actor, uow.projects.get_by_key("CRW"), title=title, summary="",
            content="Text.", collection=None, document=None, source_draft_id=None,
        )
    )  # fmt: skip


def result_links(page: str) -> list[str]:
    return [html.unescape(href) for href in _HREF.findall(page)]


def test_the_search_page_finds_every_kind_and_each_link_opens_its_page(
    client: httpx2.Client, world: dict[str, Any]
) -> None:
    answer = client.get("/p/CRW/search", params={"q": "redis"})

    assert answer.status_code == 200
    text = answer.text
    assert 'value="redis"' in text  # the box keeps the words
    assert "4 results for “redis”: 1 hand-in, 1 memory record, 2 comments." in text
    for heading in ("Hand-ins", "Memory", "Comments"):
        assert f'>{heading} <span class="badge">' in text
    assert "<mark>Redis</mark>" in text
    assert "<mark>redis</mark>" in text
    links = result_links(text)
    assert links == [
        f"/p/CRW/inbox/drafts/{world['draft']}",
        f"/p/CRW/memory/records/{world['record']}",
        "/p/CRW/tasks/CRW-1#h-updates",
        "/p/CRW/tasks/CRW-1#comments",
    ]
    for link in links:
        assert client.get(link.split("#")[0]).status_code == 200, link
    # Agent and person wording, never API names or raw timestamps.
    assert "Agent update on CRW-1" in text
    assert "Comment on CRW-1" in text
    assert "Hand-in for CRW-1 · pending" in text
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}", text)


def test_an_empty_search_shows_a_hint_and_a_task_search_matches_the_boards_words(
    client: httpx2.Client,
) -> None:
    empty = client.get("/p/CRW/search")
    assert empty.status_code == 200
    assert "Type one or more words to search" in empty.text
    assert 'role="search"' in empty.text
    assert 'method="get"' in empty.text
    blank = client.get("/p/CRW/search", params={"q": "  ?! "})
    assert blank.status_code == 200
    assert "Nothing to search for" in blank.text

    tasks = client.get("/p/CRW/search", params={"q": "login loops"})
    assert result_links(tasks.text) == ["/p/CRW/tasks/CRW-1"]
    assert "CRW-1 · Fix the <mark>login</mark> redirect" in tasks.text
    none = client.get("/p/CRW/search", params={"q": "xylophone"})
    assert "Nothing in CRW matches “xylophone”." in none.text


def test_the_results_region_alone_is_what_the_dialog_fetches(client: httpx2.Client) -> None:
    region = client.get("/p/CRW/search", params={"q": "redis", "region": "1"})

    assert region.status_code == 200
    assert region.text.lstrip().startswith('<section id="search-results"')
    assert "<header" not in region.text
    assert "<html" not in region.text
    assert 'data-search-count aria-live="polite"' in region.text
    assert len(result_links(region.text)) == 4


def test_a_search_over_the_limit_says_why_and_keeps_the_typed_words(
    client: httpx2.Client,
) -> None:
    typed = "redis " + "x" * 200

    answer = client.get("/p/CRW/search", params={"q": typed})

    assert answer.status_code == 400
    assert f'value="{typed}"' in answer.text
    assert 'aria-invalid="true"' in answer.text
    assert "Search words: at most 200 characters; this search has 206." in answer.text
    assert "q:" not in answer.text
    region = client.get("/p/CRW/search", params={"q": typed, "region": "1"})
    assert region.status_code == 400
    assert "Not searched: Search words: at most 200 characters" in region.text
    kind = client.get("/p/CRW/search", params={"q": "redis", "kind": "files"})
    assert kind.status_code == 400
    assert (
        "Accepted values: tasks, handins, memory, comments, specs, artifacts, handoffs."
        in kind.text
    )
    offset = client.get("/p/CRW/search", params={"q": "redis", "kind": "memory", "offset": "x"})
    assert offset.status_code == 400
    assert "Offset: must be a whole number" in offset.text


def test_agent_text_in_a_result_is_escaped(
    client: httpx2.Client, db: Database, world: dict[str, Any]
) -> None:
    hand_in(db, world["agent"], XSS, XSS)

    text = client.get("/p/CRW/search", params={"q": "payload"}).text

    assert "<script>window.__xss" not in text
    assert "<img src=x" not in text
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in text
    assert "<mark>payload</mark>" in text


def test_more_than_ten_of_a_kind_link_to_the_whole_list_which_pages(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    for number in range(12):
        make_task(db, owner, "CRW", f"Widget part {number}")
    for number in range(30):
        file_record(db, owner, f"Widget note {number}")

    overview = client.get("/p/CRW/search", params={"q": "widget"}).text
    assert len(result_links(overview)) == 20
    assert 'href="/p/CRW/board?q=widget">All 12 matching tasks, on the board' in overview
    more = '/p/CRW/search?q=widget&amp;kind=memory">All 30 matching memory records'
    assert more in overview
    board = client.get("/p/CRW/board", params={"q": "widget"})
    assert board.status_code == 200
    assert "Widget part 11" in board.text

    first = client.get("/p/CRW/search", params={"q": "widget", "kind": "memory"}).text
    assert "Memory records 1–25 of 30 matching “widget”." in first
    assert len(result_links(first)) == 25
    assert "offset=25" in first
    assert "Next memory records" in first
    second = client.get(
        "/p/CRW/search", params={"q": "widget", "kind": "memory", "offset": "25"}
    ).text
    assert "Memory records 26–30 of 30" in second
    assert len(result_links(second)) == 5
    assert "Previous memory records" in second
    assert "Next memory records" not in second


def test_search_in_a_project_the_person_cannot_open_is_not_found(
    db: Database, url: str, world: dict[str, Any]
) -> None:
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "SEC")
    with closing(sign_in(url, stranger.email)) as client:
        assert client.get("/p/CRW/search", params={"q": "redis"}).status_code == 404
        region = client.get("/p/CRW/search", params={"q": "redis", "region": "1"})
        assert region.status_code == 404
        assert "Redis" not in region.text
        # /search opens the search of the person's own project, with the words.
        moved = client.get("/search", params={"q": "redis"})
        assert moved.status_code == 303
        assert moved.headers["location"] == "/p/SEC/search?q=redis"
    with closing(httpx2.Client(base_url=url)) as anonymous:
        answer = anonymous.get("/p/CRW/search", params={"q": "redis"})
        assert answer.status_code == 303
        assert answer.headers["location"].startswith("/login")


def test_every_signed_in_page_offers_the_search_link_dialog_and_shortcut_help(
    client: httpx2.Client,
) -> None:
    page = client.get("/p/CRW/board").text
    assert 'href="/p/CRW/search" data-search-open' in page
    assert '<dialog id="search-dialog"' in page
    assert 'aria-labelledby="search-dialog-title"' in page
    assert '<script src="/static/search.js" defer></script>' in page
    assert "Search tasks, hand-ins, memory and comments from anywhere" in page
    assert client.get("/static/search.js").status_code == 200
    assert client.get("/static/search.css").status_code == 200
