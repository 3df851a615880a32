"""The web app in a real browser: Debian's Chromium driven by Playwright, a real server,
an agent on the official MCP SDK client handing work in while a person reviews it.

Screenshots of the main pages land in test-output/screenshots/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from crewboard.contract.sessions.present import started_answer
from crewboard.domain.sessions import Mode
from crewboard.services.artifacts.artifacts import FileInput
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import sessions
from crewboard.services.specs.file_lookup import FileRef
from crewboard.services.webhooks import deliveries as webhook_deliveries
from crewboard.services.webhooks import subscriptions
from crewboard.storage.database import Database
from tests.conftest import POSTGRESQL_IN_THE_SLOW_RUN
from tests.support import artifact_calls, axe, spec_calls
from tests.support.browser_pages import (
    LIVE,
    LONG,
    XSS,
    agent_call,
    agent_side,
    as_agent,
    browser,
    change_over_mcp,
    hand_in,
    page,
    read_over_mcp,
    shot,
    sign_in,
    world,
)
from tests.support.factories import PASSWORD
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.browser
# A real 1×1 PNG (a preview the browser can draw).
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005fe02fea7d1a1e60000000049454e44ae426082"
)
__all__ = ["browser", "page", "world"]  # fixtures used by name


def test_a_person_reviews_an_agents_work_live_and_approves_it_into_memory(
    page: Any, url: str, world: dict[str, str]
) -> None:
    sign_in(page, world["owner"])
    assert page.locator("[data-live-region]").count() == 1
    shot(page, "inbox-empty")

    first = hand_in(url, world["secret"], world["task"], "hand-in-1", "First try.\n\n" + XSS)
    link = page.locator(f"a[href$='/inbox/drafts/{first['draft']['id']}']")
    link.wait_for(timeout=LIVE)  # arrived live: the page was not reloaded
    shot(page, "inbox")
    link.click()
    page.wait_for_url(re.compile(r".*/inbox/drafts/drf_.*"))
    assert page.evaluate("window.__xss") is None  # neither the script nor the handler ran
    assert "First try." in page.inner_text(".rendered")
    shot(page, "hand-in")
    page.fill("#revise-comment", "Also cover expired tokens.")
    page.click("form[action$='/revise'] button[type=submit]")
    page.wait_for_url(re.compile(r".*/p/CRW/inbox.*"))

    follow_up = _follow_up(url, world)
    second = hand_in(url, world["secret"], follow_up, "hand-in-2", "Both cases are fixed.")
    link = page.locator(f"a[href$='/inbox/drafts/{second['draft']['id']}']")
    link.wait_for(timeout=LIVE)
    link.click()
    page.select_option("#save-collection", "architecture")
    page.select_option("#save-document", "decisions")
    page.click("form[action$='/save'] button[type=submit]")
    page.wait_for_url(re.compile(r".*/p/CRW/inbox.*"))

    page.goto("/p/CRW/memory")
    assert "Result for" in page.inner_text("main")
    shot(page, "memory")
    for area in ("board", "state", "week", "team", "activity", "settings/project"):
        page.goto(f"/p/CRW/{area}")
        assert page.locator("h1").count() >= 1
        shot(page, area.replace("/", "-"))
    page.goto(f"/p/CRW/tasks/{follow_up}")
    shot(page, "task")


def _follow_up(url: str, world: dict[str, str]) -> str:
    """The follow-up task the revision made, as the agent finds it (its subtasks)."""
    arguments = {"projectId": "CRW", "parentTaskId": world["task"], "projection": "summary"}
    found = as_agent(url, world["secret"], lambda agent: agent_call(agent, "list_tasks", arguments))
    return str(found["tasks"][0]["id"])


def test_a_task_moves_on_the_board(page: Any, world: dict[str, str]) -> None:
    sign_in(page, world["owner"])
    page.goto("/p/CRW/board")
    tile = page.locator(".tile", has_text="Fix the login redirect after session expiry")
    tile.first.wait_for()
    # A card has no controls of its own: its box chooses it for the bar that moves it.
    tile.first.locator(".pick").check()
    bar = page.locator("#bulk-form")
    bar.locator("#bulk-status").select_option("in_progress")
    bar.get_by_role("button", name="Apply").click()
    column = page.locator(
        "section", has=page.locator("h2", has_text=re.compile("in.progress", re.I))
    )
    page.wait_for_function(
        "() => document.querySelector('.tiles[data-column=\"in_progress\"] .tile')"
    )
    assert "Fix the login redirect after session expiry" in column.first.inner_text()
    shot(page, "board-moved")


def test_an_edit_saves_two_fields_and_a_conflicting_one_keeps_the_typed_text(
    page: Any, url: str, world: dict[str, str]
) -> None:
    sign_in(page, world["owner"])
    task_page = "/p/CRW/tasks/CRW-1"
    page.goto(task_page)
    page.click("#task-edit > summary")  # the edit form is closed until asked for
    page.fill("#edit-title", "Fix the login redirect (edited)")
    page.fill("#edit-description", "First line\nSecond line")
    page.click("#h-edit ~ form button[type=submit]")
    page.wait_for_url(re.compile(r".*/p/CRW/tasks/CRW-1$"))
    assert "Saved CRW-1 (title, description)." in page.locator(".flash").inner_text()
    saved = read_over_mcp(url, world["secret"], "CRW-1")
    assert saved["description"] == "First line\nSecond line"  # no CR from the textarea

    # The person types; meanwhile the agent changes the title over MCP.
    page.click("#task-edit > summary")
    page.fill("#edit-description", "My rewrite\nkept across the conflict")
    change_over_mcp(url, world["secret"], "CRW-1", {"title": "Title from the agent"})
    page.click("#h-edit ~ form button[type=submit]")
    page.wait_for_load_state()
    assert "Not saved" in page.locator(".flash").inner_text()
    assert "Title from the agent" in page.locator(".conflict").inner_text()
    assert page.input_value("#edit-description") == "My rewrite\nkept across the conflict"
    assert page.input_value("#edit-title") == "Title from the agent"  # theirs: untouched here
    shot(page, "task-edit-conflict")
    page.set_viewport_size({"width": 390, "height": 844})
    shot(page, "task-edit-conflict-390")
    width = page.evaluate("document.documentElement.scrollWidth")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.click("#h-edit ~ form button[type=submit]")
    page.wait_for_url(re.compile(r".*/p/CRW/tasks/CRW-1$"))
    final = read_over_mcp(url, world["secret"], "CRW-1")
    assert (final["title"], final["description"]) == (
        "Title from the agent",
        "My rewrite\nkept across the conflict",
    )
    assert width <= 390


def test_a_first_visit_loads_without_a_failed_request_and_a_wrong_url_gets_a_way_back(
    page: Any, world: dict[str, str]
) -> None:
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    sign_in(page, world["owner"])
    page.wait_for_load_state("networkidle")
    assert failed == []  # the favicon included
    page.goto("/p/CRW/no-such-page")
    assert page.locator("h1").inner_text() == "Page not found"
    shot(page, "not-found")
    page.get_by_role("link", name="The CRW board").click()
    page.wait_for_url(re.compile(r".*/p/CRW/board$"))


EVERY_PAGE = (
    "/p/CRW/inbox",
    "/p/CRW/inbox/drafts/{draft}",
    "/p/CRW/inbox/proposals/{proposal}",
    "/p/CRW/start",
    "/p/CRW/board",
    "/p/CRW/tasks/CRW-1",
    "/p/CRW/memory",
    "/p/CRW/memory/records/{record}",
    "/p/CRW/memory/documents/decisions",
    "/p/CRW/state",
    "/p/CRW/week",
    "/p/CRW/team",
    "/p/CRW/activity",
    "/p/CRW/search?q=example",
    "/p/CRW/specs",
    "/p/CRW/specs/files/{spec}",
    "/p/CRW/specs/files/{spec}?from=1&to=2",
    "/p/CRW/specs/files/{spec}/edit",
    "/p/CRW/specs/files/{tasks}",
    "/p/CRW/specs?trashed=1",
    "/p/CRW/attachments",
    "/p/CRW/artifacts",
    "/p/CRW/artifacts/mockup",
    "/p/CRW/artifacts/mockup?path=index.html&from=1&to=2",
    "/p/CRW/artifacts/mockup/preview",
    "/p/CRW/settings/project",
    "/p/CRW/sessions",
    "/p/CRW/sessions/{session}",
    "/p/CRW/settings/spec-sessions",
    "/p/CRW/settings/github",
    "/p/CRW/settings/webhooks",
    "/p/CRW/settings/webhooks/{webhook}",
    "/settings/models",
    "/settings/tokens",
    "/settings/workspaces",
    "/settings/password",
    "/p/CRW/no-such-page",
)


def spec_world(db: Database, email: str) -> tuple[str, str]:
    """A spec file with two revisions (a long URL in them), a tasks.md with a long task title
    and an image attachment; the two files' ids."""
    user = db.read(lambda uow: uow.users.get_by_email(email))
    assert user is not None
    owner = person_actor(user)
    text = f"# Design\n\nSessions expire. See {LONG}\n"
    made = spec_calls.upload_spec_file(
        db, owner, project="CRW", workspace_id=None, path="docs/design.md",
        content=text.encode(), idempotency_key=None,
    ).body["file"]  # fmt: skip
    spec_calls.update_spec_file(
        db, owner, project="CRW", workspace_id=None, ref=FileRef(file_id=made["id"]),
        content=(text + "Tokens rotate daily.\n").encode(),
        expected_version=made["contentVersion"], idempotency_key=None,
    )  # fmt: skip
    spec_calls.upload_attachment(
        db, owner, project="CRW", workspace_id=None, name=f"diagram-{'x' * 80}.png",
        content=PNG, override=False, idempotency_key=None,
    )  # fmt: skip
    mockup = [FileInput("index.html", f"<h1>Mockup</h1>\n<p>{LONG}</p>\n".encode())]
    artifact_calls.create_artifact(
        db, owner, project="CRW", workspace_id=None, slug="mockup", title=f"Mockup {LONG}"[:200],
        description=LONG, files=mockup, idempotency_key=None,
    )  # fmt: skip
    artifact_calls.write_artifact_revision(
        db, owner, project="CRW", workspace_id=None, ref="mockup",
        files=[FileInput("index.html", b"<h1>Mockup, again</h1>\n")], remove=[],
        base_revision=None, expected_version=1, idempotency_key=None,
    )  # fmt: skip
    plan = spec_calls.upload_spec_file(
        db, owner, project="CRW", workspace_id=None, path="release/tasks.md",
        content=f"# Plan\n\n- [ ] Read {LONG}\n- [x] Ship\n".encode(), idempotency_key=None,
    ).body["file"]  # fmt: skip
    return str(made["id"]), str(plan["id"])


def session_world(db: Database, email: str) -> str:
    """A spec session with a long unbroken title and opening message (no model is configured:
    its first turn fails, and the page says why); its id."""
    user = db.read(lambda uow: uow.users.get_by_email(email))
    assert user is not None
    made = sessions.start_session(
        db, person_actor(user), project="CRW", workspace_id=None, mode=Mode.GENERATE,
        prompt=f"Spec the export. See {LONG}", title=f"Export {LONG}"[:200], answer=started_answer,
    )  # fmt: skip
    return str(made.body["sessionId"])


def webhook_world(db: Database, email: str) -> str:
    """A webhook to a long URL (an IP literal: nothing to resolve) with a ping in its log; its
    id."""
    user = db.read(lambda uow: uow.users.get_by_email(email))
    assert user is not None
    path = LONG.removeprefix("https://example.com/")
    made = subscriptions.create_webhook(
        db, person_actor(user), "CRW", url=f"https://93.184.216.34/{path}",
        events=["task.*", "draft.approved"], description=f"CI for {LONG}",
    )  # fmt: skip
    webhook_deliveries.ping_webhook(db, person_actor(user), made.webhook.id)
    return made.webhook.id


@POSTGRESQL_IN_THE_SLOW_RUN  # layout and axe-core do not hang on the database
def test_no_page_is_wider_than_the_window_at_390_and_1280(
    page: Any, url: str, db: Database, world: dict[str, str]
) -> None:
    """Every page, with long unbroken text in it (a URL in a title, a hand-in and a token's
    name), fits the window at phone and desktop widths; tables scroll inside their own box;
    axe-core finds no serious or critical violation at either width, nor in dark mode.
    Screenshots of each land in test-output/screenshots/pages/."""
    axe.preload(page.context)
    draft = hand_in(url, world["secret"], world["task"], "wide-1", f"See {LONG}")["draft"]["id"]

    async def fill_the_board(agent: Any) -> None:  # long titles on a busy board
        for n in range(9):
            title = f"Task {n} about {LONG}"
            await agent_call(
                agent,
                "create_task",
                {
                    "projectId": "CRW",
                    "workspaceId": None,
                    "idempotencyKey": f"wide-task-{n}",
                    "title": title,
                },
            )

    as_agent(url, world["secret"], fill_the_board)

    async def propose(agent: Any) -> str:
        arguments = {"projectId": "CRW", "workspaceId": None, "title": f"Link {LONG}"}
        return str((await agent_call(agent, "propose_task", arguments))["proposal"]["id"])

    proposal = as_agent(url, world["secret"], propose)
    spec, tasks = spec_world(db, world["owner"])
    session = session_world(db, world["owner"])
    webhook = webhook_world(db, world["owner"])
    refused: dict[str, str] = {}
    for width in (1280, 390):  # signed out: the sign-in page
        page.set_viewport_size({"width": width, "height": 860})
        page.goto("/login")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if found := axe.violations(page):
            refused[f"/login at {width}"] = axe.describe(found)
    sign_in(page, world["owner"])
    # Both widths in the light scheme, then the desktop width with the system set to dark.
    for width, scheme in ((1280, "light"), (390, "light"), (1280, "dark")):
        page.set_viewport_size({"width": width, "height": 860})
        page.emulate_media(color_scheme=scheme)
        for path in EVERY_PAGE:
            page.goto(
                path.format(
                    draft=draft,
                    proposal=proposal,
                    record=world["record"],
                    spec=spec,
                    tasks=tasks,
                    session=session,
                    webhook=webhook,
                )
            )
            wide = page.evaluate("document.documentElement.scrollWidth")
            name = path.strip("/").replace("/", "_").replace("{", "").replace("}", "")
            shot(page, f"pages/{name}-{width}" + ("-dark" if scheme == "dark" else ""))
            assert wide <= width, f"{path} is {wide} px wide at {width}"
            if found := axe.violations(page):
                refused[f"{path} at {width} ({scheme})"] = axe.describe(found)
            if scheme == "dark":  # the page really is dark: light text on a dark ground
                ground = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
                assert ground == "rgb(21, 23, 27)", f"{path} is not dark: {ground}"
    assert refused == {}, "\n".join(f"{where}:\n{what}" for where, what in refused.items())


def test_a_new_token_shows_its_config_once_and_works_over_mcp(
    page: Any, url: str, world: dict[str, str]
) -> None:
    sign_in(page, world["owner"])
    page.goto("/settings/tokens")
    page.fill("input[name=name]", "My laptop")
    page.check("input[name=scopes][value='tasks.manage']")
    page.locator("form[action='/settings/tokens'] button[type=submit]").click()
    secret = page.inner_text("#token-secret").strip()
    assert secret.startswith("cb_")
    configs = page.inner_text("main")
    assert f"{url}/mcp" in configs
    assert configs.count(secret) >= 4  # the secret and the three client configs
    shot(page, "token-created")

    async def use() -> list[str]:
        async with mcp_client(url, secret, "2026-07-28") as client:
            listed = body_of(await client.call_tool("list_projects", {}))
            return [p["key"] for p in listed["projects"]]

    assert agent_side(use) == ["CRW"]
    page.goto("/settings/tokens")
    assert secret not in page.content()  # shown once only
    assert "My laptop" in page.inner_text("main")


def test_a_cross_site_form_post_is_refused(
    page: Any, browser: Any, url: str, world: dict[str, str]
) -> None:
    sign_in(page, world["owner"])
    token = page.locator("input[name=csrf]").first.get_attribute("value")
    attacker = page.context.new_page()
    attacker.set_content(
        f'<form id="f" method="post" action="{url}/settings/password">'
        f'<input name="csrf" value="{token}"><input name="current" value="{PASSWORD}">'
        '<input name="new" value="taken over by evil"><input name="repeat" value="taken over by evil">'
        "</form>"
    )
    with attacker.expect_navigation():
        attacker.evaluate("document.getElementById('f').submit()")
    assert "was not sent from a Crewboard page" in attacker.content() or "not accepted" in (
        attacker.content()
    )
    attacker.close()
    # The password did not change: signing in with it still works.
    fresh = browser.new_context(base_url=url)
    other = fresh.new_page()
    other.goto("/login")
    other.fill("#email", world["owner"])
    other.fill("#password", PASSWORD)
    other.click("button[type=submit]")
    other.wait_for_url(re.compile(r".*/p/CRW/inbox$"))
    fresh.close()
