"""A `tasks.md` reviewed like a document in a real browser, at a desktop and a phone width:
its checkbox lines are boxes, and words selected from one item's title into the next item
start a thread anchored on the exact source (the boxes and the task keys are no part of it);
the passage is marked, the thread sits beside it; selecting words in a title ticks no box,
and ticking a box still saves the file's next revision.

Screenshots land in test-output/screenshots/specs/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from crewboard.contract.specs import present
from crewboard.services.specs.file_lookup import FileRef
from crewboard.storage.database import Database
from tests.e2e.test_web_browser_spec_review import select_between
from tests.e2e.test_web_browser_tasks_md import PLAN, fits, open_as, owner_of, plan, read_back
from tests.support import axe
from tests.support.browser_pages import browser, page, shot, world

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name


def drag_over_a_title(page: Any) -> None:
    """Words dragged over in one title are selected: the box stays as it was."""
    title = page.locator("#task-line-5 label.task-title").bounding_box()
    assert title is not None
    middle = title["y"] + min(title["height"], 20) / 2
    page.mouse.move(title["x"] + 2, middle)
    page.mouse.down()
    page.mouse.move(title["x"] + 60, middle, steps=5)
    page.mouse.up()
    assert page.evaluate("window.getSelection().toString()").strip()
    assert page.evaluate("document.getElementById('task-box-5').checked") is False


def marked_beside_the_thread(page: Any, width: int) -> None:
    """The passage is marked in the first title, its detail and the next title; on a wide
    screen its thread is level with it in the margin."""
    first = page.locator("#task-line-5 label.task-title mark.hl.open")
    assert [first.nth(k).inner_text() for k in range(first.count())] == [
        "migration for the ",
        "cart summary",
    ]
    assert (
        page.locator("#task-line-5 > p mark.hl.open").first.inner_text().startswith("Two columns")
    )
    assert page.locator("#task-line-9 label.task-title mark.hl.open").inner_text() == (
        "Parse the totals"
    )
    thread = page.locator("article.thread").first
    assert thread.get_attribute("data-block") is not None
    if width >= 1000:  # the thread beside its passage in the margin
        marked = page.locator("#task-line-5 mark.hl").first.bounding_box()
        beside = thread.bounding_box()
        assert marked is not None
        assert beside is not None
        assert abs(beside["y"] - marked["y"]) < 60
        assert beside["x"] > marked["x"] + marked["width"]


@pytest.mark.parametrize(
    ("width", "scheme"),
    [
        pytest.param(1280, "light", id="1280-light"),
        pytest.param(390, "light", id="390-light"),
        pytest.param(1280, "dark", id="1280-dark"),
        pytest.param(390, "dark", id="390-dark"),
    ],
)
def test_words_across_checkbox_items_start_a_thread_on_the_source_and_boxes_still_tick(
    page: Any, db: Database, world: dict[str, str], width: int, scheme: str
) -> None:
    made = plan(db, world["owner"])
    open_as(page, world["owner"], width, scheme, f"/p/CRW/specs/files/{made['id']}")
    assert page.locator("input.task-box").count() == 4
    assert page.locator(".spec-doc[data-tasks-md] label.task-title span.src, "
                        ".spec-doc[data-tasks-md] span.src > label.task-title").count() == 4  # fmt: skip
    drag_over_a_title(page)
    select_between(page, "migration for the", "Parse the totals")
    comment = page.get_by_role("button", name="Comment on the selected words")
    comment.click()
    preview = page.inner_text("#thread-selected")
    assert "Parse the totals" in preview
    assert "CRW-" not in preview  # the task keys and statuses are no words of the file
    assert "Backlog" not in preview
    page.fill("#thread-body", "Is the summary parsed before the migration runs?")
    shot(page, f"specs/tasks-md-new-thread-{width}-{scheme}")
    page.get_by_role("button", name="Start the thread").click()
    page.wait_for_url(re.compile(r".*/specs/files/spf_[^#]+#thread-sct_\w+$"))
    assert "Started a thread." in page.inner_text(".flash")
    owner = owner_of(db, world["owner"])
    listed = present.list_spec_file_comments(
        db, owner, project="CRW", ref=FileRef(file_id=made["id"])
    )["threads"]
    start = PLAN.index("migration for the")
    end = PLAN.index("Parse the totals") + len("Parse the totals")
    assert [(t["anchor"]["start"], t["anchor"]["end"]) for t in listed] == [(start, end)]
    assert listed[0]["anchor"]["quote"] == PLAN[start:end]
    assert "- [x] Parse the totals" in listed[0]["anchor"]["quote"]
    marked_beside_the_thread(page, width)
    # A marked passage in a title clicked shows its thread and ticks no box.
    page.locator("#task-line-5 label.task-title mark.hl").last.click()
    assert page.evaluate("document.getElementById('task-box-5').checked") is False
    assert "active" in (page.locator("article.thread").first.get_attribute("class") or "")
    fits(page, width)
    assert not (found := axe.violations(page)), axe.describe(found)
    shot(page, f"specs/tasks-md-thread-{width}-{scheme}")
    # Ticking a box saves the next revision, as on a page with no threads.
    page.get_by_role("checkbox", name="Document the rollout").check()
    page.wait_for_function(
        "() => /saved revision 2/.test(document.querySelector('[data-tasks-md-status]').textContent)"
    )
    text, revision = read_back(db, world["owner"], made["id"])
    assert revision == 2
    assert "- [x] Document the rollout" in text
    assert "- [ ] Write the migration" in text  # the selection ticked nothing
