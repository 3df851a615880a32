"""The board in a real browser: drag and drop, the keyboard path, moves saved without a reload,
the conflict view when an agent changes the task meanwhile, a waiting hand-in, the phone's
one-column tabs, quick create with an assignee and a move from the bulk bar (cards carry no
controls of their own).

Screenshots land in test-output/screenshots/board/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support import axe
from tests.support.browser_pages import (  # the browser fixtures and the agent's helpers
    agent_call,
    as_agent,
    browser,
    change_over_mcp,
    hand_in,
    page,
    read_over_mcp,
    shot,
    sign_in,
    world,
)

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name


def make_tasks(url: str, world: dict[str, str], titles: list[tuple[str, str]]) -> list[str]:
    """The agent creates tasks (title, column) for the seat Coder; their keys in order."""

    async def work(agent: Any) -> list[str]:
        keys = []
        for n, (title, status) in enumerate(titles):
            made = await agent_call(
                agent,
                "create_task",
                {
                    "projectId": "CRW",
                    "workspaceId": None,
                    "idempotencyKey": f"board-{n}",
                    "title": title,
                    "status": status,
                    "assigneeId": world["seat"],
                },
            )
            keys.append(str(made["task"]["key"]))
        return keys

    return as_agent(url, world["secret"], work)


def column_keys(page: Any, status: str) -> list[str]:
    return list(
        page.eval_on_selector_all(
            f'.tiles[data-column="{status}"] .tile', "els => els.map(e => e.dataset.key)"
        )
    )


def box(page: Any, selector: str) -> dict[str, float]:
    """Where an element is now (a live refresh may be swapping the board in that moment)."""
    from playwright.sync_api import Error  # noqa: PLC0415 - only with a browser

    for _ in range(50):
        try:  # a refresh may swap the tile out between finding it and measuring it
            page.locator(selector).scroll_into_view_if_needed(timeout=2_000)
            found = page.locator(selector).bounding_box()
        except Error:
            found = None
        if found is not None:
            return dict(found)
        page.wait_for_timeout(100)
    raise AssertionError(f"{selector} never showed")


def drag(page: Any, source: str, target: str) -> None:
    """A mouse drag from the middle of one element to the middle of another, in steps."""
    start = box(page, source)
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + 8)
    page.mouse.down()
    end = box(page, target)
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=12)
    # SortableJS's pointer fallback checks where the card hovers on a 50 ms timer: rest over
    # the target as a hand does, so a busy machine does not drop it where it passed through.
    page.wait_for_timeout(150)
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2 + 2, steps=2)
    page.wait_for_timeout(150)
    page.mouse.up()


def saved(page: Any, key: str) -> None:
    """Wait until the move of `key` is saved (the live status says so)."""
    page.wait_for_function(
        "key => document.getElementById('board-status').textContent.indexOf(key) >= 0 "
        "&& !document.querySelector('[aria-busy=true]')",
        arg=key,
    )


def said(page: Any, text: str) -> None:
    """Wait until the board's live status (what a screen reader hears) says `text`."""
    page.wait_for_function(
        "text => document.getElementById('board-status').textContent.indexOf(text) >= 0", arg=text
    )


def test_cards_drag_between_and_within_columns_and_move_with_the_keyboard(
    page: Any, url: str, world: dict[str, str]
) -> None:
    a, b, c = make_tasks(
        url, world, [("Alpha", "backlog"), ("Bravo", "backlog"), ("Charlie", "backlog")]
    )
    sign_in(page, world["owner"])
    page.goto("/p/CRW/board")
    page.wait_for_selector(".tiles[data-sortable]")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280  # all seven columns fit at 1280
    assert column_keys(page, "backlog") == [a, b, c]
    loads = page.evaluate("performance.getEntriesByType('navigation').length")
    page.evaluate("window.__same_page = true")

    # Drag Alpha to In progress, and back into Backlog below Charlie.
    drag(page, f"#tile-{a}", '.tiles[data-column="in_progress"]')
    saved(page, a)
    assert a in column_keys(page, "in_progress")
    assert read_over_mcp(url, world["secret"], a)["status"] == "in_progress"
    shot(page, "board/dragged")
    drag(page, f"#tile-{a}", f"#tile-{c}")
    saved(page, a)
    assert read_over_mcp(url, world["secret"], a)["status"] == "backlog"

    # Within the column: pick Charlie up with the keyboard, move it to the top, drop it.
    page.focus(f"#tile-{c}")
    page.keyboard.press("Space")
    said(page, f"Picked up {c} in Backlog, ")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Space")
    saved(page, c)
    assert page.evaluate("document.activeElement.id") == f"tile-{c}"  # focus stays on the card
    # And Bravo one column right with the keyboard, then Escape on a second pick-up.
    page.focus(f"#tile-{b}")
    page.keyboard.press("Space")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    saved(page, b)
    page.focus(f"#tile-{b}")
    page.keyboard.press("Space")
    page.keyboard.press("ArrowRight")
    said(page, "In progress, ")
    page.keyboard.press("Escape")
    said(page, f"Move cancelled; {b} is back in Ready for AI")
    assert b in column_keys(page, "ready_for_ai")
    assert page.evaluate("window.__same_page") is True  # no reload for any of it
    assert page.evaluate("performance.getEntriesByType('navigation').length") == loads
    order_before_reload = column_keys(page, "backlog")

    page.reload()
    page.wait_for_selector(".tiles[data-sortable]")
    assert column_keys(page, "backlog") == order_before_reload
    assert order_before_reload[0] == c
    assert set(order_before_reload) >= {a, c}
    assert order_before_reload.index(c) < order_before_reload.index(a)
    assert b in column_keys(page, "ready_for_ai")
    assert read_over_mcp(url, world["secret"], b)["status"] == "ready_for_ai"
    shot(page, "board/after-reload")


def test_an_agents_change_during_a_drag_shows_what_changed_and_the_move_can_be_retried(
    page: Any, url: str, world: dict[str, str]
) -> None:
    (a,) = make_tasks(url, world, [("Delta", "backlog")])
    sign_in(page, world["owner"])
    page.goto("/p/CRW/board")
    page.wait_for_selector(".tiles[data-sortable]")
    # The agent moves the task to In progress after the board was drawn.
    # Live refresh is held off until the drag itself clears the flag (its own busy count), so
    # the board still shows the task where it was when the person picks it up.
    page.evaluate("document.body.setAttribute('data-busy', '1')")
    change_over_mcp(url, world["secret"], a, {"status": "in_progress", "priority": "high"})
    drag(page, f"#tile-{a}", '.tiles[data-column="review"]')
    dialog = page.locator("#move-dialog")
    dialog.wait_for(state="visible")
    text = dialog.inner_text()
    assert f"{a} changed meanwhile" in text
    assert "Column: Backlog → In progress" in text
    assert "Priority: medium → high" in text
    shot(page, "board/conflict")
    assert not (found := axe.violations(page)), axe.describe(found)
    dialog.get_by_role("button", name="Move it to Review anyway").click()
    saved(page, a)
    assert read_over_mcp(url, world["secret"], a)["status"] == "review"
    assert a in column_keys(page, "review")


def test_a_move_to_approved_with_a_waiting_hand_in_asks_and_can_approve_it(
    page: Any, url: str, world: dict[str, str]
) -> None:
    hand_in(url, world["secret"], world["task"], "board-hand-in", "Fixed the redirect.")
    sign_in(page, world["owner"])
    page.goto("/p/CRW/board")
    page.wait_for_selector(".tiles[data-sortable]")
    key = "CRW-1"
    assert key in column_keys(page, "review")
    drag(page, f"#tile-{key}", '.tiles[data-column="approved"]')
    dialog = page.locator("#move-dialog")
    dialog.wait_for(state="visible")
    assert "waits for review" in dialog.inner_text()
    assert key in column_keys(page, "review")  # not moved while the person decides
    shot(page, "board/hand-in-waits")
    assert not (found := axe.violations(page)), axe.describe(found)
    dialog.get_by_role("button", name="Cancel").click()
    assert read_over_mcp(url, world["secret"], key)["status"] == "review"

    drag(page, f"#tile-{key}", '.tiles[data-column="approved"]')
    dialog.wait_for(state="visible")
    dialog.get_by_role("button", name=re.compile("Approve the hand-in")).click()
    saved(page, key)
    assert read_over_mcp(url, world["secret"], key)["status"] == "approved"
    page.goto("/p/CRW/inbox")
    assert "Result for" not in page.inner_text("[data-live-region]")  # no longer waiting


def test_on_a_phone_one_column_shows_at_a_time_and_quick_create_takes_an_assignee(
    page: Any, url: str, world: dict[str, str]
) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, world["owner"])
    page.goto("/p/CRW/board")
    page.click(".board-new > summary")  # quick create sits behind a button, as on a desktop
    page.fill("#new-title", "Write the release notes")
    page.select_option("#new-status", "ready_for_ai")
    page.select_option("#new-assignee", label="Coder (AI)")
    page.click("form[aria-label='New task'] button[type=submit]")
    page.wait_for_selector(".tiles[data-sortable]")
    assert "Created CRW-2" in page.inner_text(".flash")
    page.click('.column-index a[data-tab="ready_for_ai"]')
    visible = page.eval_on_selector_all(
        ".column", "els => els.filter(e => !e.hidden).map(e => e.dataset.status)"
    )
    assert visible == ["ready_for_ai"]
    tile = page.locator("#tile-CRW-2")
    assert "Coder" in tile.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "board/phone")
    assert not (found := axe.violations(page)), axe.describe(found)
    # Cards carry no controls of their own: Select mode shows their boxes, and the bar that
    # appears moves the chosen card without a reload; the column stays chosen.
    assert tile.locator("select, button").count() == 0
    page.click("[data-select-mode]")
    tile.locator(".pick").check()
    bar = page.locator("#bulk-form")
    bar.wait_for(state="visible")
    assert "1 card chosen: CRW-2" in bar.inner_text()
    bar.locator("#bulk-status").select_option("in_progress")
    bar.get_by_role("button", name="Apply").click()
    page.wait_for_function(
        "() => document.querySelector('#bulk-form [data-bulk-said]').textContent"
        ".indexOf('Saved 1 of 1') >= 0"
    )
    assert read_over_mcp(url, world["secret"], "CRW-2")["status"] == "in_progress"
    page.reload()
    visible = page.eval_on_selector_all(
        ".column", "els => els.filter(e => !e.hidden).map(e => e.dataset.status)"
    )
    assert visible == ["ready_for_ai"]  # remembered for the visit
