"""The webhook pages in Chromium: an admin adds a webhook from the settings tab, copies its
secret from the one page that shows it, pings it, redelivers the ping from the log and
deletes it; each state passes axe-core at phone and desktop widths."""

from __future__ import annotations

import re
from typing import Any

import pytest

from crewboard.services.identity.users import person_actor
from crewboard.services.webhooks import deliveries, subscriptions
from crewboard.storage.database import Database
from tests.support import axe
from tests.support.browser_pages import browser, page, shot, sign_in, world

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name
HOOK = "https://93.184.216.34/crewboard/" + "events-for-the-build-server/" * 4  # nothing to resolve


def checked(page: Any, name: str, refused: dict[str, str]) -> None:
    """Screenshots and axe-core at both widths and in dark mode; what axe refuses is kept by
    where."""
    for width, scheme in ((1280, "light"), (390, "light"), (1280, "dark")):
        page.set_viewport_size({"width": width, "height": 860})
        page.emulate_media(color_scheme=scheme)
        shot(page, f"webhooks/{name}-{width}-{scheme}")
        assert page.evaluate("document.documentElement.scrollWidth") <= width, (name, width)
        if found := axe.violations(page):
            refused[f"{name} at {width} ({scheme})"] = axe.describe(found)
    page.emulate_media(color_scheme="light")


def test_an_admin_adds_pings_redelivers_and_deletes_a_webhook(
    page: Any, db: Database, world: dict[str, str]
) -> None:
    axe.preload(page.context)
    refused: dict[str, str] = {}
    sign_in(page, world["owner"])
    page.goto("/p/CRW/settings/project")
    page.get_by_role("link", name="CRW webhooks").click()
    page.wait_for_url(re.compile(r".*/p/CRW/settings/webhooks$"))
    checked(page, "empty", refused)
    page.fill("#new-url", HOOK)
    page.check("input[name=events][value='task.*']")
    page.fill("#new-exact", "draft.approved")
    page.fill("#new-description", "The build server")
    page.get_by_role("button", name="Add webhook").click()
    secret = page.inner_text("#webhook-secret").strip()
    assert secret.startswith("whsec_")
    checked(page, "secret", refused)
    page.get_by_role("link", name="Open the webhook and its delivery log").click()
    page.wait_for_url(re.compile(r".*/settings/webhooks/whk_\w+$"))
    assert secret not in page.content()  # shown once only
    page.get_by_role("button", name="Send a ping").click()
    assert "Ping queued" in page.inner_text("[role=status]")
    assert "webhook.ping" in page.inner_text("table")
    checked(page, "webhook", refused)
    page.locator("table button", has_text="Redeliver").first.click()
    assert "queued again" in page.inner_text("[role=status]")
    owner = db.read(lambda uow: uow.users.get_by_email(world["owner"]))
    assert owner is not None
    (made,) = subscriptions.list_webhooks(db, person_actor(owner), "CRW")
    log = deliveries.list_webhook_deliveries(db, person_actor(owner), made.id)
    assert [d.kind.value for d in log.deliveries] == ["redelivery", "ping"]
    page.get_by_role("button", name="Pause").click()
    assert "paused by an admin" in page.inner_text("main")
    checked(page, "paused", refused)
    page.goto("/p/CRW/settings/webhooks")
    checked(page, "list", refused)
    page.get_by_role("link", name=HOOK).click()
    page.check("input[name=confirm]")
    page.get_by_role("button", name="Delete webhook").click()
    page.wait_for_url(re.compile(r".*/p/CRW/settings/webhooks$"))
    assert "No webhooks yet." in page.inner_text("main")
    assert refused == {}, "\n".join(f"{where}:\n{what}" for where, what in refused.items())
