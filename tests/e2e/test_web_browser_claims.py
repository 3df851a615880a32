"""Claims in a real browser: an agent claims a task over MCP, the board and the task page show
who holds it and until when, a person breaks the claim there, and the agent's next write with
its old fence is refused CLAIM_LOST. A reader sees the holder but is offered no button.

Screenshots land in test-output/screenshots/claims/.
"""

from __future__ import annotations

from typing import Any

import pytest

from crewboard.services.identity.users import person_actor
from crewboard.services.projects.projects import set_project_member
from crewboard.storage.database import Database
from tests.support import axe
from tests.support.browser_pages import (  # the browser fixtures and the agent's helpers
    agent_call,
    as_agent,
    browser,
    page,
    shot,
    sign_in,
    world,
)
from tests.support.factories import make_user
from tests.support.mcp_client import body_of

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name


def claim_next(url: str, secret: str) -> dict[str, Any]:
    """The agent takes the best task for its seat; the claim it got."""

    async def work(agent: Any) -> dict[str, Any]:
        taken = await agent_call(agent, "claim_next_task", {"projectId": "CRW"})
        return dict(taken["claim"])

    return as_agent(url, secret, work)


def late_write(url: str, secret: str, task: str, fence: int) -> dict[str, Any]:
    """The agent writes with the fence it held: the refusal (code and details)."""

    async def work(agent: Any) -> dict[str, Any]:
        read = await agent_call(agent, "get_task", {"taskId": task, "includeContextPack": False})
        assert "claim" not in read  # no one holds it now
        answer = await agent.call_tool(
            "update_task",
            {
                "projectId": "CRW", "taskId": task, "idempotencyKey": "late",
                "expectedRevision": read["task"]["revision"], "claimFence": fence,
                "patch": {"title": "Written after the claim was broken"},
            },
        )  # fmt: skip
        assert answer.is_error, body_of(answer)
        return dict(answer.structured_content or {})

    return as_agent(url, secret, work)


def test_a_person_sees_the_holder_breaks_the_claim_and_the_agents_late_write_is_refused(
    page: Any, url: str, world: dict[str, str], db: Database, browser: Any
) -> None:
    claim = claim_next(url, world["secret"])
    key, fence = claim["key"], claim["fence"]
    sign_in(page, world["owner"])

    page.goto("/p/CRW/board")
    tile = page.locator(f"#tile-{key} [data-claim]")
    assert tile.inner_text().startswith("held by Coder until ")
    assert not (found := axe.violations(page)), axe.describe(found)
    shot(page, "claims/board-held")

    page.goto(f"/p/CRW/tasks/{key}")
    held = page.locator("td[data-claim]")
    assert "Coder" in held.inner_text()
    assert f"(claim {fence})" in held.inner_text()
    assert not (found := axe.violations(page)), axe.describe(found)
    shot(page, "claims/task-held")

    page.get_by_role("button", name="Break claim").click()
    page.wait_for_selector(".flash")
    assert f"Claim on {key} broken" in page.locator(".flash").inner_text()
    assert "no one" in page.locator("td[data-claim]").inner_text()
    assert page.get_by_role("button", name="Break claim").count() == 0
    assert "Broke the claim of Coder" in page.locator("#h-timeline + p + ol").inner_text()
    shot(page, "claims/task-broken")

    refused = late_write(url, world["secret"], key, fence)
    assert refused["code"] == "CLAIM_LOST"
    assert refused["details"]["claimFence"] == fence

    # A reader sees who holds a task, and no button to break the claim.
    claim_next(url, world["secret"])
    reader = make_user(db, "reader@example.com")
    owner = db.read(lambda uow: uow.users.get_by_email(world["owner"]))
    set_project_member(db, person_actor(owner), project="CRW", email=reader.email, role="read")
    context = browser.new_context(base_url=url, viewport={"width": 1280, "height": 900})
    try:
        other = context.new_page()
        sign_in(other, reader.email)
        other.goto(f"/p/CRW/tasks/{key}")
        assert "Coder" in other.locator("td[data-claim]").inner_text()
        assert other.get_by_role("button", name="Break claim").count() == 0
    finally:
        context.close()
