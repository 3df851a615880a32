"""The official `mcp` SDK's OAuth client connects to a served Crewboard the way a person's MCP
app does: it registers itself, sends the person's Chromium to authorize (they sign in through
/login and approve on the consent page), takes the code at its loopback callback, trades it for
tokens, calls tools, refreshes, steps up to a scope it lacks, and is stopped by a revoke in
Settings → Connected apps. Both protocol eras, both databases; one served app per backend and
one Chromium for the module.

Each browser-driven connection's time from creating the client to its first tool call's answer
is written to test-output/oauth/connect_times.json (measured, not asserted).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from crewboard.domain.identity.access import Scope
from crewboard.services.identity.users import person_actor
from crewboard.services.oauth import grants
from tests.support.browser_pages import browser
from tests.support.mcp_client import body_of, rpc
from tests.support.oauth import App, mcp_post, query_of, works_on_mcp
from tests.support.oauth_module import app, backend, module_db, owner
from tests.support.oauth_sdk import (
    CallbackServer,
    Declined,
    Desk,
    Person,
    SdkApp,
    approving,
    denying,
)

pytestmark = pytest.mark.browser
__all__ = ["app", "backend", "browser", "module_db", "owner"]  # fixtures used by name

ROOT = Path(__file__).resolve().parents[2]
CONNECT_TIMES = ROOT / "test-output" / "oauth" / "connect_times.json"
ALL_SCOPES = sorted(s.value for s in Scope)
ERA_VERSION = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}  # what each mode speaks


@pytest.fixture
def person(browser: Any, app: App) -> Iterator[Person]:
    """The owner at a fresh (signed-out) Chromium page, with the app's callback listening."""
    with ExitStack() as stack:
        callback = stack.enter_context(CallbackServer())
        context = browser.new_context(base_url=app.url, viewport={"width": 1280, "height": 900})
        stack.callback(context.close)
        page = context.new_page()
        page.set_default_timeout(15_000)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        yield Person(page, app.owner.email, callback)
        assert errors == []  # no script error on any page


def _record_connect_time(backend: str, mode: str, seconds: float, **extra: float) -> None:
    """Print the time and keep it in CONNECT_TIMES under backend/mode (other entries stay)."""
    CONNECT_TIMES.parent.mkdir(parents=True, exist_ok=True)
    times = json.loads(CONNECT_TIMES.read_text()) if CONNECT_TIMES.exists() else {}
    times[f"{backend}/{mode}"] = {
        "connect_to_first_tool_call_s": round(seconds, 3),
        **{k: round(v, 3) for k, v in extra.items()},
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    CONNECT_TIMES.write_text(json.dumps(times, indent=2, sort_keys=True) + "\n")
    print(  # noqa: T201 - the measured time is for whoever reads the run, not an assertion
        f"\n{backend}/{mode}: connect -> first tool call answered in {seconds:.3f} s "
        f"({extra.get('in_browser_s', 0):.3f} s of it in the browser)"
    )


async def _list_projects(client: Client) -> list[str]:
    answer = await client.call_tool("list_projects", {})
    assert not answer.is_error, answer.content
    return [p["key"] for p in body_of(answer)["projects"]]


def test_the_sdk_client_registers_signs_the_person_in_calls_tools_and_refreshes(
    app: App, person: Person, backend: str, mode: str
) -> None:
    desk = Desk(person, [approving()])
    sdk = SdkApp(app.url, f"SDK app ({mode})", desk)
    timings: dict[str, float] = {}

    async def work() -> tuple[list[str], list[str]]:
        start = time.perf_counter()
        async with sdk.connect(mode) as client:
            projects = await _list_projects(client)
            timings["first_call"] = time.perf_counter() - start
            tools = [tool.name for tool in (await client.list_tools()).tools]
            timings["tools_listed"] = time.perf_counter() - start
            first_token = sdk.storage.tokens
            sdk.expire_access_token()
            assert await _list_projects(client) == projects
            assert sdk.storage.tokens is not first_token
            return projects, tools

    projects, tools = desk.run(work)
    _record_connect_time(
        backend,
        mode,
        timings["first_call"],
        connect_to_tools_listed_s=timings["tools_listed"],
        in_browser_s=person.seconds[0],  # the person's part: sign in, consent, back to the app
    )

    assert projects == ["CRW"]
    assert {"list_projects", "list_tasks", "get_task"} <= set(tools)
    _assert_discovered_and_registered(sdk, app, mode)
    # One sign-in through /login, one consent asking what the resource's metadata offers,
    # approved as shown.
    assert sdk.storage.client_info is not None
    assert person.sign_ins == 1
    [consent] = person.consents
    assert consent.heading == f"Connect SDK app ({mode}) to Crewboard?"
    assert sorted(consent.ticked) == ALL_SCOPES
    [asked] = desk.asked
    assert asked.startswith(f"{app.issuer}/oauth/authorize?")
    [returned] = desk.returned
    assert returned.startswith(f"{person.callback.redirect_uri}?code=cbc_")
    [made] = [
        g
        for g in grants.list_connections(app.db, person_actor(app.owner))
        if g.client_id == sdk.storage.client_info.client_id
    ]
    assert sorted(s.value for s in made.scopes) == ALL_SCOPES

    # The refresh: one authorization_code exchange, then one refresh_token rotation; the call
    # after it carried the new access token.
    first, second = sdk.storage.token_history
    code_form, refresh_form = sdk.token_requests()
    assert code_form["grant_type"] == "authorization_code"
    assert refresh_form["grant_type"] == "refresh_token"
    assert refresh_form["refresh_token"] == first.refresh_token
    assert refresh_form["resource"] == app.resource
    assert second.access_token != first.access_token
    assert second.refresh_token != first.refresh_token
    used = sdk.bearer_tokens_sent()
    assert used[-1] == second.access_token
    assert first.access_token in used
    assert len(desk.asked) == 1  # refreshing asked the person nothing

    # The spent refresh token is refused; presenting it again revokes the grant (a copy leaked),
    # with the tokens the rotation gave.
    replay = httpx2.post(
        f"{app.url}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "client_id": sdk.storage.client_info.client_id,
            "refresh_token": first.refresh_token or "",
        },
        timeout=30,
    )
    assert replay.status_code == 400, replay.text
    assert replay.json()["error"] == "invalid_grant"
    assert mcp_post(app.url, second.access_token, rpc("tools/list", {})).status_code == 401


def _assert_discovered_and_registered(sdk: SdkApp, app: App, mode: str) -> None:
    """The first call met 401 naming the resource metadata; the SDK found the authorization
    server there, registered once as a public client, and spoke its era on /mcp after."""
    first = sdk.answered[0]
    assert (first.request.path, first.status) == ("/mcp", 401)
    prm = f"{app.issuer}/.well-known/oauth-protected-resource/mcp"
    assert first.headers["www-authenticate"] == f'Bearer resource_metadata="{prm}"'
    assert [(r.request.path, r.status) for r in sdk.answered[1:5]] == [
        ("/.well-known/oauth-protected-resource/mcp", 200),
        ("/.well-known/oauth-authorization-server", 200),
        ("/oauth/register", 201),
        ("/oauth/token", 200),
    ]
    versions = {r.headers.get("mcp-protocol-version") for r in sdk.sent if r.path == "/mcp"}
    assert versions - {None} == {ERA_VERSION[mode]}
    assert sdk.storage.client_info is not None
    assert sdk.storage.client_info.token_endpoint_auth_method == "none"
    assert sdk.storage.client_info.client_secret is None
    assert [str(u) for u in sdk.storage.client_info.redirect_uris or []] == [
        sdk.desk.person.callback.redirect_uri
    ]


def _create_task_arguments(key: str) -> dict[str, Any]:
    return {"projectId": "CRW", "workspaceId": None, "idempotencyKey": key, "title": key}


def test_a_read_only_grant_steps_up_when_a_write_meets_insufficient_scope(
    app: App, person: Person, mode: str
) -> None:
    desk = Desk(person, [approving("read"), approving("tasks.manage")])
    sdk = SdkApp(app.url, f"Step-up app ({mode})", desk)

    async def work() -> dict[str, Any]:
        async with sdk.connect(mode) as client:
            assert await _list_projects(client) == ["CRW"]
            made = await client.call_tool("create_task", _create_task_arguments(f"up-{mode}"))
            assert not made.is_error, made.content
            return dict(body_of(made)["task"])

    task = desk.run(work)
    assert task["key"].startswith("CRW-")
    assert task["title"] == f"up-{mode}"

    # The write met 403 with an insufficient_scope challenge naming what it needs, in the era
    # the client speaks; the SDK re-authorized (the person, still signed in, approved
    # tasks.manage) and sent the same call again with the new token.
    [refused] = [r for r in sdk.answered if r.status == 403]
    assert refused.request.path == "/mcp"
    assert refused.request.headers["mcp-protocol-version"] == ERA_VERSION[mode]
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="read tasks.manage"' in challenge
    assert f'resource_metadata="{app.issuer}/.well-known/oauth-protected-resource/mcp"' in challenge
    first, second = sdk.storage.token_history
    assert first.scope == "read"
    assert set((second.scope or "").split()) == {"read", "tasks.manage"}
    _, again = desk.asked
    assert "tasks.manage" in query_of(again)["scope"].split()
    assert person.sign_ins == 1
    assert refused.request.headers["authorization"] == f"Bearer {first.access_token}"
    [retried] = [
        r for r in sdk.sent if r.content == refused.request.content and r != refused.request
    ]
    assert retried.headers["authorization"] == f"Bearer {second.access_token}"
    client_id = sdk.storage.client_info.client_id if sdk.storage.client_info else ""
    approved = [
        sorted(s.value for s in g.scopes)
        for g in grants.list_connections(app.db, person_actor(app.owner))
        if g.client_id == client_id
    ]
    # The second approval replaced the first: one app, one connection, its old tokens gone.
    assert approved == [["read", "tasks.manage"]]
    assert not works_on_mcp(app.url, first.access_token)


def _revoke_in_settings(person: Person, name: str) -> dict[str, str]:
    """The person opens Settings → Connected apps, finds the app and revokes it."""
    page = person.page
    page.goto("/settings/connections")
    row = page.locator("tr", has_text=name)
    shown = {
        "row": row.inner_text(),
        "scopes": row.locator("td").nth(1).inner_text(),
        "last_use": row.locator("td").nth(5).inner_text(),
    }
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name=f"Revoke {name}").click()
    page.wait_for_url(re.compile(r".*/settings/connections$"))
    shown["notice"] = page.inner_text("[role=status]")
    shown["after"] = page.inner_text("main")
    return shown


def test_revoking_in_settings_stops_the_app_and_its_next_sign_in_can_be_denied(
    app: App, person: Person, mode: str
) -> None:
    name = f"Revoked app ({mode})"
    desk = Desk(person, [approving(), denying])
    sdk = SdkApp(app.url, name, desk)

    shown: dict[str, str] = {}

    async def connected_until_revoked() -> None:
        async with sdk.connect(mode) as client:
            assert await _list_projects(client) == ["CRW"]
            shown.update(await desk.in_browser(lambda p: _revoke_in_settings(p, name)))
            await _list_projects(client)

    async def work() -> pytest.ExceptionInfo[ExceptionGroup[Exception]]:
        # A failed authorization ends the SDK client's transport (its task group), not only
        # the call: the error comes out of the client's context.
        with anyio.fail_after(90), pytest.raises(ExceptionGroup) as failed:
            await connected_until_revoked()
        return failed

    failed = desk.run(work)
    assert shown["scopes"] == ", ".join(ALL_SCOPES)
    assert sdk.storage.client_info is not None
    assert sdk.storage.client_info.client_id in shown["row"]
    assert shown["last_use"] != "never"
    assert f"{name} can no longer act for you" in shown["notice"]
    assert name not in shown["after"]

    # The revoked token's next call got 401; the SDK sent the person to authorize again and
    # they declined, so the call failed with the app's own error.
    revoked_token = sdk.storage.token_history[-1].access_token
    refusals = [r for r in sdk.answered if r.status == 401]
    assert refusals[-1].request.headers["authorization"] == f"Bearer {revoked_token}"
    assert 'error="invalid_token"' in refusals[-1].headers["www-authenticate"]
    assert len(desk.asked) == 2
    assert query_of(desk.returned[-1])["error"] == "access_denied"
    assert failed.group_contains(Declined, match="access_denied"), repr(failed.value)
    assert mcp_post(app.url, revoked_token, rpc("tools/list", {})).status_code == 401
