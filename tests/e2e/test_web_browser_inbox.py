"""Triaging the inbox in Debian's Chromium: new rows stand out, the header count and the tab
title follow a live hand-in, opening a hand-in marks it read, a row button marks it again,
and the inbox and a hand-in page fit the window at 1280 and 390 px (screenshots of both in
test-output/screenshots/inbox-triage/)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.browser_pages import LIVE, browser, hand_in, page, shot, sign_in, world
from tests.support.factories import personal_secret
from tests.support.review import AGENT_SCOPES

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # the fixtures this module borrows


def fits(page: Any, width: int) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{page.url} is {wide} px wide at {width}"


def other_hand(db: Database, world: dict[str, str]) -> str:
    """The secret of the owner's own token: another hand than the agent's."""
    owner = db.read(lambda uow: uow.users.get_by_email(world["owner"]))
    return personal_secret(db, person_actor(owner), AGENT_SCOPES)


def test_a_person_triages_the_inbox_at_both_widths(
    page: Any, url: str, world: dict[str, str], db: Database
) -> None:
    long_title = "https://example.com/" + "a-very-long-path-segment/" * 6
    first = hand_in(url, world["secret"], world["task"], "triage-1", f"See {long_title}")
    draft = first["draft"]["id"]
    sign_in(page, world["owner"])
    assert page.title().startswith("(1) Inbox")
    row = page.locator(f"#item-{draft}")
    assert "unread" in (row.get_attribute("class") or "")
    assert row.locator(".badge.new").inner_text() == "new"
    assert page.locator("[data-unread-count]").inner_text().startswith("1")

    # A second hand-in arrives while the person looks: the count and the title follow. It
    # comes through another token (one of the same hand would be a version of the first card).
    second = hand_in(url, other_hand(db, world), world["task"], "triage-2", "Second try.")
    page.locator(f"#item-{second['draft']['id']}").wait_for(timeout=LIVE)
    page.wait_for_function("document.title.startsWith('(2) ')", timeout=LIVE)
    assert page.locator("[data-unread-count]").inner_text().startswith("2")
    shot(page, "inbox-triage/inbox-1280")
    fits(page, 1280)

    # Opening a hand-in marks it read; it shows the seat that wrote it.
    page.locator(f"a[href$='/inbox/drafts/{draft}']").click()
    page.wait_for_url(re.compile(rf".*/inbox/drafts/{draft}$"))
    assert "handed in by Coder" in page.inner_text("main")
    assert page.title().startswith("(1) ")
    shot(page, "inbox-triage/hand-in-1280")
    fits(page, 1280)
    page.set_viewport_size({"width": 390, "height": 844})
    shot(page, "inbox-triage/hand-in-390")
    fits(page, 390)

    page.goto("/p/CRW/inbox")
    assert "read" in (page.locator(f"#item-{draft}").get_attribute("class") or "").split()
    shot(page, "inbox-triage/inbox-390")
    fits(page, 390)
    # The row's own button, found by its name, makes the hand-in new again.
    page.get_by_role("button", name=re.compile(r"^Mark unread: CRW-1's hand-in")).click()
    page.wait_for_url(re.compile(rf".*/p/CRW/inbox#item-{draft}$"))
    assert page.title().startswith("(2) Inbox")
    page.get_by_role("button", name="Mark all read").click()
    page.wait_for_load_state()
    assert page.title() == "Inbox · Crewboard"
    assert page.locator(".badge.new").count() == 0
    page.set_viewport_size({"width": 1280, "height": 900})
