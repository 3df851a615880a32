"""The notification bell in Debian's Chromium: its count follows a handoff that names the
person while they look at another page, also when the handoff is about another project than
the page's; opening a notification from the list marks it read and goes to its link; the
notifications page and the settings page pass axe. Screenshots: /tmp/bell.png and
test-output/screenshots/notifications/."""

from __future__ import annotations

import re
from typing import Any

import pytest

from crewboard.domain.handoffs import Bodies
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import axe, handoff_calls
from tests.support.browser_pages import LIVE, browser, page, shot, sign_in, world
from tests.support.factories import grant, make_project, make_user

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # the fixtures this module borrows


def handoff(db: Database, author: User, key: str, day: str, recipient: User) -> None:
    handoff_calls.create_handoff(
        db, person_actor(author), project=key, workspace_id=None,
        bodies=Bodies(completed="Shipped the login fix."), day=day,
        recipients=[recipient.id], send_notification=True,
    )  # fmt: skip


def test_the_bell_follows_handoffs_live(
    page: Any, url: str, db: Database, world: dict[str, str]
) -> None:
    owner = db.read(lambda uow: uow.users.get_by_email(world["owner"]))
    assert owner is not None
    bob = make_user(db, "bob@example.com")
    grant(db, owner, "CRW", bob, Role.WRITE)
    make_project(db, bob, "OPS")
    grant(db, bob, "OPS", owner, Role.WRITE)

    sign_in(page, world["owner"])
    bell = page.locator("[data-notification-count]")
    assert bell.is_hidden()
    page.goto("/p/CRW/board")
    page.wait_for_load_state("networkidle")

    handoff(db, bob, "CRW", "2026-03-02", owner)
    page.locator("[data-notification-count]:not([hidden])").wait_for(timeout=LIVE)
    assert bell.inner_text().startswith("1")
    assert bell.locator(".visually-hidden").inner_text().strip() == "unread"

    # A handoff of another project than the page's moves the bell too.
    handoff(db, bob, "OPS", "2026-03-02", owner)
    page.locator("[data-notification-count]", has_text=re.compile(r"^2")).wait_for(timeout=LIVE)
    page.locator("header.top").screenshot(path="/tmp/bell.png")  # noqa: S108 - looked at by hand
    shot(page, "notifications/bell")

    page.get_by_role("link", name=re.compile("^Notifications")).click()
    page.wait_for_url(re.compile(r".*/notifications$"))
    assert page.locator(".notification.unread").count() == 2
    assert not (found := axe.violations(page)), axe.describe(found)
    shot(page, "notifications/list")
    page.locator(".notification.unread button.notification-title").first.click()
    page.wait_for_url(re.compile(r".*/handoffs.*"))
    assert page.locator("[data-notification-count]").inner_text().startswith("1")

    page.goto("/notifications")
    page.get_by_role("button", name="Mark all read").click()
    page.wait_for_url(re.compile(r".*/notifications$"))
    assert page.locator(".notification.unread").count() == 0
    assert bell.is_hidden()

    page.goto("/settings/notifications")
    assert page.locator("#email").is_disabled()
    assert not (found := axe.violations(page)), axe.describe(found)
    page.uncheck("#in_app")
    page.get_by_role("button", name="Save").click()
    page.wait_for_url(re.compile(r".*/settings/notifications$"))
    assert "Notification settings saved." in page.inner_text("body")
    assert not page.locator("#in_app").is_checked()
    shot(page, "notifications/settings")
