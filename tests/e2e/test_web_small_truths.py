"""Smaller truths of issue 38, over real HTTP: a one-zone project's handoffs say something true
("UTC hands over to UTC" no more), zones are shown by place and offset and chosen from such a
list, one's own saved handoff is changed beside it (not under the other shift's heading), the
spec list's hint and its links are two texts, not "…they read.Trash bin"."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime

import httpx2
import pytest

from crewboard.contract.projects import present
from crewboard.domain.identity.records import User
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from crewboard.web.zones import offset_words, zone_choices, zone_label
from tests.support.factories import make_project, make_user
from tests.support.web import post_form, sign_in

DAY = "2026-03-02"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    with closing(sign_in(url, owner.email)) as signed_in:
        yield signed_in


def words(answer: httpx2.Response) -> str:
    assert answer.status_code == 200, answer.text[:500]
    main = answer.text.split("<main", 1)[-1]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", main)).split())


def section_of(page: str, heading_id: str) -> str:
    start = page.index(f'id="{heading_id}"')
    end = page.find("</section>", start)
    return page[start:end]


def test_zones_read_as_places_with_their_offset() -> None:
    winter = datetime(2026, 1, 15, tzinfo=UTC)
    assert zone_label("Europe/Berlin", winter) == "Berlin (UTC+1)"
    assert zone_label("America/New_York", winter) == "New York (UTC−5)"
    assert zone_label("Asia/Kolkata", winter) == "Kolkata (UTC+5:30)"
    assert zone_label("America/Argentina/Buenos_Aires", winter) == "Buenos Aires (UTC−3)"
    assert zone_label("UTC") == "UTC"
    assert zone_label("Not/AZone") == "Not/AZone"
    assert offset_words(None) == "UTC"
    choices = zone_choices(["Etc/GMT+5"], winter)
    assert choices[0][0] == "Etc/GMT+5"  # a project's own zone is kept among the choices
    assert ("Europe/Berlin", "Berlin (UTC+1)") in choices
    labels = [label for _, label in choices]
    assert len(labels) == len(set(labels))  # no two choices read the same


def test_a_one_zone_project_says_so_instead_of_utc_hands_over_to_utc(
    client: httpx2.Client,
) -> None:
    shown = words(client.get(f"/p/CRW/handoffs?date={DAY}"))
    assert "UTC hands over to UTC" not in shown
    assert "UTC to UTC" not in shown
    assert "Handoffs in UTC" in shown
    assert "Both of this project's shifts work in UTC" in shown
    assert "set each shift's time zone in the project settings" in shown
    page = client.get(f"/p/CRW/handoffs?date={DAY}").text
    assert 'id="w-shift"' not in page  # no choice of one shift
    assert 'name="shift" value="a"' in page


def test_zones_are_chosen_by_place_and_shown_so_on_the_handoffs_page(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    form = client.get("/p/CRW/settings/project").text
    berlin = zone_label("Europe/Berlin")
    assert f'<option value="Europe/Berlin">{berlin}</option>' in form
    assert re.search(r'<option value="UTC" selected>UTC</option>', form)
    answer = post_form(
        client, "/p/CRW/settings/project",
        {"shift_time_zone_a": "Europe/Berlin", "shift_time_zone_b": "America/New_York",
         "handoff_settings": "1", "next": "/p/CRW/settings/project"},
    )  # fmt: skip
    assert answer.status_code == 303
    project = present.describe_project(db, person_actor(owner), "CRW")["project"]
    assert project["shiftTimeZones"] == {"a": "Europe/Berlin", "b": "America/New_York"}
    shown = words(client.get(f"/p/CRW/handoffs?date={DAY}"))
    assert f"{berlin} hands over to {zone_label('America/New_York')}" in shown
    assert "Europe/Berlin" not in shown.split("Write your handoff")[0]


def test_a_saved_handoffs_change_form_sits_under_its_own_shift(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    present.update_project(
        db, person_actor(owner), project="CRW", workspace_id=None,
        shift_time_zone_a="Europe/Berlin", shift_time_zone_b="America/New_York",
    )  # fmt: skip
    saved = post_form(
        client, "/p/CRW/handoffs",
        {"date": DAY, "shift": "a", "completed": "Shipped.", "in_progress": "", "blockers": "",
         "next_steps": "", "linked_tasks": ""},
    )  # fmt: skip
    assert saved.status_code == 303
    page = client.get(f"/p/CRW/handoffs?date={DAY}").text
    mine = section_of(page, "shift-1")  # Berlin hands over to New York: the shift written
    assert "Change your handoff" in mine
    assert "Shipped." in mine
    assert "Change your handoff" not in section_of(page, "shift-2")
    assert "Write your handoff" not in page


def test_the_spec_lists_hint_and_its_links_are_two_texts(client: httpx2.Client) -> None:
    page = client.get("/p/CRW/specs").text
    assert "from the version they read.</p>" in page
    assert "they read.Trash bin" not in words(client.get("/p/CRW/specs"))
    assert "restored.</p>" in client.get("/p/CRW/specs?trashed=1").text


def test_utc_comes_first_among_the_choices() -> None:
    assert zone_choices()[0] == ("UTC", "UTC")
