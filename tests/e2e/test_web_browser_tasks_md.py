"""A `tasks.md` in a real browser, at a desktop and a phone width, light and dark: its checkbox
lines are boxes; ticking one saves the file's next revision without a reload and the board's
task moves; a page left open while someone saved says so and keeps the box as it was; the
diff of the two revisions shows the sign in its own column (a copy takes only the text);
removing a task's line on the edit page asks what becomes of its task before saving.

Screenshots land in test-output/screenshots/tasks_md/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from crewboard.domain.board.tasks import TaskStatus
from crewboard.services.identity.users import person_actor
from crewboard.services.specs import files
from crewboard.services.specs.file_lookup import FileRef
from crewboard.storage.database import Database
from tests.support import axe, spec_calls
from tests.support.browser_pages import browser, page, shot, sign_in, world

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name

PLAN = (
    "# Checkout plan\n\n"
    "Work for the cart summary, in order.\n\n"
    "- [ ] Write the migration for the **cart summary**\n"
    "  Two columns, both nullable; see the [schema notes](https://example.com/schema).\n"
    "  - backfill in batches of 1,000\n"
    "  - drop the old view afterwards\n"
    "- [x] Parse the totals from the basket service\n"
    "- [-] Wire the board to the new endpoint\n"
    "- [ ] Document the rollout\n"
)
VIEWS = [
    pytest.param(1280, "light", id="1280-light"),
    pytest.param(390, "light", id="390-light"),
    pytest.param(1280, "dark", id="1280-dark"),
    pytest.param(390, "dark", id="390-dark"),
]


def owner_of(db: Database, email: str) -> Any:
    user = db.read(lambda uow: uow.users.get_by_email(email))
    assert user is not None
    return person_actor(user)


def plan(db: Database, email: str) -> dict[str, Any]:
    made = spec_calls.upload_spec_file(
        db, owner_of(db, email), project="CRW", workspace_id=None, path="checkout/tasks.md",
        content=PLAN.encode(), idempotency_key=None,
    )  # fmt: skip
    return dict(made.body["file"])


def status_of(db: Database, file_id: str, title_start: str) -> tuple[str, TaskStatus]:
    found = db.read(lambda uow: uow.tasks.of_source_files([file_id]))
    task = next(t for t in found if t.title.startswith(title_start))
    return f"CRW-{task.number}", task.status


def read_back(db: Database, email: str, file_id: str) -> tuple[str, int]:
    read = files.read_file_bytes(db, owner_of(db, email), project="CRW", ref=FileRef(file_id))
    return read.data.decode(), read.file.revision_count


def open_as(page: Any, email: str, width: int, scheme: str, path: str) -> None:
    page.set_viewport_size({"width": width, "height": 860 if width > 400 else 844})
    page.emulate_media(color_scheme=scheme)
    sign_in(page, email)
    page.goto(path)


def fits(page: Any, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert not (found := axe.violations(page)), axe.describe(found)


@pytest.mark.parametrize(("width", "scheme"), VIEWS)
def test_ticking_a_box_saves_a_revision_and_the_boards_task_moves(
    page: Any, db: Database, world: dict[str, str], width: int, scheme: str
) -> None:
    made = plan(db, world["owner"])
    open_as(page, world["owner"], width, scheme, f"/p/CRW/specs/files/{made['id']}")
    boxes = page.locator("input.task-box")
    assert boxes.count() == 4
    assert page.evaluate(
        "[...document.querySelectorAll('input.task-box')].map(b => b.indeterminate ? 'mixed' : b.checked)"
    ) == [False, True, "mixed", False]  # fmt: skip
    first = page.locator("#task-line-5")
    assert first.locator(".task-title").inner_text() == "Write the migration for the cart summary"
    # The detail is its own paragraph and list under the title, not part of it.
    assert first.locator(":scope > p").inner_text().startswith("Two columns, both nullable")
    assert first.locator(":scope > ul > li").count() == 2
    key, status = status_of(db, made["id"], "Write the migration")
    assert status is TaskStatus.BACKLOG
    assert first.get_by_role("link", name=key).count() == 1
    assert (
        page.get_by_role("checkbox", name="Write the migration for the cart summary").count() == 1
    )
    fits(page, width)
    shot(page, f"tasks_md/file-{width}-{scheme}")

    page.evaluate("window.__same_page = true")
    page.get_by_role("checkbox", name="Write the migration for the cart summary").check()
    page.wait_for_function(
        "() => /saved revision 2/.test(document.querySelector('[data-tasks-md-status]').textContent)"
    )
    assert page.evaluate("window.__same_page") is True  # no reload
    assert first.locator("[data-task-status]").inner_text() == "Done"
    assert page.locator("[data-file-revision]").inner_text() == "2"
    assert page.locator('[data-file-task-line="5"]').inner_text() == "Done"  # the side list too
    text, revision = read_back(db, world["owner"], made["id"])
    assert revision == 2
    assert "- [x] Write the migration" in text
    assert status_of(db, made["id"], "Write the migration")[1] is TaskStatus.DONE
    # The mixed box ticks to done, from the version the first tick gave the page.
    page.get_by_role("checkbox", name="Wire the board to the new endpoint").check()
    page.wait_for_function(
        "() => /saved revision 3/.test(document.querySelector('[data-tasks-md-status]').textContent)"
    )
    fits(page, width)
    shot(page, f"tasks_md/ticked-{width}-{scheme}")

    page.goto("/p/CRW/board")
    done = page.eval_on_selector_all(
        '.tiles[data-column="done"] .tile', "els => els.map(e => e.dataset.key)"
    )
    assert key in done


def test_a_page_left_open_while_someone_saved_says_so_and_keeps_the_box(
    page: Any, db: Database, world: dict[str, str]
) -> None:
    made = plan(db, world["owner"])
    open_as(page, world["owner"], 1280, "light", f"/p/CRW/specs/files/{made['id']}")
    spec_calls.update_spec_file(
        db, owner_of(db, world["owner"]), project="CRW", workspace_id=None,
        ref=FileRef(file_id=made["id"]), content=(PLAN + "- [ ] Tell support\n").encode(),
        expected_version=made["contentVersion"], idempotency_key=None,
    )  # fmt: skip
    page.get_by_role("checkbox", name="Document the rollout").click()  # refused: unticks again
    problem = page.locator("#task-line-11 .task-problem")
    problem.wait_for()
    assert "saved revision 2" in problem.inner_text()
    assert "Nothing was lost" in problem.inner_text()
    assert page.get_by_role("checkbox", name="Document the rollout").is_checked() is False
    assert read_back(db, world["owner"], made["id"])[1] == 2
    assert not (found := axe.violations(page)), axe.describe(found)
    shot(page, "tasks_md/stale-1280-light")
    problem.get_by_role("link", name="Show the new text").click()
    page.get_by_role("checkbox", name="Tell support").wait_for()


@pytest.mark.parametrize(("width", "scheme"), VIEWS)
def test_the_diff_keeps_the_sign_in_its_own_column_out_of_a_copy(
    page: Any, db: Database, world: dict[str, str], width: int, scheme: str
) -> None:
    made = plan(db, world["owner"])
    spec_calls.update_spec_file(
        db, owner_of(db, world["owner"]), project="CRW", workspace_id=None,
        ref=FileRef(file_id=made["id"]),
        content=PLAN.replace("- [ ] Document", "- [x] Document").encode(),
        expected_version=made["contentVersion"], idempotency_key=None,
    )  # fmt: skip
    open_as(page, world["owner"], width, scheme, f"/p/CRW/specs/files/{made['id']}?from=1&to=2")
    assert page.locator(".line-diff del").inner_text() == "- [ ] Document the rollout"
    assert page.locator(".line-diff ins").inner_text() == "- [x] Document the rollout"
    copied = page.evaluate(
        """() => {
            const range = document.createRange();
            range.selectNodeContents(document.querySelector('.line-diff'));
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
            const copied = selection.toString();
            selection.removeAllRanges();
            return copied;
        }"""
    )
    assert "- [ ] Document the rollout\n- [x] Document the rollout" in copied
    assert "+- [" not in copied
    assert "−" not in copied
    # Without colour: each changed row shows its sign, drawn in the gutter.
    signs = page.eval_on_selector_all(
        ".line-diff .dl .sign",
        "els => els.map(e => getComputedStyle(e, '::before').content)",
    )
    assert any(s.startswith('"+"') for s in signs)
    assert any(s.startswith('"−"') for s in signs)
    fits(page, width)
    shot(page, f"tasks_md/diff-{width}-{scheme}")


@pytest.mark.parametrize(("width", "scheme"), VIEWS)
def test_removing_a_task_line_asks_what_becomes_of_its_task(
    page: Any, db: Database, world: dict[str, str], width: int, scheme: str
) -> None:
    made = plan(db, world["owner"])
    key, _status = status_of(db, made["id"], "Wire the board")
    wired = next(
        t
        for t in db.read(lambda uow: uow.tasks.of_source_files([made["id"]]))
        if t.title[0] == "W" and t.title.startswith("Wire")
    )
    open_as(page, world["owner"], width, scheme, f"/p/CRW/specs/files/{made['id']}/edit")
    cut = PLAN.replace("- [-] Wire the board to the new endpoint\n", "")
    page.fill("#spec-text", cut)
    page.get_by_role("button", name="Save").click()
    question = page.locator("#leaving")
    question.wait_for()
    assert "Not saved yet: 1 task loses its line" in question.inner_text()
    assert f"{key} Wire the board to the new endpoint" in question.inner_text()
    assert page.input_value("#spec-text") == cut  # the typed text is kept
    assert read_back(db, world["owner"], made["id"])[1] == 1
    fits(page, width)
    shot(page, f"tasks_md/asked-{width}-{scheme}")
    # No choice: the browser holds the form (a choice is required); nothing is saved.
    page.get_by_role("button", name="Save with these choices").click()
    assert page.locator("#leaving").count() == 1
    assert read_back(db, world["owner"], made["id"])[1] == 1
    page.get_by_role("radio", name=re.compile("^Keep it on the board")).check()
    page.get_by_role("button", name="Save with these choices").click()
    page.wait_for_url(re.compile(r".*/specs/files/spf_[^/]+$"))
    assert "kept on the board, no longer in the file" in page.inner_text(".flash")
    assert read_back(db, world["owner"], made["id"]) == (cut, 2)
    task = db.read(lambda uow: uow.tasks.get(wired.id))
    assert task is not None
    assert task.status is TaskStatus.IN_PROGRESS  # on the board as it was
    shot(page, f"tasks_md/kept-{width}-{scheme}")
