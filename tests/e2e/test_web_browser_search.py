"""Search from anywhere in a real browser: Ctrl-K (⌘-K) opens the dialog on any page, results
show as you type, arrow keys move through them, Enter opens one, Escape closes and focus goes
back; the search page works as a plain form. At 1280 and 390 px, nothing wider than the window.

Screenshots land in test-output/screenshots/search/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support import axe
from tests.support.browser_pages import (  # the browser fixtures and the agent's helpers
    XSS,
    browser,
    hand_in,
    page,
    shot,
    sign_in,
    world,
)

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name

ACTIVE_HREF = "document.activeElement && document.activeElement.getAttribute('href')"


def fits(page: Any, width: int) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{page.url} is {wide} px wide at {width}"


def counted(page: Any, text: str) -> None:
    """Wait until the dialog's announced count says `text`."""
    page.wait_for_function(
        "text => document.getElementById('search-dialog-count').textContent.indexOf(text) >= 0",
        arg=text,
    )


@pytest.mark.parametrize(("width", "keys"), [(1280, "Control+k"), (390, "Meta+k")])
def test_the_shortcut_opens_search_arrows_move_and_enter_lands_on_the_item(
    page: Any, url: str, world: dict[str, str], width: int, keys: str
) -> None:
    hand_in(url, world["secret"], world["task"], "search-1", f"Sessions stay in Redis.\n\n{XSS}")
    sign_in(page, world["owner"])
    page.set_viewport_size({"width": width, "height": 860})
    page.goto("/p/CRW/board")
    brand = page.locator("header a.brand")  # in the header's row at every width
    brand.focus()

    page.keyboard.press(keys)
    dialog = page.get_by_role("dialog", name="Search CRW")
    assert dialog.is_visible()
    assert page.evaluate("document.activeElement.id") == "search-dialog-q"
    page.keyboard.type("redis")
    counted(page, "2 results for “redis”: 1 hand-in, 1 memory record.")
    assert dialog.locator("mark").first.inner_text().lower() == "redis"
    assert page.evaluate("window.__xss") is None  # the agent's markup stayed text
    shot(page, f"search/dialog-{width}")
    assert not (found := axe.violations(page)), axe.describe(found)
    fits(page, width)

    page.keyboard.press("ArrowDown")
    assert page.evaluate(ACTIVE_HREF).startswith("/p/CRW/inbox/drafts/drf_")
    page.keyboard.press("ArrowDown")
    record = f"/p/CRW/memory/records/{world['record']}"
    assert page.evaluate(ACTIVE_HREF) == record
    page.keyboard.press("ArrowDown")  # the last result stays chosen
    assert page.evaluate(ACTIVE_HREF) == record
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    assert page.evaluate("document.activeElement.id") == "search-dialog-q"

    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    assert page.evaluate("document.activeElement.classList.contains('brand')")

    page.keyboard.press(keys)  # open again: the words and their results are still there
    counted(page, "2 results")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(re.escape(record) + "$"))
    assert page.locator("h1").inner_text() == "Sessions live in Redis"


def test_typing_more_narrows_the_results_and_enter_in_the_box_opens_the_search_page(
    page: Any, url: str, world: dict[str, str]
) -> None:
    sign_in(page, world["owner"])
    page.goto("/p/CRW/memory")
    page.locator("[data-search-open]").click()  # the header's Search link opens the dialog
    page.keyboard.type("login")
    counted(page, "2 results for “login”: 1 task, 1 memory record.")
    page.keyboard.type(" loops")
    counted(page, "1 result for “login loops”: 1 task.")
    links = page.locator("#search-dialog-results a[data-result]")
    assert links.count() == 1
    assert links.first.get_attribute("href") == "/p/CRW/tasks/CRW-1"
    page.keyboard.type(" xylophone")
    counted(page, "Nothing in CRW matches “login loops xylophone”.")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/p/CRW/search\?q=login\+loops\+xylophone$"))
    assert page.locator("#search-q").input_value() == "login loops xylophone"


@pytest.mark.parametrize("width", [1280, 390])
def test_the_search_page_works_as_a_plain_form_and_fits_the_window(
    page: Any, url: str, world: dict[str, str], width: int
) -> None:
    hand_in(url, world["secret"], world["task"], "search-2", "Sessions stay in Redis.")
    sign_in(page, world["owner"])
    page.set_viewport_size({"width": width, "height": 860})
    page.goto("/p/CRW/search")
    assert "Type one or more words" in page.locator("#search-results").inner_text()

    page.fill("#search-q", "redis")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/p/CRW/search\?q=redis$"))
    results = page.locator("#search-results a[data-result]")
    assert results.count() == 2  # the hand-in, the record
    shot(page, f"search/page-{width}")
    fits(page, width)

    page.fill("#search-q", "x" * 201)
    page.keyboard.press("Enter")
    alert = page.get_by_role("alert")
    assert "Search words: at most 200 characters" in alert.inner_text()
    assert page.locator("#search-q").input_value() == "x" * 201
    fits(page, width)
