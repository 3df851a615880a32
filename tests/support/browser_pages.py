"""The browser suite's shared pieces: Chromium (one per test module), a signed-out page per
test, the review world, and the agent's side on the official MCP SDK client (in its own
thread: Playwright's sync API owns the test's event loop).

A browser test module imports the fixtures it uses by name:
`from tests.support.browser_pages import browser, page, world`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio
import pytest

from crewboard.storage.database import Database
from tests.support.browser import (
    CHROMIUM_ARGS,
    SCREENSHOTS,
    browser_required,
    browser_unavailable_reason,
    chromium_path,
)
from tests.support.factories import PASSWORD, make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.review import review_world

T = TypeVar("T")

LIVE = 15_000  # ms a live update may take to show (the stream polls the log every 0.5 s)
XSS = '<script>window.__xss = 1</script>\n\n<img src=x onerror="window.__xss = 2">'


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = browser_unavailable_reason()
    if reason is not None:
        if browser_required():
            pytest.fail(f"CREWBOARD_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only with a browser

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    context = browser.new_context(base_url=url, viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == []  # no script error on any page


@pytest.fixture
def world(db: Database) -> dict[str, str]:
    """The owner, project CRW with an AI seat, a remembered record, a task for the seat."""
    return review_world(db, make_user(db, "owner@example.com", is_owner=True))


def agent_side(work: Callable[[], Awaitable[T]]) -> T:
    """Run the agent's async client in its own thread: Playwright's sync API owns this one's loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, work).result(timeout=60)


def as_agent(url: str, secret: str, work: Callable[[Any], Awaitable[T]]) -> T:
    """`work` with the agent's MCP client (the official SDK's, handshake era), on its side."""

    async def run() -> T:
        async with mcp_client(url, secret, "legacy") as agent:
            return await work(agent)

    return agent_side(run)


async def agent_call(agent: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call that must succeed; its JSON answer."""
    answer = await agent.call_tool(tool, arguments)
    assert not answer.is_error, answer.content
    return dict(body_of(answer))


def hand_in(url: str, secret: str, task: str, key: str, content: str) -> dict[str, Any]:
    """The agent's side: read the task (receipt), hand in a result. Answers the ack."""

    async def work(agent: Any) -> dict[str, Any]:
        read = await agent_call(agent, "get_task", {"taskId": task})
        return await agent_call(
            agent,
            "submit_result",
            {
                "projectId": read["task"]["projectId"],
                "workspaceId": None,
                "taskId": read["task"]["id"],
                "idempotencyKey": key,
                "expectedRevision": read["task"]["revision"],
                "contextReceiptId": read.get("contextReceiptId"),
                "title": f"Result for {read['task']['key']}",
                "summary": "Redirect fixed",
                "content": content,
                "references": [{"kind": "commit", "value": "a1b2c3d4e5"}],
            },
        )

    return as_agent(url, secret, work)


SHOT_TRIES = 3  # a screenshot Chromium could not capture is taken again, twice at most


def shot(page: Any, name: str) -> None:
    """A full-page screenshot at test-output/screenshots/NAME.png (NAME may hold a folder)."""
    path = SCREENSHOTS / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import Error as PlaywrightError  # noqa: PLC0415 - only with a browser

    for attempt in range(SHOT_TRIES):
        try:
            page.screenshot(path=str(path), full_page=True)
        except PlaywrightError as error:
            # Chromium now and then cannot capture a frame (a busy machine, a page still
            # laying out); a screenshot is a record for people, so it is taken again.
            if "Unable to capture screenshot" not in str(error) or attempt == SHOT_TRIES - 1:
                raise
            page.wait_for_load_state()
        else:
            return


def sign_in(page: Any, email: str) -> None:
    page.goto("/login")
    shot(page, "login")
    page.fill("#email", email)
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/p/CRW/inbox$"))


def change_over_mcp(url: str, secret: str, task: str, patch: dict[str, Any]) -> None:
    """The agent edits the task over MCP from the revision it reads."""

    async def work(agent: Any) -> None:
        read = await agent_call(agent, "get_task", {"taskId": task})
        await agent_call(
            agent,
            "update_task",
            {
                "projectId": read["task"]["projectId"],
                "workspaceId": None,
                "idempotencyKey": f"mcp-{task}-{read['task']['revision']}",
                "taskId": task,
                "expectedRevision": read["task"]["revision"],
                "patch": patch,
            },
        )

    as_agent(url, secret, work)


def read_over_mcp(url: str, secret: str, task: str) -> dict[str, Any]:
    """The task as the agent reads it."""
    read = as_agent(url, secret, lambda agent: agent_call(agent, "get_task", {"taskId": task}))
    return dict(read["task"])


LONG = "https://example.com/" + "a-very-long-path-segment/" * 8 + "end"
