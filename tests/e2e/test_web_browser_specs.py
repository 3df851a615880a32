"""Spec files in a real browser: open a file an agent wrote, select a passage to start a thread
on it, resolve the thread; compare two revisions; an agent's thread shows as AI work.

Screenshots land in test-output/screenshots/specs/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.specs.file_lookup import FileRef
from crewboard.storage.database import Database
from tests.support import axe, spec_calls
from tests.support.browser_pages import (  # the browser fixtures and the agent's helpers
    agent_call,
    as_agent,
    browser,
    page,
    shot,
    sign_in,
    world,
)

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name

TEXT = "# Login\n\nSessions expire after 15 minutes of inactivity.\n\nTokens rotate daily.\n"


def spec_file(db: Database, email: str) -> dict[str, Any]:
    """docs/login.md with two revisions, saved by the owner; its details."""
    user = db.read(lambda uow: uow.users.get_by_email(email))
    assert user is not None
    owner = person_actor(user)
    made = spec_calls.upload_spec_file(
        db, owner, project="CRW", workspace_id=None, path="docs/login.md",
        content=TEXT.replace("15", "30").encode(), idempotency_key=None,
    ).body["file"]  # fmt: skip
    saved = spec_calls.update_spec_file(
        db, owner, project="CRW", workspace_id=None, ref=FileRef(file_id=made["id"]),
        content=TEXT.encode(), expected_version=made["contentVersion"], idempotency_key=None,
    )  # fmt: skip
    return dict(saved.body["file"])


def select_text(page: Any, words: str) -> None:
    """Select `words` inside the shown file as a person would with the mouse."""
    page.evaluate(
        """words => {
            const root = document.querySelector('.spec-text .rendered');
            const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
            let node;
            while ((node = walker.nextNode())) {
                const at = node.textContent.indexOf(words);
                if (at >= 0) {
                    const range = document.createRange();
                    range.setStart(node, at);
                    range.setEnd(node, at + words.length);
                    const selection = window.getSelection();
                    selection.removeAllRanges();
                    selection.addRange(range);
                    root.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
                    return;
                }
            }
            throw new Error('not in the page: ' + words);
        }""",
        words,
    )


@pytest.mark.parametrize("width", [1280, 390])
def test_a_person_starts_a_thread_on_a_selected_passage_and_resolves_it(
    page: Any, db: Database, world: dict[str, str], width: int
) -> None:
    made = spec_file(db, world["owner"])
    page.set_viewport_size({"width": width, "height": 860})
    sign_in(page, world["owner"])
    page.goto(f"/p/CRW/specs/files/{made['id']}")
    assert page.locator(".spec-text h1").inner_text() == "Login"  # markdown rendered
    select_text(page, "15 minutes of inactivity")
    page.get_by_role("button", name="Comment on the selected words").click()
    assert page.inner_text("#thread-selected") == "15 minutes of inactivity"
    page.fill("#thread-body", "Should this follow the security policy?")
    page.get_by_role("button", name="Start the thread").click()
    page.wait_for_url(re.compile(r".*/specs/files/spf_[^#]+#thread-sct_\w+$"))
    assert "Started a thread." in page.inner_text(".flash")
    thread = page.locator("article.thread")
    assert "15 minutes of inactivity" in thread.inner_text()
    assert "1 open" in page.inner_text("#threads-title")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert not (found := axe.violations(page)), axe.describe(found)
    shot(page, f"specs/thread-open-{width}")
    thread.get_by_role("button", name=re.compile("^Resolve the thread")).click()
    page.wait_for_url(re.compile(r".*#thread-sct_\w+$"))
    assert "resolved" in page.locator("article.thread").inner_text()
    assert "0 open" in page.inner_text("#threads-title")
    shot(page, f"specs/thread-resolved-{width}")


def test_two_revisions_compare_and_an_agents_thread_shows_as_ai_work(
    page: Any, url: str, db: Database, world: dict[str, str]
) -> None:
    made = spec_file(db, world["owner"])

    async def comment(agent: Any) -> None:
        await agent_call(
            agent,
            "create_spec_file_comment_thread",
            {
                "projectId": "CRW",
                "workspaceId": None,
                "fileId": made["id"],
                "anchorQuote": "Tokens rotate daily.",
                "body": "Daily rotation breaks long builds.",
            },
        )

    user = db.read(lambda uow: uow.users.get_by_email(world["owner"]))
    assert user is not None
    writer = tokens.issue_token(
        db, person_actor(user), kind="agent", project="CRW", scopes=["read", "specs.write"]
    )
    as_agent(url, writer.secret, comment)
    sign_in(page, world["owner"])
    page.goto(f"/p/CRW/specs/files/{made['id']}")
    thread = page.locator("article.thread")
    assert "Daily rotation breaks long builds." in thread.inner_text()
    assert thread.locator(".badge", has_text="AI").count() == 1
    page.select_option("#diff-from", "1")
    page.select_option("#diff-to", "2")
    page.get_by_role("button", name="Show changes").click()
    page.wait_for_url(re.compile(r".*from=1&to=2$"))
    assert "Sessions expire after 30 minutes" in page.inner_text(".line-diff del")
    assert "Sessions expire after 15 minutes" in page.inner_text(".line-diff ins")
    assert not (found := axe.violations(page)), axe.describe(found)
    shot(page, "specs/diff")
