"""Connecting an app in a real browser: the consent page after signing in, the way back to the
app past the page's strict policy, and Settings → Connected apps; axe-core on both pages."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import User
from crewboard.services.identity.users import person_actor
from crewboard.services.oauth import grants
from crewboard.services.oauth.clients import ClientPolicy, register_client
from crewboard.storage.database import Database
from tests.support import axe
from tests.support.browser_pages import browser, page, shot
from tests.support.factories import PASSWORD, make_project, make_user

pytestmark = pytest.mark.browser
__all__ = ["browser", "page"]  # fixtures used by name

CALLBACK = "http://127.0.0.1:9999/callback"


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


def start(db: Database, url: str) -> str:
    app = register_client(
        db,
        ClientPolicy(),
        {
            "client_name": "Test app",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
        },
    )
    return grants.start_authorization(
        db,
        app,
        redirect_uri=CALLBACK,
        redirect_explicit=True,
        scopes=["read", "tasks.manage", "specs.write"],
        resource=f"{url}/mcp",
        code_challenge="x" * 43,
        state="st",
    ).id


def the_app_answers(page: Any) -> list[str]:
    """Stand in for the app's callback (nothing listens on its port); the URLs it was sent."""
    reached: list[str] = []

    def fulfil(route: Any) -> None:
        reached.append(route.request.url)
        route.fulfill(status=200, content_type="text/plain", body="Connected.")

    page.route(re.compile(r"^http://127\.0\.0\.1:9999/"), fulfil)
    return reached


def no_violations(page: Any) -> None:
    found = axe.violations(page)
    assert found == [], axe.describe(found)
    wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    assert not wide, f"{page.url} is wider than the window"


def test_a_person_signs_in_approves_an_app_and_revokes_it_later(
    page: Any, url: str, db: Database, owner: User
) -> None:
    reached = the_app_answers(page)
    request_id = start(db, url)
    page.goto(f"/oauth/consent?request={request_id}")
    page.wait_for_url(re.compile(r".*/login\?next="))
    page.fill("#email", owner.email)
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(rf".*/oauth/consent\?request={re.escape(request_id)}$"))
    assert page.locator("h1").inner_text() == "Connect Test app to Crewboard?"
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        no_violations(page)
        shot(page, f"pages/oauth-consent-{width}")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.get_by_label("specs.write").uncheck()
    page.get_by_label("Projects").select_option("CRW")
    page.get_by_label("Role cap").select_option("write")
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:9999/callback\?"))
    query = parse_qs(urlsplit(reached[-1]).query)
    assert query["code"][0].startswith("cbc_")
    assert (query["state"], query["iss"]) == (["st"], [url])
    [made] = grants.list_connections(db, person_actor(owner))
    assert made.scopes == frozenset({Scope.READ, Scope.TASKS_MANAGE})
    assert made.role is Role.WRITE

    page.goto("/settings/connections")
    assert "Test app" in page.inner_text("main")
    no_violations(page)
    shot(page, "pages/settings-connections")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke Test app").click()
    page.wait_for_url(re.compile(r".*/settings/connections$"))
    assert "can no longer act for you" in page.inner_text("[role=status]")
    assert "No apps are connected." in page.inner_text("main")
    assert grants.list_connections(db, person_actor(owner)) == []


def test_denying_in_the_browser_sends_the_person_back_to_the_app(
    page: Any, url: str, db: Database, owner: User
) -> None:
    reached = the_app_answers(page)
    page.goto("/login")
    page.fill("#email", owner.email)
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/p/CRW/inbox$"))
    page.goto(f"/oauth/consent?request={start(db, url)}")
    page.get_by_role("button", name="Deny").click()
    page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:9999/callback\?"))
    assert parse_qs(urlsplit(reached[-1]).query)["error"] == ["access_denied"]
    assert grants.list_connections(db, person_actor(owner)) == []
