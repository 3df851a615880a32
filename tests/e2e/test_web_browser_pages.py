"""Every page of the app in Debian's Chromium at 1280x860 and 390x844, light and dark, on one
served app with a populated project (tasks in every column, a hand-in, a proposal, a spec file,
a tasks.md, an artifact, a handoff with an action item, a spec session): no page is wider
than the window, the header is one row of the same height on every page (at most 64 px on a
phone), axe-core finds nothing serious or critical, and a full-page screenshot of each lands in
test-output/screenshots/pages/<page>-<width>-<scheme>.png. Then the task page: its forms closed
until asked for, Edit at the top, and single fields changed in place; the header's menus.

What it measured (page heights, header heights, the phone board's first card) is written to
test-output/pages-measurements.json.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from crewboard.config import Settings
from crewboard.domain.handoffs import Bodies
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.conftest import BACKENDS
from tests.e2e.test_web_browser import session_world, spec_world
from tests.support import axe, handoff_calls
from tests.support.browser import SCREENSHOTS
from tests.support.browser_pages import (
    LONG,
    agent_call,
    as_agent,
    browser,
    change_over_mcp,
    hand_in,
    read_over_mcp,
    shot,
)
from tests.support.factories import PASSWORD, make_user
from tests.support.oauth import module_database
from tests.support.review import review_world
from tests.support.server import free_port, running_server

pytestmark = pytest.mark.browser
__all__ = ["browser"]  # fixtures used by name
SIZES = {1280: 860, 390: 844}
# A hand-in as agents write them: a table, a long line of code, a long path, a long URL.
HAND_IN = (
    f"Fixed; see {LONG}\n\n| File | Change |\n|---|---|\n"
    "| `src/crewboard/web/pages/board/very_long_module_name_for_the_table.py` | "
    "rewrote the redirect after session expiry so it keeps the next parameter |\n\n"
    "```\n" + "redirect_to(next_url_after_session_expiry_with_a_long_name) " * 4 + "\n```\n"
)
HEADER_MAX = 64
MEASURED = SCREENSHOTS.parent / "pages-measurements.json"


@dataclass(frozen=True)
class Served:
    url: str
    owner: str
    secret: str  # the agent's token
    pages: dict[str, str]  # a short name → its path


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend, for the module: one served app per backend."""
    return str(request.param)


@pytest.fixture(scope="module")
def served(
    backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    with module_database(backend, request) as db:
        owner = make_user(db, "owner@example.com", is_owner=True)
        world = review_world(db, owner)
        settings = Settings(data_dir=tmp_path_factory.mktemp("pages"), port=free_port())
        with running_server(settings, db) as url:
            yield Served(url, world["owner"], world["secret"], _populate(url, db, world))


def _populate(url: str, db: Database, world: dict[str, str]) -> dict[str, str]:
    """Tasks in several columns, a hand-in, a proposal, spec files, an artifact, a handoff with
    an action item, a session; the paths of the pages that show them."""
    columns = ["backlog", "ready_for_ai", "in_progress", "in_progress", "review", "done"]

    async def work(agent: Any) -> str:
        for n, status in enumerate(columns):
            await agent_call(
                agent,
                "create_task",
                {
                    "projectId": "CRW",
                    "workspaceId": None,
                    "idempotencyKey": f"pages-task-{n}",
                    "title": f"Task {n}: tidy the {status.replace('_', ' ')} work"
                    + (f" {LONG}" if n == 0 else ""),
                    "status": status,
                    "assigneeId": world["seat"],
                    "tags": ["web", "layout"],
                },
            )
        arguments = {"projectId": "CRW", "workspaceId": None, "title": "Propose a dark theme"}
        return str((await agent_call(agent, "propose_task", arguments))["proposal"]["id"])

    proposal = as_agent(url, world["secret"], work)
    draft = hand_in(url, world["secret"], world["task"], "pages-1", HAND_IN)
    spec, tasks = spec_world(db, world["owner"])
    session = session_world(db, world["owner"])
    user = db.read(lambda uow: uow.users.get_by_email(world["owner"]))
    assert user is not None
    made = handoff_calls.create_handoff(
        db, person_actor(user), project="CRW", workspace_id=None,
        bodies=Bodies(f"Shipped the redirect fix. Next: {LONG}"), linked_task_ids=["CRW-1"],
    ).body  # fmt: skip
    handoff = str(made["handoff"]["id"])
    handoff_calls.create_handoff_action_item(
        db, person_actor(user), handoff_id=handoff, text="Check the redirect on staging",
        due_date="2026-03-04",
    )  # fmt: skip
    return {
        "inbox": "/p/CRW/inbox",
        "hand-in": f"/p/CRW/inbox/drafts/{draft['draft']['id']}",
        "proposal": f"/p/CRW/inbox/proposals/{proposal}",
        "board": "/p/CRW/board",
        "task": "/p/CRW/tasks/CRW-1",
        "memory": "/p/CRW/memory",
        "record": f"/p/CRW/memory/records/{world['record']}",
        "document": "/p/CRW/memory/documents/decisions",
        "specs": "/p/CRW/specs",
        "spec-file": f"/p/CRW/specs/files/{spec}",
        "spec-diff": f"/p/CRW/specs/files/{spec}?from=1&to=2",
        "spec-edit": f"/p/CRW/specs/files/{spec}/edit",
        "tasks-md": f"/p/CRW/specs/files/{tasks}",
        "specs-trash": "/p/CRW/specs?trashed=1",
        "attachments": "/p/CRW/attachments",
        "sessions": "/p/CRW/sessions",
        "session": f"/p/CRW/sessions/{session}",
        "artifacts": "/p/CRW/artifacts",
        "artifact": "/p/CRW/artifacts/mockup",
        "artifact-diff": "/p/CRW/artifacts/mockup?path=index.html&from=1&to=2",
        "artifact-preview": "/p/CRW/artifacts/mockup/preview",
        "handoffs": "/p/CRW/handoffs",
        "handoff": f"/p/CRW/handoffs/{handoff}",
        "state": "/p/CRW/state",
        "week": "/p/CRW/week",
        "team": "/p/CRW/team",
        "activity": "/p/CRW/activity",
        "search": "/p/CRW/search?q=redirect",
        "project-settings": "/p/CRW/settings/project",
        "session-settings": "/p/CRW/settings/spec-sessions",
        "notifications": "/notifications",
        "notification-settings": "/settings/notifications",
        "models": "/settings/models",
        "tokens": "/settings/tokens",
        "workspaces": "/settings/workspaces",
        "password": "/settings/password",
        "not-found": "/p/CRW/no-such-page",
    }


@pytest.fixture(scope="module")
def measured() -> Iterator[dict[str, Any]]:
    """What the walks measured, written out when the module ends."""
    found: dict[str, Any] = {}
    yield found
    MEASURED.parent.mkdir(parents=True, exist_ok=True)
    MEASURED.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n")


def open_signed_in(browser: Any, served: Served, width: int, scheme: str) -> Any:
    context = browser.new_context(
        base_url=served.url,
        viewport={"width": width, "height": SIZES[width]},
        color_scheme=scheme,
    )
    axe.preload(context)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto("/login")
    page.fill("#email", served.owner)
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/p/CRW/inbox$"))
    return page


HEADER = """() => {
  const top = document.querySelector("header.top");
  if (top === null) { return null; }  // a page of its own (an artifact's preview)
  const header = top.getBoundingClientRect();
  const shown = [...document.querySelectorAll("header.top a, header.top button, header.top select")]
    .filter(e => e.offsetParent !== null && !e.closest("[hidden]"))
    .map(e => e.getBoundingClientRect())
    .filter(r => r.width > 0);
  const rows = new Set(shown.map(r => Math.round(r.top + r.height / 2)));
  return { height: header.height, below: shown.filter(r => r.bottom > header.bottom + 1).length,
           centres: [...rows] };
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_every_page_fits_keeps_a_one_row_header_and_passes_axe(
    browser: Any, served: Served, measured: dict[str, Any], width: int, scheme: str
) -> None:
    page = open_signed_in(browser, served, width, scheme)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    wide: dict[str, int] = {}
    headers: dict[str, float] = {}
    rows: dict[str, list[int]] = {}
    refused: dict[str, str] = {}
    heights: dict[str, int] = {}
    for name, path in served.pages.items():
        page.goto(path)
        page.wait_for_load_state("load")
        shot(page, f"pages/{name}-{width}-{scheme}")
        wide[name] = page.evaluate("document.documentElement.scrollWidth")
        heights[name] = page.evaluate("document.documentElement.scrollHeight")
        header = page.evaluate(HEADER)
        if header is None:
            continue
        headers[name] = header["height"]
        if header["below"]:
            rows[name] = header["centres"]
        if found := axe.violations(page):
            refused[name] = axe.describe(found)
    page.goto(served.pages["board"])
    first_card = page.evaluate(
        "(() => { const t = document.querySelector('.tile'); "
        "return t ? t.getBoundingClientRect().top + window.scrollY : null; })()"
    )
    measured[f"{width}-{scheme}"] = {
        "header": headers,
        "page_height": {k: heights[k] for k in ("task", "board", "inbox", "hand-in", "handoffs")},
        "board_first_card_top": first_card,
        "widest": wide,
    }
    page.context.close()
    assert errors == []
    assert {k: v for k, v in wide.items() if v > width} == {}, "wider than the window"
    assert rows == {}, "a header item sits below the header"
    assert set(headers.values()) == {headers["inbox"]}, f"header heights differ: {headers}"
    assert headers["inbox"] <= HEADER_MAX
    assert refused == {}, "\n".join(f"{where}:\n{what}" for where, what in refused.items())
    if width == 390:  # the phone's first screen holds the board's first card
        assert first_card is not None
        assert first_card < SIZES[width], f"the first card starts at {first_card} px"


# --- the task page ----------------------------------------------------------------------------


def task_page(browser: Any, served: Served, width: int, key: str) -> Any:
    page = open_signed_in(browser, served, width, "light")
    page.goto(f"/p/CRW/tasks/{key}")
    return page


def submit(page: Any, selector: str) -> None:
    """Click a form's button (or press Enter in a field: `selector` then names the key) and wait
    for the page that answers (up to 30 s: a loaded CI machine answers slowly)."""
    with page.expect_navigation(timeout=30_000):
        if selector.startswith("key:"):
            page.keyboard.press(selector[4:])
        else:
            page.click(selector)


def has_focus(page: Any, element_id: str) -> None:
    """The element has the focus (an opened form moves it there when its toggle event runs)."""
    page.wait_for_function("id => document.activeElement.id === id", arg=element_id, timeout=3_000)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_task_pages_forms_stay_closed_until_asked_for_and_edit_is_at_the_top(
    browser: Any, served: Served, width: int
) -> None:
    page = task_page(browser, served, width, "CRW-3")
    for field in ("#edit-title", "#comment-content", "#subtask-add", "#inline-status-value"):
        assert not page.locator(field).is_visible(), f"{field} is open"
    edit = page.locator("#task-edit > summary")
    assert edit.bounding_box()["y"] < 260  # at the top, on the first screen at either width
    edit.click()
    has_focus(page, "edit-title")  # opening a form puts the cursor in its first field
    shot(page, f"task-page/edit-open-{width}")
    page.get_by_role("link", name="Comment").click()
    has_focus(page, "comment-content")
    assert page.locator("#comment-content").is_visible()
    page.keyboard.type("Looks right to me.")
    submit(page, "#comment-form button[type=submit]")
    assert page.locator(".flash").inner_text() == "Comment posted."
    assert "Looks right to me." in page.locator("#comments").inner_text()
    assert not page.locator("#comment-content").is_visible()
    assert not (found := axe.violations(page)), axe.describe(found)
    page.context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_single_fields_change_in_place_by_click_and_by_keyboard(
    browser: Any, served: Served, width: int
) -> None:
    key = "CRW-4" if width == 1280 else "CRW-5"
    page = task_page(browser, served, width, key)
    # A click on the status opens its form in place, the select focused.
    page.click("#inline-status > summary")
    has_focus(page, "inline-status-value")
    page.select_option("#inline-status-value", "blocked")
    shot(page, f"task-page/inline-status-{width}")
    submit(page, "#inline-status button[type=submit]")
    assert page.locator(".flash").inner_text() == f"Saved {key} (status)."
    assert "Blocked" in page.locator("#inline-status > summary").inner_text()
    # The keyboard: Enter on the priority opens it; Escape closes it unchanged.
    page.focus("#inline-priority > summary")
    page.keyboard.press("Enter")
    has_focus(page, "inline-priority-value")
    page.select_option("#inline-priority-value", "low")
    page.keyboard.press("Escape")
    assert not page.locator("#inline-priority-value").is_visible()
    assert page.evaluate("document.activeElement.parentElement.id") == "inline-priority"
    page.keyboard.press("Enter")
    has_focus(page, "inline-priority-value")
    assert page.input_value("#inline-priority-value") == "medium"  # the form was reset
    page.select_option("#inline-priority-value", "high")
    page.keyboard.press("Tab")  # to Save
    page.wait_for_function(
        "document.activeElement.matches('#inline-priority button[type=submit]')", timeout=3_000
    )
    submit(page, "key:Enter")
    assert page.locator(".flash").inner_text() == f"Saved {key} (priority)."
    for name, value in (("due_date", "2026-04-01"), ("tags", "web, urgent")):
        page.click(f"#inline-{name} > summary")
        page.fill(f"#inline-{name}-value", value)
        submit(page, f"#inline-{name} button[type=submit]")
    page.click("#inline-assignee > summary")
    page.select_option("#inline-assignee-value", label="owner (you)")
    submit(page, "#inline-assignee button[type=submit]")
    page.click("#inline-title > summary")  # "Rename"
    has_focus(page, "inline-title-value")
    page.fill("#inline-title-value", f"Renamed in place at {width}")
    submit(page, "key:Enter")
    assert page.locator("h1").inner_text() == f"{key} Renamed in place at {width}"
    saved = read_over_mcp(served.url, served.secret, key)
    assert (saved["status"], saved["priority"], saved["dueDate"], saved["tags"]) == (
        "blocked",
        "high",
        "2026-04-01",
        ["web", "urgent"],
    )
    assert saved["assigneeType"] == "human"
    history = page.locator("#h-timeline ~ ol").inner_text()
    assert "Priority: medium → high" in history
    assert "→ Blocked" in history
    shot(page, f"task-page/after-inline-{width}")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.context.close()


def test_a_field_changed_in_place_meanwhile_comes_back_open_with_the_typed_value(
    browser: Any, served: Served
) -> None:
    page = task_page(browser, served, 1280, "CRW-6")
    page.click("#inline-priority > summary")
    page.select_option("#inline-priority-value", "high")
    change_over_mcp(served.url, served.secret, "CRW-6", {"priority": "low"})
    submit(page, "#inline-priority button[type=submit]")
    assert "Not saved" in page.locator(".flash").inner_text()
    assert page.locator("#inline-priority").get_attribute("open") is not None
    assert page.input_value("#inline-priority-value") == "high"  # what the person chose
    said = page.locator("#inline-priority-said").inner_text()
    assert "changed the priority meanwhile, to “low”" in said
    assert page.locator("#edit-title").is_visible() is False  # only this field's form opened
    shot(page, "task-page/inline-conflict-1280")
    submit(page, "#inline-priority button[type=submit]")  # again: the person's value wins
    assert read_over_mcp(served.url, served.secret, "CRW-6")["priority"] == "high"

    # A refused value: the title's form opens again with the text and the reason.
    long_title = "A title far too long " * 16
    page.click("#inline-title > summary")
    page.fill("#inline-title-value", long_title)
    submit(page, "#inline-title button[type=submit]")
    assert page.input_value("#inline-title-value") == long_title
    said = page.locator("#inline-title-said").inner_text()
    assert said.startswith("Not saved: Title")
    assert "300" in said
    assert page.locator("#inline-title-value").get_attribute("aria-invalid") == "true"

    # A refused comment opens again with its text.
    page.get_by_role("link", name="Comment").click()
    page.fill("#comment-content", "   \n  ")
    submit(page, "#comment-form button[type=submit]")
    assert page.locator("#comment-form").get_attribute("open") is not None
    assert page.locator("#comment-said").inner_text() != ""
    assert page.input_value("#comment-content") == "   \n  "

    # A refused subtask: its form opens again with the key as typed.
    page.click("#add-subtask > summary")
    page.fill("#subtask-add", "CRW-999")
    submit(page, "#add-subtask button[type=submit]")
    assert "not a task of CRW" in page.locator(".flash").inner_text()
    assert page.input_value("#subtask-add") == "CRW-999"
    assert page.locator("#subtask-add").is_visible()
    page.context.close()


# --- the header ----------------------------------------------------------------------------


def test_the_desktop_header_keeps_its_row_with_a_more_menu_and_the_current_page_in_it(
    browser: Any, served: Served
) -> None:
    page = open_signed_in(browser, served, 1280, "light")
    page.goto("/p/CRW/activity")
    more = page.locator(".nav-more-button")
    assert more.is_visible()
    assert more.get_attribute("aria-expanded") == "false"
    current = page.locator("nav a[aria-current=page]")
    assert current.inner_text() == "Activity"
    assert current.is_visible()  # an item that would be under More stays in the row when current
    assert page.locator("#nav-more-list a[aria-current]").count() == 0
    more.click()
    assert more.get_attribute("aria-expanded") == "true"
    under = page.locator("#nav-more-list a")
    assert under.count() >= 1
    assert under.first.is_visible()
    assert page.evaluate("document.activeElement.closest('#nav-more-list') !== null")
    page.screenshot(path=str(SCREENSHOTS / "header/more-open-1280.png"))  # not full page: a resize
    assert not (found := axe.violations(page)), axe.describe(found)
    page.keyboard.press("Escape")
    assert more.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.classList.contains('nav-more-button')")
    # Shortcuts reach every page, in the row or under More.
    for keys, path in (("g w", "/week"), ("g i", "/inbox"), ("g a", "/activity")):
        page.locator("main").click(position={"x": 5, "y": 5})
        for k in keys.split():
            page.keyboard.press(k)
        page.wait_for_url(re.compile(rf".*/p/CRW{path}$"))
    # The account menu.
    page.click(".me-button")
    assert page.locator("#me-menu").is_visible()
    assert page.get_by_role("button", name="Sign out").is_visible()
    page.context.close()


def test_the_phone_header_keeps_the_pages_behind_its_menu_button(
    browser: Any, served: Served
) -> None:
    page = open_signed_in(browser, served, 390, "dark")
    page.goto("/p/CRW/board")
    menu = page.locator(".menu-button")
    assert not page.locator("nav[aria-label=Main] a[data-key=b]").is_visible()
    assert menu.get_attribute("aria-expanded") == "false"
    menu.click()
    assert menu.get_attribute("aria-expanded") == "true"
    for name in ("Inbox", "Board", "Settings", "Activity"):
        assert (
            page.locator("nav[aria-label=Main]").get_by_role("link", name=name).first.is_visible()
        )
    assert page.locator("#project-switch").is_visible()
    assert (
        page.evaluate("document.querySelector('header.top').getBoundingClientRect().height") <= 64
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(SCREENSHOTS / "header/menu-open-390-dark.png"))
    assert not (found := axe.violations(page)), axe.describe(found)
    page.keyboard.press("Escape")
    assert menu.get_attribute("aria-expanded") == "false"
    page.locator("main h1").click()
    page.keyboard.press("g")
    page.keyboard.press("t")
    page.wait_for_url(re.compile(r".*/p/CRW/team$"))
    page.context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_without_scripts_every_page_and_the_account_links_are_still_reachable(
    browser: Any, served: Served, width: int
) -> None:
    context = browser.new_context(
        base_url=served.url,
        viewport={"width": width, "height": SIZES[width]},
        java_script_enabled=False,
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto("/login")
    page.fill("#email", served.owner)
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/p/CRW/inbox$"))
    nav = page.locator("nav[aria-label=Main]")
    for name in ("Inbox", "Board", "Activity", "Settings"):
        link = nav.get_by_role("link", name=name).first
        link.scroll_into_view_if_needed()
        assert link.is_visible(), name
    for name in ("Tokens", "Password"):
        assert page.locator("header.top").get_by_role("link", name=name).is_visible(), name
    assert page.locator("header.top").get_by_role("button", name="Sign out").is_visible()
    assert not page.locator(".menu-button").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(SCREENSHOTS / f"header/no-script-{width}.png"))
    nav.get_by_role("link", name="Board").first.click()
    page.wait_for_url(re.compile(r".*/p/CRW/board$"))
    context.close()
