"""The week as a seven-day grid (today and overdue marked, the time zone remembered) and the
activity page (filtered by kind and by who acted, grouped by day, paged, agents shown as
themselves), over real HTTP on a real database."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing
from datetime import timedelta
from typing import Any

import httpx2
import pytest

from crewboard.contract.projects import present
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.services.board import task_updates, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import grant, make_project, make_user
from tests.support.web import sign_in

AGENT_SCOPES = ["read", "tasks.manage", "drafts.create", "messages.write"]
_DAY = re.compile(r'<li class="day[^"]*"[^>]*>.*?</h2>', re.S)
_ENTRY = re.compile(r"<li data-item[^>]*>(.*?)</li>", re.S)
_OLDER = re.compile(r'href="([^"]+)" rel="next">Older')


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    signed_in = sign_in(url, owner.email)
    yield signed_in
    signed_in.close()


def add_task(db: Database, actor: Actor, title: str, **fields: Any) -> str:
    made = tasks.create_task(
        db, actor, project="CRW", workspace_id=None, idempotency_key=None, title=title, **fields
    )
    return str(made.body["task"]["key"])


def agent(db: Database, owner: User, name: str | None = None) -> Actor:
    """An agent token of CRW issued by `owner`, as the MCP door authenticates it."""
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", project="CRW", scopes=AGENT_SCOPES, name=name
    )
    return tokens.authenticate_token(db, issued.secret)


def days_of(page: httpx2.Response) -> list[str]:
    """The opening tag and heading of each day of the grid."""
    grid = page.text.split('class="week-grid"', 1)[1].split("</ol>\n\n", 1)[0]
    return _DAY.findall(grid)


def item_with(page: httpx2.Response, text: str) -> str:
    """The list item of the page that holds `text`."""
    found = [item for item in re.findall(r"<li[ >].*?</li>", page.text, re.S) if text in item]
    assert len(found) == 1, (text, found)
    return found[0]


def due_item(page: httpx2.Response, key: str) -> str:
    """The row of task `key` under a day's "Due" heading."""
    lists = "".join(re.findall(r"<h3>Due</h3>\s*<ul>(.*?)</ul>", page.text, re.S))
    found = [item for item in re.findall(r"<li[ >].*?</li>", lists, re.S) if f">{key}<" in item]
    assert len(found) == 1, (key, found)
    return found[0]


def entries(page: httpx2.Response) -> list[str]:
    return [re.sub(r"\s+", " ", e) for e in _ENTRY.findall(page.text)]


def alert_of(page: httpx2.Response) -> str:
    return page.text.split('class="flash error" role="alert">', 1)[1].split("</div>", 1)[0]


# --- the week ------------------------------------------------------------------------------


def test_the_week_is_a_grid_of_seven_days_with_today_marked(client: httpx2.Client) -> None:
    page = client.get("/p/CRW/week")  # the clock is Monday 2 March 2026, 09:00 UTC
    assert page.status_code == 200
    days = days_of(page)
    assert len(days) == 7
    labels = [re.sub(r"<[^>]+>", "", d.split("<h2", 1)[1].split(">", 1)[1]) for d in days]
    assert [label.split()[0] for label in labels] == [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ]
    marked = [d for d in days if 'aria-current="date"' in d]
    assert len(marked) == 1
    assert "Monday 02 March" in marked[0]
    assert "Today" in marked[0]
    assert "Week of 2 March 2026" in page.text

    following = client.get("/p/CRW/week?week=2026-03-09")
    assert 'aria-current="date"' not in following.text  # today is not in next week


def test_today_follows_the_chosen_zone(client: httpx2.Client, clock: ManualClock) -> None:
    clock.advance(timedelta(hours=14, minutes=30))  # Monday 23:30 UTC is Tuesday in Tokyo
    tokyo = [d for d in days_of(client.get("/p/CRW/week?tz=Asia/Tokyo")) if "aria-current" in d]
    assert "Tuesday 03 March" in tokyo[0]
    utc = [d for d in days_of(client.get("/p/CRW/week?tz=UTC")) if "aria-current" in d]
    assert "Monday 02 March" in utc[0]


def test_open_tasks_due_before_today_are_marked_overdue_in_words(
    db: Database, owner: User, client: httpx2.Client, clock: ManualClock
) -> None:
    actor = person_actor(owner)
    late = add_task(db, actor, "Late one", due_date="2026-03-02")
    finished = add_task(db, actor, "Finished one", due_date="2026-03-02", status="done")
    approved = add_task(db, actor, "Approved one", due_date="2026-03-03", status="approved")
    today = add_task(
        db, actor, "Due today", due_date="2026-03-04", status="in_progress", assignee_id=owner.id
    )
    later = add_task(db, actor, "Due Friday", due_date="2026-03-06")
    clock.advance(timedelta(days=2))  # Wednesday

    page = client.get("/p/CRW/week")
    assert '<span class="badge bad">overdue</span>' in due_item(page, late)
    assert 'class="overdue"' in due_item(page, late)
    for key in (finished, approved, today, later):
        assert "overdue" not in due_item(page, key), key
    assert '<span class="badge">In progress</span>' in due_item(page, today)
    assert "in_progress" not in page.text


def test_a_chosen_zone_is_remembered_in_a_cookie_and_used_next_time(
    client: httpx2.Client,
) -> None:
    chosen = client.get("/p/CRW/week?tz=Asia/Tokyo")
    assert chosen.status_code == 200
    (cookie,) = [c for c in chosen.headers.get_list("set-cookie") if "crewboard_tz" in c]
    assert cookie.startswith("crewboard_tz=Asia%2FTokyo;")
    assert "Max-Age=31536000" in cookie
    assert "Path=/" in cookie
    assert "samesite=lax" in cookie.lower()

    again = client.get("/p/CRW/week")
    assert 'value="Asia/Tokyo"' in again.text
    assert "tz=Asia/Tokyo" in again.text  # previous and next weeks keep the zone
    assert "crewboard_tz" not in again.headers.get("set-cookie", "")  # nothing chosen, nothing set
    assert "times in Tokyo (UTC+9)" in client.get("/p/CRW/activity").text


def test_an_unknown_zone_is_named_with_an_example_and_the_page_still_renders(
    client: httpx2.Client,
) -> None:
    client.get("/p/CRW/week?tz=Europe/Berlin")
    page = client.get("/p/CRW/week?tz=Mars/Olympus")
    assert page.status_code == 400
    message = alert_of(page)
    assert "Time zone" in message
    assert "Mars/Olympus" in message
    assert "Europe/Berlin" in message
    assert "timeZone" not in page.text
    assert 'value="Mars/Olympus"' in page.text  # what was typed stays in the field
    assert 'aria-invalid="true"' in page.text
    assert len(days_of(page)) == 7  # the week still shows, in the remembered zone
    assert re.search(r"times in Berlin \(UTC\+\d\)", page.text)
    assert "crewboard_tz" not in page.headers.get("set-cookie", "")
    assert 'value="Europe/Berlin"' in client.get("/p/CRW/week").text

    bad_date = client.get("/p/CRW/week?week=someday")
    assert bad_date.status_code == 400
    assert "Week" in alert_of(bad_date)
    assert "2026-03-02" in alert_of(bad_date)
    assert 'value="someday"' in bad_date.text


def test_a_cookie_that_is_not_a_zone_is_ignored(client: httpx2.Client) -> None:
    client.cookies.set("crewboard_tz", "Mars%2FOlympus")
    page = client.get("/p/CRW/week")
    assert page.status_code == 200
    assert 'value="UTC"' in page.text
    assert client.get("/p/CRW/activity").status_code == 200


# --- activity ------------------------------------------------------------------------------


@pytest.fixture
def writer(db: Database, owner: User) -> User:
    user = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", user, Role.WRITE)
    return user


def test_activity_filters_by_kind(db: Database, owner: User, client: httpx2.Client) -> None:
    add_task(db, person_actor(owner), "Plan the launch")
    present.update_project_state(
        db, person_actor(owner), project="CRW", workspace_id=None, content="x", expected_revision=0
    )
    project = entries(client.get("/p/CRW/activity?kind=project"))
    assert any("updated the project state page" in e for e in project)
    assert not any("Plan the launch" in e for e in project)
    made = entries(client.get("/p/CRW/activity?kind=tasks"))
    assert len(made) == 1
    assert "Plan the launch" in made[0]
    everything = client.get("/p/CRW/activity")
    assert len(entries(everything)) == len(project) + 1
    assert '<option value="tasks">' in everything.text


def test_a_task_change_names_its_fields_in_words_not_api_names(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    key = add_task(db, person_actor(owner), "Plan the launch")
    task_updates.update_task(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        idempotency_key=None,
        task_id=key,
        expected_revision=1,
        patch={"due_date": "2026-12-24", "story_points": 3, "description": "Line one\nLine two"},
    )
    (changed,) = [e for e in entries(client.get("/p/CRW/activity?kind=tasks")) if "changed" in e]
    assert "changed CRW-1 “Plan the launch”: " in changed
    assert all(words in changed for words in ("due date", "story points", "description"))
    assert "dueDate" not in changed
    assert "storyPoints" not in changed


def test_activity_filters_by_person_and_by_agent(
    db: Database, owner: User, writer: User, client: httpx2.Client
) -> None:
    coder = agent(db, owner)
    present.add_team_role(db, person_actor(owner), project="CRW", name="Coder", kind="ai")
    add_task(db, person_actor(owner), "By the owner")
    add_task(db, person_actor(writer), "By the writer")
    add_task(db, coder, "By the agent")
    assert coder.token is not None

    mine = entries(client.get(f"/p/CRW/activity?who={owner.id}"))
    assert "By the owner" in mine[0]  # then adding the role and the writer
    assert not any("By the writer" in e or "By the agent" in e for e in mine)
    theirs = entries(client.get(f"/p/CRW/activity?who={writer.id}"))
    assert len(theirs) == 1
    assert "By the writer" in theirs[0]
    agents = client.get(f"/p/CRW/activity?who={coder.token.id}")
    shown = entries(agents)
    assert len(shown) == 1
    assert "By the agent" in shown[0]
    assert f'<option value="{coder.token.id}" selected>Coder (AI, for owner)' in agents.text


def test_unknown_filter_values_are_named_not_a_server_error(client: httpx2.Client) -> None:
    kind = client.get("/p/CRW/activity?kind=gossip")
    assert kind.status_code == 400
    assert "Kind" in alert_of(kind)
    assert "gossip" in alert_of(kind)
    assert "Hand-ins and decisions" in alert_of(kind)
    who = client.get("/p/CRW/activity?who=usr_nobody")
    assert who.status_code == 400
    assert "Person or agent" in alert_of(who)
    older = client.get("/p/CRW/activity?before=yesterday")
    assert older.status_code == 400
    assert "Older" in alert_of(older)


def test_activity_pages_go_back_fifty_at_a_time_without_overlap_keeping_the_filter(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    actor = person_actor(owner)
    keys = [add_task(db, actor, f"Task {n}") for n in range(120)]
    present.update_project_state(
        db, actor, project="CRW", workspace_id=None, content="x", expected_revision=0
    )
    seen: list[str] = []
    page = client.get("/p/CRW/activity?kind=tasks")
    assert 'data-live="activity"' in page.text  # the first page refreshes live
    sizes = []
    while True:
        shown = entries(page)
        sizes.append(len(shown))
        seen += [re.search(r">(CRW-\d+)</a>", e).group(1) for e in shown]  # type: ignore[union-attr]
        older = _OLDER.search(page.text)
        if older is None:
            break
        assert "kind=tasks" in older.group(1)
        page = client.get(older.group(1).replace("&amp;", "&"))
        assert 'data-live=""' in page.text  # older pages hold still
        assert "Newest" in page.text
    assert sizes == [50, 50, 20]
    assert seen == list(reversed(keys))  # newest first, each once


def test_activity_is_grouped_by_day_in_the_remembered_zone(
    db: Database, url: str, owner: User, clock: ManualClock
) -> None:
    actor = person_actor(owner)
    add_task(db, actor, "Four days ago")  # Monday 2 March 09:00 UTC
    clock.advance(timedelta(days=3, hours=14, minutes=30))  # Thursday 23:30 UTC
    add_task(db, actor, "Late on Thursday")
    clock.advance(timedelta(hours=1))  # Friday 00:30 UTC
    add_task(db, actor, "Just after midnight")

    def headings(page: httpx2.Response) -> list[str]:
        return re.findall(r'<h2 id="activity-day-[^"]+">([^<]+)</h2>', page.text)

    with closing(sign_in(url, owner.email)) as client:  # now: an older session has expired
        utc = client.get("/p/CRW/activity")
        assert headings(utc) == ["Today", "Yesterday", "Monday 2 March"]
        assert "Just after midnight" in utc.text.split(">Yesterday<")[0]
        client.get("/p/CRW/week?tz=Europe/Berlin")  # Thursday 23:30 UTC is Friday in Berlin
        berlin = client.get("/p/CRW/activity")
    assert headings(berlin) == ["Today", "Monday 2 March"]
    assert "00:30" in berlin.text
    assert "01:30" in berlin.text


def test_an_agents_rows_show_its_seat_or_token_name_for_its_person(
    db: Database, owner: User, client: httpx2.Client
) -> None:
    actor = person_actor(owner)
    present.add_team_role(db, actor, project="CRW", name="Coder", role="Backend", kind="ai")
    present.add_team_role(db, actor, project="CRW", name="Writer", role="Docs", kind="ai")
    add_task(db, agent(db, owner, name="Writer"), "Written by the seat")
    add_task(db, agent(db, owner, name="nightly-bot"), "Made by a token")
    personal = tokens.issue_token(db, actor, kind="personal", scopes=["read", "tasks.manage"])
    add_task(db, tokens.authenticate_token(db, personal.secret), "Through a personal token")

    page = client.get("/p/CRW/activity?kind=tasks")
    seat, token, own = (
        item_with(page, title)
        for title in ("Written by the seat", "Made by a token", "Through a personal token")
    )
    assert 'Writer <span class="muted">(for owner)</span> <span class="badge">AI</span>' in seat
    assert (
        'nightly-bot <span class="muted">(for owner)</span> <span class="badge">AI</span>' in token
    )
    assert 'owner <span class="muted">via personal token</span>' in own
    assert "Owner's agent" not in page.text
    assert "owner's agent" not in page.text
