"""The token form's seat field in Chromium: hidden until an agent token names a project, then
offering only that project's AI seats; the chosen seat is shown on the new token."""

from __future__ import annotations

from typing import Any

import pytest

from crewboard.contract.projects import present
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.browser_pages import browser, page, shot, sign_in, world
from tests.support.factories import make_project

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name


def test_the_seat_field_offers_the_chosen_projects_ai_seats_for_an_agent_token(
    page: Any, db: Database, world: dict[str, str]
) -> None:
    owner = db.read(lambda uow: uow.users.get_by_email("owner@example.com"))
    assert owner is not None
    make_project(db, owner, "OPS")
    present.add_team_role(db, person_actor(owner), project="OPS", name="Ops bot", kind="ai")
    sign_in(page, "owner@example.com")
    page.goto("/settings/tokens")
    field = page.locator("[data-seat-field]")
    assert field.is_visible()  # the default preset: an agent in the first project
    page.check("input[name=preset][value=read-only]")
    page.select_option("#token-project", "")
    assert not field.is_visible()  # a personal token, no project
    page.fill("input[name=name]", "Night shift")
    page.check("input[name=kind][value=agent]")
    assert not field.is_visible()  # no project yet
    page.select_option("#token-project", "CRW")
    assert field.is_visible()
    offered = page.eval_on_selector_all(
        "#token-seat option", "os => os.filter(o => !o.hidden).map(o => o.textContent.trim())"
    )
    assert offered == ["No seat chosen", "CRW · Coder"]
    page.select_option("#token-seat", world["seat"])
    shot(page, "token-seat-chosen")
    page.select_option("#token-project", "OPS")  # the CRW seat no longer fits: cleared
    assert page.input_value("#token-seat") == ""
    page.select_option("#token-project", "CRW")
    page.select_option("#token-seat", world["seat"])
    page.locator("form[action='/settings/tokens'] button[type=submit]").click()
    assert "seat Coder" in page.inner_text("main")
