"""Spec sessions in a real browser: an agent starts a session over MCP (the official SDK) and
hands on its link; the person opens it, watches the reply stream in, sends it again when it
fails, answers the interview form, accepts the proposed tasks.md, and finds its tasks on the
board. axe-core checks each state at 390 and 1280 px.

Screenshots land in test-output/screenshots/sessions/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crewboard.config import Settings
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.conftest import POSTGRESQL_IN_THE_SLOW_RUN
from tests.support import axe
from tests.support.browser_pages import (  # the browser fixtures by name
    agent_side,
    browser,
    page,
    shot,
    sign_in,
    world,
)
from tests.support.mcp_client import body_of, mcp_client
from tests.support.model_server import Broken, ModelServer, Reply, Status
from tests.support.server import free_port, running_server
from tests.support.sessions import configure_model, proposes, questions

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name

TASKS = "# Tasks\n\n- [ ] 1. Write the CSV writer\n- [ ] 2. Add the export button\n"
FIRST = "Let me look at how invoices are stored first."
STREAMED = 30_000  # ms the streamed reply may take to show (the stall alone is 8 s)


@pytest.fixture
def url(db: Database, tmp_path: Path) -> Iterator[str]:
    """The app, with start_spec_session answering at once: the reply goes on in the page."""
    settings = Settings(data_dir=tmp_path, port=free_port(), session_first_turn_wait=0)
    with running_server(settings, db) as base:
        yield base


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


def agent_starts(db: Database, url: str, email: str) -> dict[str, Any]:
    """The agent's side: a personal token with specs.write starts the session; its answer."""
    user = db.read(lambda uow: uow.users.get_by_email(email))
    assert user is not None
    secret = tokens.issue_token(
        db, person_actor(user), kind="personal", scopes=["read", "specs.write"]
    ).secret
    arguments = {"projectId": "CRW", "workspaceId": None, "mode": "generate",
                 "sessionTitle": "Invoice export",
                 "prompt": "Customers want to export their invoices as CSV. Spec it."}  # fmt: skip

    async def work() -> dict[str, Any]:
        async with mcp_client(url, secret, "legacy", {"X-MCP-Toolsets": "specs"}) as agent:
            answer = await agent.call_tool("start_spec_session", arguments)
            assert not answer.is_error, answer.content
            return dict(body_of(answer))

    return agent_side(work)


def check(page: Any, name: str, width: int) -> None:
    """No horizontal overflow, no serious axe-core finding; a screenshot."""
    assert page.evaluate("document.documentElement.scrollWidth") <= width, name
    assert not (found := axe.violations(page)), f"{name}: {axe.describe(found)}"
    shot(page, f"sessions/{name}-{width}")


@POSTGRESQL_IN_THE_SLOW_RUN  # the page and its stream; test_web_sessions covers both databases
@pytest.mark.parametrize("width", [1280, 390])
def test_a_person_continues_an_agents_session_to_tasks_on_the_board(
    page: Any, db: Database, url: str, world: dict[str, str], *, model_server: ModelServer,
    width: int,
) -> None:  # fmt: skip
    configure_model(db, model_server, timeout=8.0)
    model_server.script(
        Status(503, retry_after="3"),  # nothing shown yet: the provider tries again
        Broken(FIRST, ending="stall"),  # shown, then silence: the turn fails
        Reply(questions("Do admins export too?", "Is CSV enough?"), chunks=6),
        Reply(proposes("specs/invoice-export/tasks.md", TASKS), chunks=6),
    )
    page.set_viewport_size({"width": width, "height": 860})
    sign_in(page, world["owner"])
    started = agent_starts(db, url, world["owner"])
    path = started["sessionUrl"].removeprefix(url)
    assert started["pendingAction"] == "turn_still_running"

    page.goto(path)
    assert page.inner_text("h1") == "Invoice export"
    assert page.inner_text("[data-partial]") == ""  # the model has not answered yet
    assert page.is_disabled("#message")
    page.wait_for_function(
        "text => document.querySelector('[data-partial]').textContent === text",
        arg=FIRST, timeout=STREAMED,
    )  # fmt: skip
    shot(page, f"sessions/streaming-{width}")

    page.wait_for_selector(".turn-failed", timeout=STREAMED)  # the page reloads at the end
    assert "for more than 8 s" in page.inner_text(".turn-failed")
    check(page, "failed", width)
    page.get_by_role("button", name="Send again").click()

    form = page.locator(".proposal-questions")
    form.wait_for(timeout=STREAMED)
    assert "A few questions first." in page.inner_text(".conversation")
    check(page, "questions", width)
    form.get_by_role("group", name="Do admins export too?").get_by_label("Yes").check()
    form.get_by_role("group", name="Is CSV enough?").get_by_label("No").check()
    form.get_by_role("button", name="Send answers").click()

    proposal = page.locator(".proposal-file")
    proposal.wait_for(timeout=STREAMED)
    assert "specs/invoice-export/tasks.md" in proposal.inner_text()
    assert "- [ ] 1. Write the CSV writer" in proposal.inner_text()
    assert "Is CSV enough?\n   → No" in page.inner_text(".conversation")
    check(page, "proposal", width)
    proposal.get_by_role("button", name="Accept specs/invoice-export/tasks.md").click()

    saved = page.get_by_role("link", name="specs/invoice-export/tasks.md")
    saved.wait_for(timeout=STREAMED)
    # Accepting starts the model's next turn; the page reloads when it ends. A click in that
    # moment lands on the page being replaced, so wait for the turn's reload first.
    page.locator("#reply").wait_for(state="detached", timeout=STREAMED)
    saved.click()
    page.wait_for_url(re.compile(r".*/p/CRW/specs/files/spf_[^/]+$"))
    assert "Write the CSV writer" in page.inner_text(".file-tasks")
    page.goto("/p/CRW/board")
    assert "Write the CSV writer" in page.inner_text("main")
    assert "Add the export button" in page.inner_text("main")
    shot(page, f"sessions/board-{width}")

    page.goto("/p/CRW/sessions")
    assert "Invoice export" in page.inner_text(".sessions")
    check(page, "list", width)
    page.goto(path)
    page.locator(".conversation", has_text="You said: I accepted").wait_for(timeout=STREAMED)
    check(page, "after-accept", width)
