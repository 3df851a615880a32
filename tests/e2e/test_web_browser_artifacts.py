"""Artifacts in a real browser: an agent writes an HTML mockup over MCP (a page, its stylesheet,
an image, and a script that tries everything a hostile mockup would); a person opens the
artifact, compares two revisions, and previews it. In the preview the mockup's own files load
and its script runs, but it reads no cookie or storage of the app, cannot touch the page around
it, and fetches nothing; opened on its own, the file is just as sandboxed.

Screenshots land in test-output/screenshots/artifacts/.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest

from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
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

pytestmark = pytest.mark.browser
__all__ = ["browser", "page", "world"]  # fixtures used by name

# One pixel, red.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Login mockup</title>
<link rel="stylesheet" href="site.css"></head>
<body><h1>Sign in</h1><img id="logo" src="img/logo.png" alt="logo">
<ul id="probes"></ul>
<script src="app.js"></script></body></html>
"""
PROBES = """
function probe(name, attempt) {
  var item = document.createElement('li');
  item.id = 'probe-' + name;
  try { item.textContent = name + ': reached ' + String(attempt()); }
  catch (error) { item.textContent = name + ': blocked'; }
  document.getElementById('probes').appendChild(item);
}
probe('cookie', function () { return document.cookie; });
probe('storage', function () { return window.localStorage.length; });
probe('parent', function () { return window.parent.document.title; });
probe('top', function () { window.top.location.href; return window.top.document.body.innerHTML.length; });
var fetched = document.createElement('li');
fetched.id = 'probe-fetch';
fetched.textContent = 'fetch: pending';
document.getElementById('probes').appendChild(fetched);
fetch('/api/v1/me').then(function (r) { fetched.textContent = 'fetch: reached ' + r.status; })
  .catch(function () { fetched.textContent = 'fetch: blocked'; });
document.body.setAttribute('data-ran', 'yes');
"""


def mockup(url: str, db: Database, email: str) -> None:
    """The agent's two revisions of `login`: the first plain, the second with the probes."""
    user = db.read(lambda uow: uow.users.get_by_email(email))
    assert user is not None
    writer = tokens.issue_token(
        db, person_actor(user), kind="agent", project="CRW", scopes=["read", "specs.write"]
    )

    async def work(agent: Any) -> None:
        on = {"projectId": "CRW", "workspaceId": None}
        await agent_call(agent, "create_artifact", {**on, "slug": "login", "title": "Login mockup",
            "files": [{"path": "index.html", "content": PAGE.replace("<script", "<!--script")
                       .replace("</script>", "-->")},
                      {"path": "site.css", "content": "h1 { color: rgb(0, 0, 128); }\n"},
                      {"path": "img/logo.png", "contentBase64": base64.b64encode(PNG).decode()}]})  # fmt: skip
        await agent_call(agent, "write_artifact_revision", {**on, "artifactId": "login",
            "baseRevision": 1, "expectedVersion": 1,
            "files": [{"path": "index.html", "content": PAGE},
                      {"path": "app.js", "content": PROBES}]})  # fmt: skip

    as_agent(url, writer.secret, work)


def test_a_mockup_runs_in_its_sandbox_and_reaches_nothing_of_the_app(
    page: Any, url: str, db: Database, world: dict[str, str]
) -> None:
    mockup(url, db, world["owner"])
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
    sign_in(page, world["owner"])
    page.evaluate("window.localStorage.setItem('app-secret', 'kept')")
    page.goto("/p/CRW/artifacts")
    page.get_by_role("link", name="Login mockup").click()
    page.wait_for_url(re.compile(r".*/artifacts/login$"))
    assert "revision 2 of 2" in page.inner_text("main")
    assert not (found := axe.violations(page)), axe.describe(found)
    page.select_option("#diff-path", "index.html")
    page.select_option("#diff-from", "1")
    page.select_option("#diff-to", "2")
    page.get_by_role("button", name="Show changes").click()
    page.wait_for_url(re.compile(r".*from=1&to=2$"))
    assert '+<script src="app.js"></script></body></html>' in page.inner_text("pre.diff ins")
    shot(page, "artifacts/diff")

    page.get_by_role("link", name="Revision 2").click()
    page.get_by_role("link", name="Preview").click()
    page.wait_for_url(re.compile(r".*/artifacts/login/preview\?revision=2$"))
    frame_element = page.wait_for_selector("iframe.preview-frame")
    assert frame_element.get_attribute("sandbox") == "allow-scripts"
    frame = frame_element.content_frame()
    assert frame is not None
    frame.wait_for_selector("body[data-ran=yes]")
    frame.wait_for_function(
        "document.getElementById('probe-fetch').textContent !== 'fetch: pending'"
    )
    said = {
        name: frame.inner_text(f"#probe-{name}")
        for name in ("cookie", "storage", "parent", "top", "fetch")
    }
    assert said == {name: f"{name}: blocked" for name in said}, said
    # Its own files load: the stylesheet applies and the image decodes.
    assert frame.evaluate("getComputedStyle(document.querySelector('h1')).color") == (
        "rgb(0, 0, 128)"
    )
    assert frame.evaluate("document.getElementById('logo').naturalWidth") == 1
    assert [f for f in failed if "/preview/" in f] == []  # no file of its own was refused
    # The page around it is untouched, the session still works.
    assert page.evaluate("window.localStorage.getItem('app-secret')") == "kept"
    assert page.locator("h1").first.inner_text() == "Login mockup, revision 2"
    assert not (found := axe.violations(page)), axe.describe(found)
    shot(page, "artifacts/preview")

    # Opened on its own (a new tab on the frame's address), the file is sandboxed too.
    alone = page.context.new_page()
    alone.goto(frame.url)
    alone.wait_for_selector("body[data-ran=yes]")
    assert alone.inner_text("#probe-cookie") == "cookie: blocked"
    assert alone.evaluate("window.origin") == "null"
    alone.close()
    page.goto("/p/CRW/artifacts/login")
    assert "Login mockup" in page.inner_text("h1")
