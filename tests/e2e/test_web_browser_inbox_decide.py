"""The review loop from the inbox list in Debian's Chromium, at 1280×860 and 390×844, light
and dark: approve, send back and reject from a row without a reload, Undo, a resubmitted
hand-in shown as version 2 with what changed, and the first-run page of a new project.
axe-core finds nothing serious; screenshots land in test-output/screenshots/inbox/.

Clicks from opening the inbox to approving three hand-ins are counted both ways: on each
hand-in's page (the way before the list could decide: open, approve, and the next one opens)
and from the list (one press each).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from crewboard.storage.database import Database
from tests.support import axe
from tests.support.browser import SCREENSHOTS
from tests.support.browser_pages import (
    LIVE,
    agent_call,
    as_agent,
    browser,
    hand_in,
    page,
    shot,
    sign_in,
    world,
)
from tests.support.factories import make_project

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # the fixtures this module borrows

VIEWS = [
    pytest.param((1280, 860, "light"), id="1280-light"),
    pytest.param((1280, 860, "dark"), id="1280-dark"),
    pytest.param((390, 844, "light"), id="390-light"),
    pytest.param((390, 844, "dark"), id="390-dark"),
]
Viewport = tuple[int, int, str]  # width, height, colour scheme


def view(page: Any, viewport: Viewport) -> str:
    width, height, scheme = viewport
    page.set_viewport_size({"width": width, "height": height})
    page.emulate_media(color_scheme=scheme)
    return f"{width}-{scheme}"


def fits(page: Any, width: int) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{page.url} is {wide} px wide at {width}"


def clean(page: Any) -> None:
    assert not (found := axe.violations(page)), axe.describe(found)


def three_hand_ins(url: str, world: dict[str, str]) -> list[str]:
    """Two more tasks for the seat, then a hand-in on each of the three; the draft ids."""

    async def work(agent: Any) -> list[str]:
        keys = ["CRW-1"]
        for n, title in enumerate(("Write the release notes", "Tidy the settings page")):
            made = await agent_call(
                agent,
                "create_task",
                {
                    "projectId": "CRW",
                    "workspaceId": None,
                    "idempotencyKey": f"more-{n}",
                    "title": title,
                    "status": "ready_for_ai",
                    "assigneeId": world["seat"],
                },
            )
            keys.append(str(made["task"]["key"]))
        return keys

    keys = as_agent(url, world["secret"], work)
    return [
        hand_in(url, world["secret"], key, f"hand-{key}", f"Done: {key}.")["draft"]["id"]
        for key in keys
    ]


def rows(page: Any) -> int:
    return int(page.locator("[data-live-region] li[id^=item-] [data-approve]").count())


def wait_rows(page: Any, count: int) -> None:
    """Until the list holds `count` rows to decide."""
    page.wait_for_function(
        "n => document.querySelectorAll('[data-live-region] [data-approve]').length === n",
        arg=count,
    )


@pytest.mark.parametrize("viewport", VIEWS)
def test_a_person_decides_from_the_list_and_undoes(
    page: Any, url: str, world: dict[str, str], viewport: Viewport
) -> None:
    drafts = three_hand_ins(url, world)
    sign_in(page, world["owner"])
    name = view(page, viewport)
    width = viewport[0]
    page.evaluate("window.__stayed = 1")  # gone if the page reloads
    assert rows(page) == 3
    shot(page, f"inbox/list-{name}")
    fits(page, width)
    clean(page)

    # Approve the newest: it leaves the list, a note says so and offers Undo.
    newest = drafts[-1]
    page.locator(f"#item-{newest} [data-approve]").click()
    note = page.locator(f'[data-decided="{newest}"]')
    note.wait_for()
    assert "Approved" in note.inner_text()
    assert page.locator(f"#item-{newest}").count() == 0
    focused = page.evaluate("document.activeElement.getAttribute('aria-label') || ''")
    assert focused.startswith("Approve "), focused  # the next row's Approve, for the next press
    shot(page, f"inbox/approved-undo-{name}")
    clean(page)
    note.get_by_role("button", name=re.compile("^Undo")).click()
    page.locator(".decided-notes", has_text="It waits for review again.").wait_for()
    page.locator(f"#item-{newest}").wait_for(timeout=LIVE)  # back in the list, from the server
    assert page.evaluate("window.__stayed") == 1

    # Send one back with a note: the note links the follow-up task.
    middle = drafts[1]
    page.locator(f"#item-{middle} summary", has_text="Request revision").click()
    field = page.locator(f"#revise-{middle}")
    page.wait_for_function(  # the note's field takes the focus as the step opens
        "id => document.activeElement && document.activeElement.id === id", arg=f"revise-{middle}"
    )
    field.fill("Please add the date of the release at the top.")
    shot(page, f"inbox/revise-open-{name}")
    clean(page)
    page.locator(f"#item-{middle} button", has_text="Send back for revision").click()
    follow = page.locator(f'[data-decided="{middle}"] [data-follow-up]')
    follow.wait_for()
    assert re.match(r"CRW-\d+ Revise: Write the release notes", follow.inner_text())

    # Reject asks for a reason first: the button names what it rejects.
    oldest = drafts[0]
    page.locator(f"#item-{oldest} summary", has_text="Reject").click()
    page.locator(f"#reject-{oldest}").fill("This is not the file that loops.")
    page.locator(f"#item-{oldest} button.danger").click()
    page.locator(f'[data-decided="{oldest}"]').wait_for()
    wait_rows(page, 1)
    shot(page, f"inbox/decided-{name}")
    fits(page, width)
    clean(page)
    assert page.evaluate("window.__stayed") == 1

    # Without the script's help the forms still work: reload and the list is as the server has it.
    page.reload()
    assert rows(page) == 1
    assert page.locator(f"#item-{newest}").count() == 1


def test_clicks_to_approve_three_hand_ins_before_and_after(
    page: Any, url: str, world: dict[str, str]
) -> None:
    drafts = three_hand_ins(url, world)
    sign_in(page, world["owner"])
    # Before: open a hand-in from the list, approve it; the next one opens by itself.
    before = 0
    page.locator(f"a[href$='/inbox/drafts/{drafts[-1]}']").click()
    before += 1
    for _ in drafts:
        page.get_by_role("button", name="Approve", exact=True).click()
        before += 1
        page.wait_for_load_state()
    assert page.url.endswith("/p/CRW/inbox")
    assert "Nothing waits for you" in page.inner_text("main")

    # After: the same three, from the list, one press each (Undo is the safety, not a dialog).
    for draft in drafts:
        _undo_over_http(page, draft)
    page.goto("/p/CRW/inbox")
    assert rows(page) == 3
    after = 0
    for _ in drafts:  # the first a click; then the next row's Approve has the focus: Enter
        if after:
            page.keyboard.press("Enter")
        else:
            page.locator("[data-approve]").first.click()
        after += 1
        wait_rows(page, 3 - after)
    assert rows(page) == 0
    measured = SCREENSHOTS / "inbox" / "clicks.txt"
    measured.parent.mkdir(parents=True, exist_ok=True)
    measured.write_text(f"clicks to approve three hand-ins: before {before}, after {after}\n")
    assert (before, after) == (4, 3)


def _undo_over_http(page: Any, draft: str) -> None:
    """Put a decided hand-in back (as its Undo does), through the page's own session."""
    answer = page.evaluate(
        """async (draft) => {
            const html = await (await fetch('/p/CRW/inbox')).text();
            const csrf = /name="csrf" value="([^"]+)"/.exec(html)[1];
            const body = new URLSearchParams({csrf, next: '/p/CRW/inbox', from: 'list'});
            const answer = await fetch(`/p/CRW/inbox/drafts/${draft}/take-back`,
                {method: 'POST', body, headers: {Accept: 'application/json'}});
            return answer.json();
        }""",
        draft,
    )
    assert answer["ok"], answer


@pytest.mark.parametrize("viewport", VIEWS)
def test_a_resubmitted_hand_in_shows_as_version_2_with_what_changed(
    page: Any, url: str, world: dict[str, str], viewport: Viewport
) -> None:
    first = hand_in(
        url, world["secret"], world["task"], "v-1", "The redirect loops no more.\nNo tests yet."
    )
    sign_in(page, world["owner"])
    name = view(page, viewport)
    width = viewport[0]
    page.locator(f"#item-{first['draft']['id']} summary", has_text="Request revision").click()
    page.locator(f"#revise-{first['draft']['id']}").fill("Add a test for the expired session.")
    page.locator(f"#item-{first['draft']['id']} button", has_text="Send back for revision").click()
    follow = page.locator("[data-follow-up]")
    follow.wait_for()
    follow_key = follow.inner_text().split()[0]
    second = hand_in(
        url, world["secret"], follow_key, "v-2",
        "The redirect loops no more.\nA test covers the expired session.",
    )  # fmt: skip
    card = page.locator(f"#item-{second['draft']['id']}")
    card.wait_for(timeout=LIVE)  # the live list shows it
    assert "Version 2 — revised after your note" in card.inner_text()
    assert "Add a test for the expired session." in card.inner_text()
    assert page.locator(f"#item-{first['draft']['id']}").count() == 0
    shot(page, f"inbox/version-2-card-{name}")
    fits(page, width)
    clean(page)
    card.get_by_role("link", name="what changed").click()
    page.wait_for_url(re.compile(rf".*/inbox/drafts/{second['draft']['id']}#changes$"))
    changes = page.locator("#changes")
    assert "What changed since version 1" in changes.inner_text()
    assert changes.locator(".diff-row.removed", has_text="No tests yet.").count() == 1
    assert changes.locator(".diff-row.added ins", has_text="covers").count() == 1
    shot(page, f"inbox/version-2-diff-{name}")
    fits(page, width)
    clean(page)


@pytest.mark.parametrize("viewport", VIEWS)
def test_a_new_owner_finds_the_first_run_page_from_the_empty_inbox(
    page: Any, db: Database, world: dict[str, str], viewport: Viewport
) -> None:
    owner = db.read(lambda uow: uow.users.get_by_email(world["owner"]))
    make_project(db, owner, "NEW")
    sign_in(page, world["owner"])
    name = view(page, viewport)
    width = viewport[0]
    page.goto("/p/NEW/inbox")
    empty = page.locator(".empty-inbox")
    assert "Nothing waits for you" in empty.inner_text()
    shot(page, f"inbox/empty-{name}")
    clean(page)
    empty.get_by_role("link", name=re.compile("Set up this project")).click()
    page.wait_for_url(re.compile(r".*/p/NEW/start$"))
    for client in ("Claude Code", "Claude Desktop", "Cursor", "VS Code", "Codex CLI"):
        assert page.locator("summary", has_text=client).count() == 1
    shot(page, f"inbox/first-run-{name}")
    fits(page, width)
    clean(page)
    page.locator("summary", has_text="Cursor").click()
    assert "YOUR_TOKEN" in page.locator("details[open] pre.config").last.inner_text()
    page.fill("#first-task", "Write a README for the project")
    page.get_by_role("button", name="Add the task").click()
    page.wait_for_url(re.compile(r".*/p/NEW/start$"))
    assert "done: 1 task on the board" in page.inner_text("main")
    shot(page, f"inbox/first-run-task-{name}")
    clean(page)
