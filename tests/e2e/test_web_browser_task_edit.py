"""Task editing in a real browser (Debian's Chromium through Playwright) at desktop and phone
widths: the assignee and priority change, the history says from → to, a conflicting edit over
MCP keeps what the person typed. Screenshots land in test-output/screenshots/task-edit/."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.browser import SCREENSHOTS
from tests.support.browser_pages import (  # the browser fixtures and the agent's helpers
    browser,
    change_over_mcp,
    page,
    read_over_mcp,
    shot,
    sign_in,
    world,
)

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name
WIDTHS = (1280, 390)
SAVE = "#h-edit ~ form button[type=submit]"


def card_shot(page: Any, heading: str, name: str) -> None:
    """A screenshot of the card under heading `#heading` alone (a full page at 390 px is tall)."""
    card = page.locator(f"section:has(> #{heading}), .card:has(> #{heading})")
    card.screenshot(path=str(SCREENSHOTS / f"task-edit/{name}.png"))


def fits(page: Any, width: int) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{page.url} is {wide} px wide at {width}"


@pytest.mark.parametrize("width", WIDTHS)
def test_a_person_changes_the_assignee_and_priority_and_reads_the_history_line(
    page: Any, url: str, world: dict[str, str], width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 860})
    sign_in(page, world["owner"])
    page.goto("/p/CRW/tasks/CRW-1")
    fits(page, width)
    page.click("#task-edit > summary")  # the form is closed until asked for
    assert page.input_value("#edit-assignee") == world["seat"]
    page.select_option("#edit-assignee", label="owner (you)")
    page.select_option("#edit-priority", "high")
    page.click(SAVE)
    page.wait_for_url(re.compile(r".*/p/CRW/tasks/CRW-1$"))
    assert page.locator(".flash").inner_text() == "Saved CRW-1 (assignee, priority)."
    history = page.locator("#h-timeline ~ ol").inner_text()
    assert "Assignee: Coder → owner" in history
    assert "Priority: medium → high" in history
    fits(page, width)
    shot(page, f"task-edit/task-{width}")
    card_shot(page, "h-timeline", f"history-{width}")
    saved = read_over_mcp(url, world["secret"], "CRW-1")
    assert (saved["priority"], saved["assigneeType"]) == ("high", "human")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_conflicting_edit_keeps_the_typed_text_and_shows_the_other_change(
    page: Any, url: str, world: dict[str, str], width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 860})
    sign_in(page, world["owner"])
    page.goto("/p/CRW/tasks/CRW-1")
    page.click("#task-edit > summary")  # the form is closed until asked for
    typed = "My plan\nin two lines"
    page.fill("#edit-description", typed)
    page.select_option("#edit-type", "development")
    change_over_mcp(url, world["secret"], "CRW-1", {"priority": "low", "title": "Agent's title"})
    page.click(SAVE)
    page.wait_for_load_state()
    assert "Not saved" in page.locator(".flash").inner_text()
    conflict = page.locator(".conflict").inner_text()
    assert "Agent's title" in conflict
    assert page.input_value("#edit-description") == typed
    assert page.input_value("#edit-type") == "development"
    assert page.input_value("#edit-priority") == "low"  # theirs, where the person changed nothing
    fits(page, width)
    shot(page, f"task-edit/conflict-{width}")
    card_shot(page, "h-edit", f"conflict-form-{width}")
    page.click(SAVE)
    page.wait_for_url(re.compile(r".*/p/CRW/tasks/CRW-1$"))
    saved = read_over_mcp(url, world["secret"], "CRW-1")
    assert (saved["description"], saved["type"], saved["title"]) == (
        typed,
        "development",
        "Agent's title",
    )
    assert "Type: General → Development" in page.locator("#h-timeline ~ ol").inner_text()


def test_opening_the_edit_form_leaves_the_focus_where_the_person_already_types(
    page: Any, world: dict[str, str]
) -> None:
    """The form's toggle event comes a moment after it opens; a field focused (and typed in)
    in that moment keeps the focus and the text, where the first field used to take them over
    (a full run once saw the typed description land in the title)."""
    sign_in(page, world["owner"])
    page.goto("/p/CRW/tasks/CRW-1")
    page.evaluate(
        """() => {
          document.getElementById('task-edit').open = true;  // the toggle event is queued
          document.getElementById('edit-description').focus();
        }"""
    )
    page.keyboard.type("typed at once")
    page.wait_for_timeout(100)  # long past the queued toggle event
    assert page.evaluate("document.activeElement.id") == "edit-description"
    assert page.input_value("#edit-description") == "typed at once"
    assert page.input_value("#edit-title") != "typed at once"
    page.click("#task-edit > summary")  # closed, and opened again by its button:
    page.click("#task-edit > summary")
    page.wait_for_function("document.activeElement.id === 'edit-title'")  # the first field
