"""The calm board in a real browser, at 1280x860 and 390x844, light and dark: signal marks on
the cards, filters, sort and grouping without a reload, a bulk move of several cards, a saved
view that survives a reload, a refused move's fix in the card, and the phone's first card on
the first screen.

Screenshots land in test-output/screenshots/board/; the phone's measurements in
test-output/board-phone.json.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from crewboard.domain.identity.records import Actor
from crewboard.services.board import claims, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.e2e.test_web_browser_board import column_keys, drag, saved
from tests.support import axe
from tests.support.browser_pages import (  # the browser fixtures and the agent's helpers
    browser,
    hand_in,
    page,
    read_over_mcp,
    shot,
    sign_in,
    world,
)

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name

SETTINGS = [(1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")]
PHONE_HEADER = 64  # the header's height on a phone once the pages work lands (issue 38)
MEASURED = Path("test-output/board-phone.json")


def owner_of(db: Database, world: dict[str, str]) -> Actor:
    user = db.read(lambda uow: uow.users.get_by_email(world["owner"]))
    return person_actor(user)


def seed(db: Database, url: str, world: dict[str, str]) -> None:
    """CRW-1 (the world's task) handed in; CRW-2 blocks CRW-3; CRW-4 overdue; CRW-5 held by
    the agent; CRW-6 and CRW-7 nobody's, in Backlog."""
    hand_in(url, world["secret"], world["task"], "calm-hand-in", "Fixed the redirect.")
    me = owner_of(db, world)

    def new(title: str, **fields: Any) -> str:
        made = tasks.create_task(
            db, me, project="CRW", workspace_id=None, idempotency_key=f"calm-{title}",
            title=title, **fields,
        )  # fmt: skip
        return str(made.body["task"]["id"])

    blocker = new("Pick the icon set")
    new("Draw the empty states", blocked_by_task_ids=[blocker])
    yesterday = (db.clock.now() - timedelta(days=2)).date().isoformat()
    new("Send the invoice", due_date=yesterday, priority="high")
    new("Port the sync job", status="ready_for_ai", assignee_id=world["seat"])
    new("Write the changelog", tags=["docs"])
    new("Answer the survey", tags=["docs"], priority="low")
    agent = tokens.authenticate_token(db, world["secret"])
    claims.claim_task(db, agent, task="CRW-5", workspace_id=None, lease_seconds=3600)


def open_board(page: Any, width: int, scheme: str, path: str = "/p/CRW/board") -> None:
    page.set_viewport_size({"width": width, "height": 860 if width > 400 else 844})
    page.emulate_media(color_scheme=scheme)
    page.goto(path)
    page.wait_for_selector(".tiles[data-sortable]")


def start(
    page: Any, url: str, world: dict[str, str], db: Database, setting: tuple[int, str]
) -> tuple[int, str]:
    """The seeded project's board, signed in, from its first column, at `setting`."""
    seed(db, url, world)
    sign_in(page, world["owner"])
    page.evaluate("sessionStorage.clear()")
    open_board(page, *setting)
    return setting


def show_column(page: Any, width: int, status: str) -> None:
    if width < 800:
        page.click(f'.column-index a[data-tab="{status}"]')


def navigations(page: Any) -> int:
    return int(page.evaluate("performance.getEntriesByType('navigation').length"))


def measure_first_card(page: Any, scheme: str) -> None:
    """The phone's first card is on the first screen with a header of at most 64 px (the
    pages work shrinks it; until then its height is taken off and 64 put back)."""
    show_column(page, 390, "backlog")
    page.evaluate("window.scrollTo(0, 0)")
    where = page.evaluate(
        """() => {
          const header = document.querySelector('header.top').getBoundingClientRect().height;
          const flash = document.querySelector('.flash');
          const tile = document.querySelector('.column:not([hidden]) .tile').getBoundingClientRect();
          return {header, flash: flash ? flash.getBoundingClientRect().height : 0,
                  top: tile.top, bottom: tile.bottom};
        }"""
    )
    header = min(where["header"], PHONE_HEADER)
    first_bottom = where["bottom"] - where["header"] + header
    measured = {**where, "bottomWithHeader64": first_bottom, "scheme": scheme}
    MEASURED.parent.mkdir(parents=True, exist_ok=True)
    MEASURED.write_text(json.dumps(measured, indent=1))
    assert first_bottom <= 844, measured


def filter_in_place(page: Any, width: int, name: str) -> None:
    """Filters, sort and grouping change the board in place; the address follows; no load."""
    before = navigations(page)
    page.evaluate("window.__same_page = true")
    if width < 800:
        page.click(".board-filters > summary")
    else:  # "/" opens the filters and focuses their text field
        page.locator("h1").click()
        page.keyboard.press("/")
        assert page.evaluate("document.activeElement.id") == "board-q"
    page.fill("#board-q", "changelog")
    page.wait_for_function("() => !document.getElementById('tile-CRW-7')")
    show_column(page, width, "backlog")
    assert page.locator(".tile").count() == 1
    assert "q=changelog" in page.url
    page.fill("#board-q", "")  # each change swaps the board once its answer is in: the
    # address follows each swap, so wait for it before the next change
    page.wait_for_function("() => !location.search.includes('q=')")
    page.select_option("#board-group", "priority")
    page.wait_for_function("() => location.search.includes('group=priority')")
    page.select_option("#board-sort", "title")
    page.wait_for_function("() => location.search.includes('sort=title')")
    page.wait_for_selector(".group-head")
    show_column(page, width, "backlog")
    heads = page.locator('.tiles[data-column="backlog"] .group-head').all_inner_texts()
    assert [head.rsplit(" ", 1)[0] for head in heads] == [
        "High priority", "Medium priority", "Low priority",
    ]  # fmt: skip
    medium = page.eval_on_selector_all(
        '.tiles[data-column="backlog"] .tile[data-priority="medium"]',
        "els => els.map(e => e.dataset.title)",
    )
    assert medium == sorted(medium, key=str.lower)
    assert "group=priority" in page.url
    assert "sort=title" in page.url
    assert page.evaluate("window.__same_page") is True
    assert navigations(page) == before
    page.keyboard.press("Escape")
    shot(page, f"{name}-grouped")
    assert not (found := axe.violations(page)), axe.describe(found)


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0]}-{s[1]}")
def test_cards_show_signal_marks_and_filters_sort_and_group_without_a_reload(
    page: Any, url: str, world: dict[str, str], db: Database, setting: tuple[int, str]
) -> None:
    width, scheme = start(page, url, world, db, setting)
    name = f"board/calm-{width}-{scheme}"

    # The signals, each with words a screen reader reads.
    def mark(key: str, signal: str) -> str:
        return str(page.locator(f'#tile-{key} [data-signal="{signal}"]').inner_text())

    show_column(page, width, "review")
    assert "hand-in" in mark("CRW-1", "hand-in")
    assert "waits for review" in page.locator("#tile-CRW-1 .signals").text_content()
    show_column(page, width, "backlog")
    assert "blocked" in page.locator("#tile-CRW-3 .signals").text_content()
    assert "by 1 unfinished task" in page.locator("#tile-CRW-3 .signals").text_content()
    assert "Overdue" in page.locator("#tile-CRW-4").text_content()
    assert page.locator("#tile-CRW-2 .signals").count() == 0  # the blocker itself is calm
    if width < 800:
        shot(page, f"{name}-backlog")
    show_column(page, width, "ready_for_ai")
    assert "held by Coder until" in mark("CRW-5", "held")
    assert page.locator(".tile select, .tile button").count() == 0  # no per-card controls
    shot(page, name)
    assert not (found := axe.violations(page)), axe.describe(found)

    if width < 800:
        measure_first_card(page, scheme)

    filter_in_place(page, width, name)


def choose_backlog(page: Any, width: int) -> int:
    """Choose Backlog cards: three in Select mode on a phone, the whole column with a click
    and a shift-click on a desktop. How many were chosen."""
    if width < 800:
        page.click("[data-select-mode]")
        for key in ("CRW-2", "CRW-3", "CRW-6"):
            page.locator(f"#tile-{key} .pick").check()
        return 3
    page.hover("#tile-CRW-2")
    page.locator("#tile-CRW-2 .pick").click()
    page.locator("#tile-CRW-7 .pick").click(modifiers=["Shift"])  # the range between
    return len(column_keys(page, "backlog"))


@pytest.mark.parametrize(
    "setting", [(1280, "light"), (390, "dark")], ids=lambda s: f"{s[0]}-{s[1]}"
)
def test_a_bulk_move_saves_several_cards_and_names_the_one_refused(
    page: Any, url: str, world: dict[str, str], db: Database, setting: tuple[int, str]
) -> None:
    width, scheme = start(page, url, world, db, setting)
    page.evaluate("window.__same_page = true")
    bar = page.locator("#bulk-form")
    assert bar.is_hidden()  # no bar until a card is chosen
    chosen = choose_backlog(page, width)
    bar.wait_for(state="visible")
    assert f"{chosen} cards chosen" in bar.inner_text()
    bar.locator("#bulk-status").select_option("in_progress")
    bar.locator("#bulk-assignee").select_option(label="Coder (AI)")
    bar.locator("#bulk-add-tags").fill("sprint")
    shot(page, f"board/bulk-{width}-{scheme}")
    assert not (found := axe.violations(page)), axe.describe(found)
    bar.get_by_role("button", name="Apply").click()
    page.wait_for_function(
        "() => document.querySelector('#bulk-form [data-bulk-said]').textContent"
        ".indexOf('Saved') >= 0"
    )
    assert f"Saved {chosen} of {chosen} cards" in bar.inner_text()
    for key in ("CRW-2", "CRW-3", "CRW-6"):
        task = read_over_mcp(url, world["secret"], key)
        assert (task["status"], task["assigneeId"]) == ("in_progress", world["seat"])
        assert "sprint" in task["tags"]
    page.wait_for_function(
        "() => document.querySelector('.tiles[data-column=\"in_progress\"] #tile-CRW-3')"
    )

    # A second change where one card cannot go: the refusal names it, the other is saved.
    show_column(page, width, "review")
    if width < 800:
        page.locator("#tile-CRW-1 .pick").check()
    else:  # the keyboard's way: X on a focused card
        page.focus("#tile-CRW-1")
        page.keyboard.press("x")
        assert page.locator("#tile-CRW-1 .pick").is_checked()
    show_column(page, width, "in_progress")
    page.locator("#tile-CRW-3 .pick").check()
    bar.locator("#bulk-status").select_option("done")
    bar.locator("#bulk-assignee").select_option("")
    bar.locator("#bulk-add-tags").fill("")
    bar.get_by_role("button", name="Apply").click()
    page.wait_for_function(
        "() => document.querySelector('#bulk-form [data-bulk-said]').textContent"
        ".indexOf('Saved 1 of 2') >= 0"
    )
    text = bar.inner_text()
    assert "CRW-1 was not changed" in text
    assert "hand-in" in text
    assert read_over_mcp(url, world["secret"], "CRW-3")["status"] == "done"
    assert read_over_mcp(url, world["secret"], "CRW-1")["status"] == "review"
    assert page.locator("#tile-CRW-1 .pick").is_checked()  # the refused stays chosen
    assert page.evaluate("window.__same_page") is True
    shot(page, f"board/bulk-refused-{width}-{scheme}")


@pytest.mark.parametrize(
    "setting", [(1280, "dark"), (390, "light")], ids=lambda s: f"{s[0]}-{s[1]}"
)
def test_a_saved_view_survives_a_reload_opens_and_is_deleted(
    page: Any, url: str, world: dict[str, str], db: Database, setting: tuple[int, str]
) -> None:
    width, scheme = setting
    seed(db, url, world)
    sign_in(page, world["owner"])
    open_board(page, width, scheme, "/p/CRW/board?tag=docs&group=priority")
    assert sorted(page.eval_on_selector_all(".tile", "els => els.map(e => e.dataset.key)")) == [
        "CRW-6", "CRW-7",
    ]  # fmt: skip
    page.click(".board-views > summary")
    page.fill("#view-name", "Docs work")
    page.get_by_role("button", name="Save view").click()
    page.wait_for_selector(".flash")
    assert "Saved the view “Docs work”" in page.inner_text(".flash")

    open_board(page, width, scheme)  # the plain board, later
    assert page.locator(".tile").count() > 2
    page.click(".board-views > summary")
    link = page.get_by_role("link", name="Docs work")
    shot(page, f"board/views-{width}-{scheme}")
    assert not (found := axe.violations(page)), axe.describe(found)
    link.click()
    page.wait_for_selector(".group-head")
    assert "tag=docs" in page.url
    assert "group=priority" in page.url
    assert page.locator(".tile").count() == 2
    page.click(".board-views > summary")
    assert page.get_by_role("link", name="Docs work").get_attribute("aria-current") == "true"
    page.get_by_role("button", name="Delete the view Docs work").click()
    page.wait_for_selector(".flash")
    page.click(".board-views > summary")
    assert page.get_by_role("link", name="Docs work").count() == 0


@pytest.mark.parametrize(
    "setting", [(1280, "light"), (390, "dark")], ids=lambda s: f"{s[0]}-{s[1]}"
)
def test_a_move_refused_for_no_assignee_offers_a_picker_in_the_card_and_moves_it(
    page: Any, url: str, world: dict[str, str], db: Database, setting: tuple[int, str]
) -> None:
    width, scheme = start(page, url, world, db, setting)
    page.evaluate("window.__same_page = true")
    if width < 800:  # the keyboard path: pick up, one column right twice, drop
        page.focus("#tile-CRW-6")
        page.keyboard.press("Space")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Space")
    else:
        drag(page, "#tile-CRW-6", '.tiles[data-column="in_progress"]')
    fix = page.locator("#tile-CRW-6 .fix")
    fix.wait_for(state="visible")  # on a phone its column shows again
    assert page.evaluate("document.activeElement.id") == "fix-assignee-CRW-6"
    assert "CRW-6" in column_keys(page, "backlog")  # back in its column until fixed
    assert "needs an assignee to move to In progress" in fix.inner_text()
    assert page.locator("#move-dialog").is_hidden()  # no dead-end dialog
    shot(page, f"board/fix-{width}-{scheme}")
    assert not (found := axe.violations(page)), axe.describe(found)
    fix.get_by_label("Assignee for CRW-6").select_option(label="Coder (AI)")
    fix.get_by_role("button", name="Assign and move to In progress").click()
    saved(page, "CRW-6")
    task = read_over_mcp(url, world["secret"], "CRW-6")
    assert (task["status"], task["assigneeId"]) == ("in_progress", world["seat"])
    assert "CRW-6" in column_keys(page, "in_progress")
    assert page.locator("#tile-CRW-6 .fix").count() == 0
    assert page.evaluate("window.__same_page") is True
