"""The week and the activity page in a real browser: seven columns at 1280 px and a stacked list
of days at 390 px, today and overdue marked, the zone remembered across visits (and the
device's own zone offered); activity filtered, grouped by day, an agent shown as its seat.
Nothing is wider than the window.

Screenshots land in test-output/screenshots/week-activity/.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from crewboard.domain.clock import ManualClock
from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.browser_pages import (  # the browser fixtures and the agent's helpers
    LIVE,
    LONG,
    agent_call,
    as_agent,
    browser,
    hand_in,
    page,
    shot,
    sign_in,
    world,
)

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name


def fits(page: Any) -> None:
    wide, window = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert wide <= window, f"{page.url} is {wide} px wide in a {window} px window"


def plan_the_week(db: Database, world: dict[str, str], clock: ManualClock) -> None:
    """Tasks due on Monday (open and done), Wednesday and Sunday, one with a long unbroken
    title; then the clock moves on to Wednesday, so Monday's open task is overdue."""
    owner = db.read(lambda uow: uow.users.get_by_email(world["owner"]))
    assert owner is not None
    for title, due, status in (
        ("Write the release notes", "2026-03-02", "backlog"),
        ("Tag the release", "2026-03-02", "done"),
        (f"Check {LONG}", "2026-03-04", "review"),
        ("Plan next week", "2026-03-08", "backlog"),
    ):
        tasks.create_task(
            db,
            person_actor(owner),
            project="CRW",
            workspace_id=None,
            idempotency_key=None,
            title=title,
            due_date=due,
            status=status,
        )
    clock.advance(timedelta(days=2))


@pytest.mark.parametrize("width", [1280, 390])
def test_the_week_is_a_grid_at_desktop_width_and_a_list_on_a_phone(
    page: Any, db: Database, world: dict[str, str], clock: ManualClock, width: int
) -> None:
    plan_the_week(db, world, clock)
    sign_in(page, world["owner"])
    page.set_viewport_size({"width": width, "height": 860})
    page.goto("/p/CRW/week")
    days = page.locator(".week-grid > li")
    assert days.count() == 7
    monday, tuesday = days.nth(0).bounding_box(), days.nth(1).bounding_box()
    if width == 1280:  # side by side
        assert abs(monday["y"] - tuesday["y"]) < 1
        assert tuesday["x"] > monday["x"] + monday["width"] - 1
    else:  # one under the other
        assert tuesday["y"] >= monday["y"] + monday["height"]
        assert abs(monday["x"] - tuesday["x"]) < 1
    today = page.locator(".week-grid > li[aria-current=date]")
    assert "Wednesday 04 March" in today.inner_text()
    assert "Today" in today.inner_text()
    overdue = page.locator(".week-grid li.overdue")
    assert overdue.count() == 1
    assert "Write the release notes" in overdue.inner_text()
    assert "overdue" in overdue.inner_text()
    assert "Done" in days.nth(0).inner_text()  # a label, not the API value
    shot(page, f"week-activity/week-{width}")
    fits(page)


def test_a_chosen_zone_is_remembered_and_the_devices_own_zone_is_offered(
    browser: Any, url: str, world: dict[str, str]
) -> None:
    context = browser.new_context(
        base_url=url, viewport={"width": 1280, "height": 860}, timezone_id="America/Sao_Paulo"
    )
    try:
        opened = context.new_page()
        opened.set_default_timeout(10_000)
        sign_in(opened, world["owner"])
        opened.goto("/p/CRW/week")
        opened.fill("#week-tz", "Asia/Tokyo")
        opened.click("form.filters button[type=submit]")
        opened.wait_for_url(re.compile(r".*tz=Asia%2FTokyo.*"))
        opened.goto("/p/CRW/week")  # no zone in the address: the remembered one
        assert opened.input_value("#week-tz") == "Asia/Tokyo"

        own = opened.get_by_role("button", name="Use this device's zone (America/Sao_Paulo)")
        own.click()
        opened.wait_for_url(re.compile(r".*tz=America%2FSao_Paulo.*"))
        assert opened.input_value("#week-tz") == "America/Sao_Paulo"
        opened.goto("/p/CRW/activity")
        assert "times in Sao Paulo (UTC−3)" in opened.inner_text("main")

        opened.goto("/p/CRW/week?tz=Atlantis/Capital")
        alert = opened.get_by_role("alert")
        assert "Time zone" in alert.inner_text()
        assert opened.input_value("#week-tz") == "Atlantis/Capital"
        assert opened.locator(".week-grid > li").count() == 7
        shot(opened, "week-activity/week-unknown-zone")
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_activity_is_filtered_grouped_and_shows_the_agent_as_its_seat(
    page: Any, url: str, world: dict[str, str], width: int
) -> None:
    hand_in(url, world["secret"], world["task"], f"week-activity-{width}", f"See {LONG}")
    sign_in(page, world["owner"])
    page.set_viewport_size({"width": width, "height": 860})
    page.goto("/p/CRW/activity")
    assert page.locator("[data-live-region]").count() == 1
    assert page.locator(".day-group h2").first.inner_text() == "Today"
    arguments = {"projectId": "CRW", "workspaceId": None, "idempotencyKey": f"live-{width}"}
    as_agent(
        url,
        world["secret"],
        lambda agent: agent_call(agent, "create_task", {**arguments, "title": "Arrived live"}),
    )
    page.locator("[data-live-region] [data-item]", has_text="Arrived live").wait_for(timeout=LIVE)
    shot(page, f"week-activity/activity-{width}")
    fits(page)

    page.select_option("#activity-kind", "hand_ins")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r".*kind=hand_ins.*"))
    rows = page.locator("[data-live-region] [data-item]")
    assert rows.count() == 1
    row = rows.first.inner_text()
    assert row.startswith("Coder (for owner) AI")  # the seat for its person, by the one rule
    assert "AI handed in" in row
    assert "Owner's agent" not in page.inner_text("main")
    shot(page, f"week-activity/activity-hand-ins-{width}")
    fits(page)
