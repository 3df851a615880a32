"""The settings pages over real HTTP: API tokens, project settings and rules, workspaces."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.contract.projects import present
from crewboard.domain.identity.access import Role, Scope, Toolset
from crewboard.domain.identity.presets import DEFAULT_PRESET
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.projects import workspaces
from crewboard.services.review import rules
from crewboard.storage.database import Database
from tests.support.factories import count_rows, grant, make_project, make_user
from tests.support.mcp_client import RAW_HEADERS, body_of, mcp_client, rpc
from tests.support.server import free_port, running_server
from tests.support.web import csrf_of, post_form, sign_in

BACK = re.compile(r"^(/settings/\w+|/p/\w+/settings/project)")

SECRET = re.compile(r'<pre class="config" id="token-secret">(cb_[^<]+)</pre>')
CONFIG = re.compile(r'<pre class="config" id="(config-\d+)">([^<]+)</pre>')
CONFIG_TITLE = re.compile(r'<h3 id="(config-\d+)-title">([^<]+)</h3>')


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def writer(db: Database, owner: User) -> User:
    user = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", user, Role.WRITE)
    return user


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    with closing(sign_in(url, owner.email)) as signed_in:
        yield signed_in


def followed(client: httpx2.Client, answer: httpx2.Response) -> str:
    """The page a 303 leads to (it carries the flash), as text."""
    assert answer.status_code == 303, answer.text
    return client.get(answer.headers["location"]).text


def flash_error(page: str) -> str:
    found = re.search(r'<div class="flash error" role="alert">([^<]*)</div>', page)
    assert found is not None, page
    return html.unescape(found.group(1))


def send(client: httpx2.Client, path: str, data: dict[str, object]) -> httpx2.Response:
    """Post a form as its page does: with the token and the page to come back to."""
    back = BACK.match(path)
    assert back is not None
    return post_form(client, path, {"next": back.group(1), **data})


def create_token(client: httpx2.Client, **fields: object) -> httpx2.Response:
    data: dict[str, object] = {"name": "laptop", "kind": "personal", **fields}
    return send(client, "/settings/tokens", data)


# ---------------------------------------------------------------- tokens


def test_tokens_page_lists_the_persons_tokens_with_last_use(
    db: Database, client: httpx2.Client, owner: User
) -> None:
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=["read"], name="ci bot", project="CRW"
    )
    page = client.get("/settings/tokens")
    assert page.status_code == 200
    assert "ci bot" in page.text
    assert issued.token.display_prefix in page.text
    assert '<span class="muted">never</span>' in page.text  # not used yet
    assert f'action="/settings/tokens/{issued.token.id}/revoke"' in page.text
    assert 'name="toolsets" value="handoffs"' in page.text
    # What a token naming no toolsets gets is said truly: the default set, not every tool.
    assert "every tool the scopes allow" not in page.text
    assert "None ticked: the default set, the board and memory toolsets" in page.text
    assert '<span class="muted">default</span>' in page.text  # the token named none
    assert 'name="scopes" value="projects.admin"' in page.text
    tokens.authenticate_token(db, issued.secret)  # a use
    assert '<span class="muted">never</span>' not in client.get("/settings/tokens").text


def test_the_token_form_starts_filled_from_the_board_and_review_agent_preset(
    client: httpx2.Client, db: Database, owner: User
) -> None:
    page = client.get("/settings/tokens").text
    chosen = DEFAULT_PRESET
    assert re.search(rf'name="preset" value="{chosen.id}"[^>]*checked', page)
    for label in ("Agent: board and review", "Agent: planning", "Read only", "Custom"):
        assert label in page
    assert re.search(r'name="kind" value="agent" checked', page)
    for scope in Scope:
        ticked = re.search(rf'name="scopes" value="{scope}"[^>]* checked', page) is not None
        assert ticked == (scope in chosen.scopes), scope
    for toolset in Toolset:
        ticked = re.search(rf'name="toolsets" value="{toolset}" checked', page) is not None
        assert ticked == (toolset in chosen.toolsets), toolset
    assert re.search(r'<option value="CRW" selected>', page)  # an agent token needs a project
    # Sent as filled, the form makes that agent token, not a read-only one.
    answer = send(client, "/settings/tokens", {
        "name": "night", "preset": chosen.id, "kind": "agent", "project": "CRW",
        "scopes": sorted(str(s) for s in chosen.scopes - {Scope.READ}),
        "toolsets": [str(t) for t in chosen.toolsets],
    })  # fmt: skip
    assert answer.status_code == 200, answer.text[:500]
    [made] = [
        t for t in tokens.token_screen(db, person_actor(owner)).tokens if t.token.name == "night"
    ]
    assert made.token.scopes == chosen.scopes
    assert made.token.toolsets == chosen.toolsets


def test_a_new_token_shows_its_secret_once_with_client_configs(
    client: httpx2.Client, url: str
) -> None:
    answer = create_token(
        client, scopes=["tasks.manage"], toolsets=["board", "review"], project="CRW"
    )
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "no-store"
    found = SECRET.search(answer.text)
    assert found is not None, answer.text
    secret = found.group(1)
    assert "you will not see it again" in answer.text
    titles = dict(CONFIG_TITLE.findall(answer.text))
    assert list(titles.values()) == [
        *("Claude Code", "Codex CLI", "Gemini CLI", "Cursor", "VS Code"),
        *("Claude Desktop", "Any stdio client"),
    ]
    for config_id, raw in CONFIG.findall(answer.text):
        text, title = html.unescape(raw), titles[config_id]
        if title != "Codex CLI":  # Codex reads the token from the variable its note sets
            assert secret in text, title
        if title not in ("Claude Desktop", "Any stdio client"):  # these start crewboard mcp
            assert f"{url}/mcp" in text, title
        assert f'data-copy="{config_id}"' in answer.text
    assert f"export CREWBOARD_TOKEN={secret}" in html.unescape(answer.text)
    assert 'data-copy="token-secret"' in answer.text
    again = client.get("/settings/tokens")
    assert secret not in again.text
    assert "laptop" in again.text
    assert "board, review" in again.text


def test_the_token_page_stdio_entry_hides_the_database_password(
    db: Database, owner: User, tmp_path: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        port=free_port(),
        database_url="postgresql+psycopg://crew:s3cret@db.example.com:5432/crew",
    )
    with running_server(settings, db) as base, closing(sign_in(base, owner.email)) as client:
        answer = create_token(client)
    assert answer.status_code == 200
    assert "s3cret" not in answer.text
    titles = {title: config_id for config_id, title in CONFIG_TITLE.findall(answer.text)}
    blocks = dict(CONFIG.findall(answer.text))
    entry = json.loads(html.unescape(blocks[titles["Claude Desktop"]]))["mcpServers"]["crewboard"]
    assert entry["env"]["CREWBOARD_DATABASE_URL"] == (
        "postgresql+psycopg://crew:***@db.example.com:5432/crew"
    )
    found = SECRET.search(answer.text)
    assert found is not None
    assert entry["env"]["CREWBOARD_TOKEN"] == found.group(1)
    assert entry["args"][-1] == "mcp"


@pytest.mark.anyio
async def test_a_token_made_in_the_web_app_works_over_mcp_until_revoked(
    db: Database, client: httpx2.Client, url: str, owner: User
) -> None:
    found = SECRET.search(create_token(client, scopes=["read"]).text)
    assert found is not None
    secret = found.group(1)
    async with mcp_client(url, secret, "legacy") as mcp:
        listed = body_of(await mcp.call_tool("list_projects", {}))
    assert "CRW" in str(listed)
    (listed,) = tokens.list_tokens(db, person_actor(owner))
    answer = send(client, f"/settings/tokens/{listed.token.id}/revoke", {})
    assert "is revoked" in followed(client, answer)
    refused = httpx2.post(
        f"{url}/mcp",
        json=rpc("tools/list", {}),
        headers={**RAW_HEADERS, "Authorization": f"Bearer {secret}"},
    )
    assert refused.status_code == 401
    assert "revoked" in client.get("/settings/tokens").text


def test_an_agent_token_without_a_project_is_refused_with_a_flash(
    db: Database, client: httpx2.Client, owner: User
) -> None:
    answer = create_token(client, kind="agent")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/settings/tokens"
    assert "project" in flash_error(followed(client, answer))
    assert tokens.list_tokens(db, person_actor(owner)) == []


def test_a_token_role_above_the_persons_is_refused(db: Database, url: str, writer: User) -> None:
    with closing(sign_in(url, writer.email)) as client:
        answer = create_token(client, kind="agent", project="CRW", role="admin")
        assert "write" in flash_error(followed(client, answer))
    assert tokens.list_tokens(db, person_actor(writer)) == []


def test_someone_elses_token_cannot_be_revoked(
    db: Database, url: str, owner: User, writer: User
) -> None:
    issued = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=["read"])
    with closing(sign_in(url, writer.email)) as client:
        answer = send(client, f"/settings/tokens/{issued.token.id}/revoke", {})
        assert "No token" in flash_error(followed(client, answer))
    assert tokens.list_tokens(db, person_actor(owner))[0].token.active


def test_a_get_never_revokes(db: Database, client: httpx2.Client, owner: User) -> None:
    issued = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=["read"])
    answer = client.get(f"/settings/tokens/{issued.token.id}/revoke")
    assert answer.status_code in (404, 405)
    assert tokens.list_tokens(db, person_actor(owner))[0].token.active


def test_a_token_name_is_shown_as_text(db: Database, client: httpx2.Client) -> None:
    page = create_token(client, name="<script>alert(1)</script>")
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    listed = client.get("/settings/tokens").text
    assert "<script>alert(1)</script>" not in listed
    assert "&lt;script&gt;" in listed


# ---------------------------------------------------------------- project settings


def test_project_settings_render_for_an_admin_with_a_form(client: httpx2.Client) -> None:
    page = client.get("/p/CRW/settings/project")
    assert page.status_code == 200
    assert 'name="goal"' in page.text
    assert 'action="/p/CRW/settings/project/rules"' in page.text
    assert 'href="/p/CRW/team"' in page.text
    assert client.get("/settings/project").headers["location"] == "/p/CRW/settings/project"


def test_project_settings_saved_by_an_admin(db: Database, client: httpx2.Client) -> None:
    answer = send(
        client,
        "/p/CRW/settings/project",
        {
            "name": "Crew board",
            "goal": "Ship it",
            "phase": "beta",
            "status": "paused",
            "type": "brownfield",
            "collections": "notes, research , api",
            "description": "**bold** <script>alert(1)</script>",
        },
    )
    page = followed(client, answer)
    assert "Project settings saved." in page
    assert 'value="Ship it"' in page
    assert 'value="notes, research, api"' in page
    assert '<option value="paused" selected>' in page
    assert "<script>alert(1)</script>" not in page


def test_a_bad_project_setting_is_refused_naming_the_field(client: httpx2.Client) -> None:
    answer = send(
        client, "/p/CRW/settings/project", {"name": "Crew", "status": "sleeping", "type": "auto"}
    )
    assert flash_error(followed(client, answer)).startswith("Status: ")


def test_a_writer_sees_settings_read_only_and_cannot_save(
    db: Database, url: str, writer: User
) -> None:
    with closing(sign_in(url, writer.email)) as client:
        page = client.get("/p/CRW/settings/project")
        assert page.status_code == 200
        assert 'name="goal"' not in page.text
        assert "Project CRW" in page.text
        answer = send(client, "/p/CRW/settings/project", {"name": "Taken over"})
        assert "admin" in flash_error(followed(client, answer))
        answer = send(client, "/p/CRW/settings/project/rules", {"match": "all"})
        assert "admin" in flash_error(followed(client, answer))
    assert "Taken over" not in client_name(db, writer)


def client_name(db: Database, user: User) -> str:
    rows, _ = present.list_projects(db, person_actor(user))
    return str(rows[0]["name"])


def test_a_project_not_open_to_the_person_is_404(
    db: Database, url: str, owner: User, writer: User
) -> None:
    make_project(db, owner, "SEC")
    with closing(sign_in(url, writer.email)) as client:
        assert client.get("/p/SEC/settings/project").status_code == 404
        assert client.get("/p/NOPE/settings/project").status_code == 404
        answer = send(client, "/p/SEC/settings/project", {"name": "Mine"})
        assert answer.status_code == 404


def test_a_project_name_is_shown_as_text(db: Database, url: str) -> None:
    user = make_user(db, "x@example.com")
    make_project(db, user, "XSS")
    present.update_project(
        db, person_actor(user), project="XSS", workspace_id=None, name="<script>alert(1)</script>"
    )
    with closing(sign_in(url, user.email)) as client:
        page = client.get("/p/XSS/settings/project").text
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_acceptance_rules_are_added_and_removed(
    db: Database, client: httpx2.Client, owner: User
) -> None:
    seat = present.add_team_role(db, person_actor(owner), project="CRW", name="Coder", kind="ai")
    seat_id = seat["id"]
    page = client.get("/p/CRW/settings/project").text
    assert f'<option value="{seat_id}">Coder' in page
    forms: list[dict[str, object]] = [
        {"match": "all", "value": "development"},  # a value for "all" is ignored
        {"match": "task_type", "value": "development", "document": "decisions"},
        {"match": "ai_role", "value": seat_id, "collection": "general"},
    ]
    for data in forms:
        answer = send(client, "/p/CRW/settings/project/rules", data)
        assert "Acceptance rule on" in followed(client, answer)
    listed = rules.list_rules(db, person_actor(owner), "CRW")
    assert [(r.match, r.value) for r in listed] == [
        ("all", None),
        ("task_type", "development"),
        ("ai_role", seat_id),
    ]
    page = client.get("/p/CRW/settings/project").text
    assert "Task type development" in page
    assert "AI role Coder" in page
    again = send(client, "/p/CRW/settings/project/rules", {"match": "all"})
    assert "already" in flash_error(followed(client, again))
    answer = send(client, f"/p/CRW/settings/project/rules/{listed[0].id}/remove", {})
    assert "Acceptance rule off." in followed(client, answer)
    assert len(rules.list_rules(db, person_actor(owner), "CRW")) == 2


def test_a_rule_without_its_value_is_refused_naming_the_field(client: httpx2.Client) -> None:
    answer = send(client, "/p/CRW/settings/project/rules", {"match": "task_type"})
    assert "value" in flash_error(followed(client, answer))


# ---------------------------------------------------------------- workspaces


def test_workspaces_are_created_and_members_added(
    db: Database, client: httpx2.Client, owner: User, writer: User
) -> None:
    assert client.get("/settings/workspaces").status_code == 200
    answer = send(client, "/settings/workspaces", {"name": "Studio <b>"})
    page = followed(client, answer)
    assert "Studio &lt;b&gt;" in page
    ((workspace, role),) = workspaces.list_workspaces(db, person_actor(owner))
    assert str(role) == "admin"
    path = f"/settings/workspaces/{workspace.id}/members"
    answer = send(client, path, {"email": writer.email, "role": "member"})
    assert "writer@example.com is a member" in followed(client, answer)
    ((_, theirs),) = workspaces.list_workspaces(db, person_actor(writer))
    assert str(theirs) == "member"
    listed = client.get("/settings/workspaces").text
    assert "<td>writer@example.com</td><td>member</td>" in listed
    assert "<td>owner@example.com</td><td>admin</td>" in listed
    missing = send(client, path, {"email": "nobody@example.com", "role": "member"})
    assert "nobody@example.com" in flash_error(followed(client, missing))


def test_a_workspace_member_cannot_add_members(
    db: Database, url: str, owner: User, writer: User
) -> None:
    made = workspaces.create_workspace(db, person_actor(owner), name="Studio")
    workspaces.add_workspace_member(
        db, person_actor(owner), workspace_id=made.id, email=writer.email
    )
    with closing(sign_in(url, writer.email)) as client:
        page = client.get("/settings/workspaces").text
        assert "Studio" in page
        assert f"/settings/workspaces/{made.id}/members" not in page
        answer = send(
            client,
            f"/settings/workspaces/{made.id}/members",
            {"email": "owner@example.com", "role": "member"},
        )
        assert "admin" in flash_error(followed(client, answer))


# ---------------------------------------------------------------- form safety


@pytest.mark.parametrize(
    "path",
    [
        "/settings/tokens",
        "/settings/tokens/tok_x/revoke",
        "/settings/workspaces",
        "/settings/workspaces/wsp_x/members",
        "/p/CRW/settings/project",
        "/p/CRW/settings/project/rules",
        "/p/CRW/settings/project/rules/rul_x/remove",
    ],
)
def test_a_post_without_the_csrf_token_is_refused(
    db: Database, client: httpx2.Client, path: str
) -> None:
    before = count_rows(db, "api_tokens"), count_rows(db, "workspaces")
    answer = client.post(path, data={"name": "x", "kind": "personal", "match": "all"})
    assert answer.status_code == 403
    wrong = client.post(path, data={"csrf": "not-it", "name": "x", "kind": "personal"})
    assert wrong.status_code == 403
    assert (count_rows(db, "api_tokens"), count_rows(db, "workspaces")) == before
    assert csrf_of(client)  # the session is still fine
