"""Issue 38's names and truths in a real browser, at 1280x860 and 390x844, light and dark: work
through a person's own token and an agent's shown by the one naming rule; the token form's
presets; search finding spec files, artifacts and handoffs with rendered excerpts (page and
Ctrl-K dialog); a one-zone project's handoffs; the week's today column kept short. axe-core
finds nothing serious or critical; nothing is wider than the window.

Screenshots land in test-output/screenshots/names/.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from crewboard.contract.handoffs import present as handoffs_present
from crewboard.domain.clock import ManualClock
from crewboard.domain.handoffs import Bodies
from crewboard.domain.identity.records import User
from crewboard.services.artifacts import artifacts
from crewboard.services.artifacts.artifacts import FileInput
from crewboard.services.board import tasks
from crewboard.services.handoffs import commands as handoffs
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import axe, spec_calls
from tests.support.browser_pages import browser, page, shot, sign_in, world
from tests.support.factories import token_actor

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name

SIZES = [(1280, 860), (390, 844)]
SCHEMES = ["light", "dark"]
STRETCHES = 9  # tasks in progress today


def owner_of(db: Database, world: dict[str, str]) -> User:
    found = db.read(lambda uow: uow.users.get_by_email(world["owner"]))
    assert found is not None
    return found


def seed(db: Database, world: dict[str, str]) -> None:
    """Work through the owner's own token ("laptop") and their agent token (the Coder seat):
    spec files, an artifact, a handoff, all mentioning pelicans; tasks in progress today."""
    owner = owner_of(db, world)
    laptop = token_actor(db, owner, ["read", "specs.write", "tasks.manage"], name="laptop")
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", project="CRW", name="night agent",
        scopes=["read", "specs.write"], seat=world["seat"],
    )  # fmt: skip
    agent = tokens.authenticate_token(db, issued.secret)
    for actor, path, text in (
        (laptop, "docs/birds.md", "# Birds\n\nThe **pelican** flies with `wings()`.\n"),
        (agent, "docs/agent-notes.md", "Notes: a *pelican* was seen.\n"),
    ):
        spec_calls.upload_spec_file(
            db, actor, project="CRW", workspace_id=None, path=path, content=text.encode(),
            idempotency_key=None,
        )  # fmt: skip
    artifacts.create_artifact(
        db, laptop, project="CRW", workspace_id=None, slug="pelican-mock", title="Pelican mock",
        description="A mock", files=[FileInput("index.html", b"<p>pelican page</p>")],
        idempotency_key=None, answer=lambda written: {"slug": written.artifact.slug},
    )  # fmt: skip
    handoffs.create_handoff(
        db, laptop, project="CRW", workspace_id=None,
        bodies=Bodies(completed="Fed the **pelican**", next_steps="Check `nest.py`"),
        answer=lambda made: handoffs_present.handoff_view(made.read, laptop),
    )  # fmt: skip
    for number in range(STRETCHES):
        tasks.create_task(
            db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key=None,
            title=f"Stretch number {number} with a title long enough to wrap twice",
            status="in_progress", assignee_id=owner.id, assignee_type="human",
        )  # fmt: skip


def look(page: Any, name: str, width: int) -> None:
    """Keep a screenshot, check axe and that the page fits its window."""
    shot(page, f"names/{name}")
    assert not (found := axe.violations(page)), axe.describe(found)
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{page.url} is {wide} px wide at {width}"


VIEWS = [(w, h, scheme) for w, h in SIZES for scheme in SCHEMES]


@pytest.mark.parametrize("view", VIEWS, ids=[f"{w}-{s}" for w, _, s in VIEWS])
def test_names_presets_search_handoffs_and_the_week_as_a_person_sees_them(
    page: Any, db: Database, world: dict[str, str], clock: ManualClock,
    view: tuple[int, int, str],
) -> None:  # fmt: skip
    width, height, scheme = view
    seed(db, world)
    clock.advance(timedelta(hours=2))
    page.emulate_media(color_scheme=scheme)
    sign_in(page, world["owner"])
    page.set_viewport_size({"width": width, "height": height})
    tag = f"{width}-{scheme}"
    names(page, tag, width)
    one_zone_handoffs(page, tag, width)
    token_presets(page, tag, width)
    search(page, tag, width)
    week(page, tag, width)


def names(page: Any, tag: str, width: int) -> None:
    """The person via their token, the agent as its seat for its person."""
    page.goto("/p/CRW/specs")
    listed = page.inner_text("main")
    assert "owner via laptop" in listed
    assert "Coder (for owner)" in listed
    assert "by laptop" not in listed
    assert "Trash bin" in page.inner_text("p.spec-links")
    look(page, f"specs-{tag}", width)
    page.goto("/p/CRW/activity")
    assert "owner via laptop" in page.inner_text("main")
    look(page, f"activity-{tag}", width)


def one_zone_handoffs(page: Any, tag: str, width: int) -> None:
    """Handoffs of a one-zone project, the saved one with its change form beside it."""
    page.goto("/p/CRW/handoffs")
    shown = page.inner_text("main")
    assert "UTC hands over to UTC" not in shown
    assert "Both of this project's shifts work in UTC" in shown
    assert page.locator("section:has(#shift-1) details.handoff-change").count() == 1
    look(page, f"handoffs-{tag}", width)


def token_presets(page: Any, tag: str, width: int) -> None:
    """The board-and-review agent by default; a preset fills the form; a change by hand is
    custom."""
    page.goto("/settings/tokens")
    assert page.is_checked("input[name=preset][value=agent-board-review]")
    assert page.is_checked("input[name=kind][value=agent]")
    assert page.is_checked("input[name=scopes][value='drafts.create']")
    page.check("input[name=preset][value=read-only]")
    assert page.is_checked("input[name=kind][value=personal]")
    assert not page.is_checked("input[name=scopes][value='tasks.manage']")
    page.check("input[name=preset][value=agent-planning]")
    assert page.is_checked("input[name=toolsets][value=planning]")
    page.check("input[name=toolsets][value=handoffs]")
    assert page.is_checked("input[name=preset][value=custom]")
    look(page, f"tokens-{tag}", width)


def search(page: Any, tag: str, width: int) -> None:
    """The page, then the Ctrl-K dialog: spec files, artifacts, handoffs, rendered."""
    page.goto("/p/CRW/search?q=pelican")
    results = page.inner_text("#search-results")
    for heading in ("Spec files", "Artifacts", "Handoffs"):
        assert heading in results
    assert "**" not in results
    assert "`" not in results
    assert "<p>" not in results
    assert "The pelican flies with wings()." in results
    assert page.locator("#search-results mark").first.inner_text().lower() == "pelican"
    look(page, f"search-page-{tag}", width)
    page.goto("/p/CRW/board")
    page.keyboard.press("Control+k")
    page.keyboard.type("pelican")
    page.wait_for_function(
        "() => (document.getElementById('search-dialog-count') || {}).textContent"
        " && document.getElementById('search-dialog-count').textContent.indexOf('spec file') >= 0"
    )
    assert "Handoffs" in page.get_by_role("dialog", name="Search CRW").inner_text()
    look(page, f"search-dialog-{tag}", width)
    page.keyboard.press("Escape")


def week(page: Any, tag: str, width: int) -> None:
    """Today's column stays short however many stretches it holds."""
    page.goto("/p/CRW/week")
    today = page.locator("li.day.today")
    assert today.locator("li.stretch").count() == STRETCHES
    assert today.locator("details.more-stretches summary").inner_text() == f"{STRETCHES - 4} more"
    height_today = today.bounding_box()["height"]
    assert height_today < 420, f"today's column is {height_today} px tall"
    look(page, f"week-{tag}", width)
