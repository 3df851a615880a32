"""MCP resources and resource templates through the official SDK client, in both protocol eras."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from sqlalchemy.engine import URL

from crewboard.contract import memory_present as memory_edits
from crewboard.contract.projects import present
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.storage.database import Database
from tests.support.factories import grant, make_project, make_user
from tests.support.mcp_client import MODES, mcp_client

pytestmark = pytest.mark.anyio

BUDGET = 48 * 1024
NOT_FOUND = -32602  # SEP-2164: a resource that does not exist is invalid params
BASE = "crewboard://projects"
# Characters JSON must escape, wide ones and plain ones: the worst case for the budget.
HOSTILE = 'a"\\\u0001é漢🙂\n'


def file_record(
    db: Database, user: User, project: str, title: str, content: str, *, summary: str = ""
) -> str:
    def work(uow: Any) -> dict[str, Any]:
        found = uow.projects.get_with_role(project, user.id)
        return memory.file_record(
            uow,
            person_actor(user),
            found[0],
            title=title,
            summary=summary or f"About {title}",
            content=content,
            collection=None,
            document=None,
            source_draft_id=None,
        )

    return str(db.write(work).id)


def make_task(db: Database, user: User, project: str, title: str, **fields: Any) -> None:
    tasks.create_task(
        db,
        person_actor(user),
        project=project,
        workspace_id=None,
        idempotency_key=f"{project}-{title[:60]}",
        title=title,
        **fields,
    )


@pytest.fixture
def owner(db: Database) -> User:
    return make_user(db, "owner@example.com")


@pytest.fixture
def world(db: Database, owner: User) -> dict[str, str]:
    """CRW (the owner's) with a state page, two tasks, a document and a record; OTH, another
    person's project with the same kinds of things in it."""
    actor = person_actor(owner)
    make_project(db, owner, "CRW")
    make_task(db, owner, "CRW", "Fix the login redirect")
    make_task(db, owner, "CRW", "Write the docs")
    present.update_project_state(
        db,
        actor,
        project="CRW",
        workspace_id=None,
        content="## Now\n- login fix",
        expected_revision=0,
    )
    memory_edits.set_document(db, actor, "CRW", "decisions", "We use Postgres.", expected_version=0)
    record = file_record(db, owner, "CRW", "Auth design", "Sessions live for a day.")
    other = make_user(db, "other@example.com")
    make_project(db, other, "OTH")
    make_task(db, other, "OTH", "Secret plan")
    memory_edits.set_document(
        db, person_actor(other), "OTH", "decisions", "Hidden.", expected_version=0
    )
    hidden = file_record(db, other, "OTH", "Hidden record", "Not for you.")
    return {"record": record, "hidden": hidden}


def secret(db: Database, user: User, scopes: list[str] | None = None, **options: Any) -> str:
    return tokens.issue_token(
        db, person_actor(user), kind="personal", scopes=scopes or ["read"], **options
    ).secret


async def all_resources(client: Client) -> list[types.Resource]:
    found: list[types.Resource] = []
    cursor = None
    while True:
        page = await client.list_resources(cursor=cursor)
        assert len(page.model_dump_json(by_alias=True, exclude_none=True).encode()) <= BUDGET
        found += page.resources
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


async def read(client: Client, uri: str) -> types.TextResourceContents:
    result = await client.read_resource(uri)
    assert len(result.model_dump_json(by_alias=True, exclude_none=True).encode()) <= BUDGET
    (content,) = result.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.uri == uri
    return content


async def refusal(client: Client, uri: str) -> MCPError:
    with pytest.raises(MCPError) as refused:
        await client.read_resource(uri)
    return refused.value


async def test_the_server_declares_resources_and_prompts_without_subscriptions_or_list_changes(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode) as client:
        capabilities = client.server_capabilities
    assert capabilities.resources is not None
    assert not capabilities.resources.subscribe
    assert not capabilities.resources.list_changed
    assert capabilities.prompts is not None
    assert not capabilities.prompts.list_changed


async def test_resources_list_shows_what_the_caller_can_read_and_nothing_of_other_projects(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode) as client:
        listed = {r.uri: r for r in await all_resources(client)}
    assert set(listed) == {
        f"{BASE}/CRW/state",
        f"{BASE}/CRW/documents/decisions",
        f"{BASE}/CRW/tasks/CRW-1",
        f"{BASE}/CRW/tasks/CRW-2",
        f"{BASE}/CRW/memory/{world['record']}",
    }
    task = listed[f"{BASE}/CRW/tasks/CRW-1"]
    assert (task.name, task.mime_type) == ("CRW-1", "application/json")
    assert task.title == "CRW-1 Fix the login redirect"
    assert listed[f"{BASE}/CRW/state"].mime_type == "text/markdown"
    assert listed[f"{BASE}/CRW/memory/{world['record']}"].title == "Auth design"
    assert all(r.name and r.description for r in listed.values())


async def test_resource_templates_name_each_kind_with_its_uri_pattern(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode) as client:
        templates = (await client.list_resource_templates()).resource_templates
    assert {t.uri_template: t.mime_type for t in templates} == {
        f"{BASE}/{{projectKey}}/state": "text/markdown",
        f"{BASE}/{{projectKey}}/tasks/{{taskKey}}": "application/json",
        f"{BASE}/{{projectKey}}/documents/{{document}}": "text/markdown",
        f"{BASE}/{{projectKey}}/memory/{{recordId}}": "text/markdown",
    }
    assert all(t.name and t.title and t.description for t in templates)


async def test_each_kind_of_resource_reads_what_the_tools_read(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode) as client:
        page = await read(client, f"{BASE}/CRW/state")
        task = await read(client, f"{BASE}/CRW/tasks/CRW-1")
        by_number = await read(client, f"{BASE}/CRW/tasks/2")
        document = await read(client, f"{BASE}/CRW/documents/decisions")
        empty = await read(client, f"{BASE}/CRW/documents/legal")
        record = await read(client, f"{BASE}/CRW/memory/{world['record']}")
    assert page.mime_type == "text/markdown"
    assert "## Now\n- login fix" in page.text
    assert "Revision 1" in page.text
    assert task.mime_type == "application/json"
    body = json.loads(task.text)
    assert (body["task"]["key"], body["task"]["revision"]) == ("CRW-1", 1)
    assert body["task"]["workspaceId"] is None
    assert "contextPack" not in body
    assert json.loads(by_number.text)["task"]["key"] == "CRW-2"
    assert "We use Postgres." in document.text
    assert "Nobody has written this document yet" in empty.text
    assert "Auth design" in record.text
    assert "Sessions live for a day." in record.text


async def test_another_projects_resource_answers_exactly_as_one_that_does_not_exist(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    hidden = [
        f"{BASE}/OTH/state",
        f"{BASE}/OTH/tasks/OTH-1",
        f"{BASE}/OTH/documents/decisions",
        f"{BASE}/OTH/memory/{world['hidden']}",
        f"{BASE}/CRW/memory/{world['hidden']}",  # another project's record under CRW's key
        f"{BASE}/CRW/tasks/OTH-1",
    ]
    missing = [
        f"{BASE}/NOPE/state",
        f"{BASE}/CRW/tasks/CRW-99",
        f"{BASE}/CRW/documents/secrets",
        f"{BASE}/CRW/memory/mem_nope",
        "test://nonexistent-resource",
        f"{BASE}/CRW/state/extra",
    ]
    async with mcp_client(url, secret(db, owner), mode) as client:
        errors = {uri: await refusal(client, uri) for uri in hidden + missing}
    for uri, error in errors.items():
        assert error.code == NOT_FOUND, uri
        assert error.data == {"uri": uri}
    assert len({error.message for error in errors.values()}) == 1


async def test_a_token_limited_to_one_project_neither_lists_nor_reads_the_others(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    other = make_user(db, "third@example.com")
    make_project(db, other, "THR")
    grant(db, other, "THR", owner, Role.READ)
    async with mcp_client(url, secret(db, owner), mode) as client:
        everything = {r.uri for r in await all_resources(client)}
        assert f"{BASE}/THR/state" in everything
        assert (await read(client, f"{BASE}/THR/state")).text
    async with mcp_client(url, secret(db, owner, project="CRW"), mode) as client:
        limited = {r.uri for r in await all_resources(client)}
        refused = await refusal(client, f"{BASE}/THR/state")
    assert limited == {uri for uri in everything if uri.startswith(f"{BASE}/CRW/")}
    assert refused.code == NOT_FOUND


async def test_toolsets_narrow_the_tools_but_not_what_the_caller_may_read(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode, {"X-MCP-Toolsets": "review"}) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        listed = {r.uri for r in await all_resources(client)}
        record = await read(client, f"{BASE}/CRW/memory/{world['record']}")
    assert "get_project_memory" not in tools
    assert f"{BASE}/CRW/memory/{world['record']}" in listed
    assert "Auth design" in record.text


async def test_a_long_listing_comes_in_pages_joined_by_the_cursor(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    # 300-character titles of 3-byte characters: the byte budget ends each page.
    titles = [f"{n:03d} " + "漢" * 296 for n in range(130)]
    for title in titles:
        make_task(db, owner, "CRW", title)
    async with mcp_client(url, secret(db, owner), mode) as client:
        first = await client.list_resources()
        listed = [r.uri for r in await all_resources(client)]
    assert first.next_cursor is not None
    assert len(first.resources) < 100
    assert len(listed) == len(set(listed)) == 5 + 130
    assert listed[:2] == [f"{BASE}/CRW/state", f"{BASE}/CRW/documents/decisions"]
    assert listed[2:134] == [f"{BASE}/CRW/tasks/CRW-{n}" for n in range(1, 133)]
    assert listed[134] == f"{BASE}/CRW/memory/{world['record']}"


@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor",
        "W1swLDAsMF0",  # base64 of a list of the wrong shape
        "WzAsMywwXQ",  # [0,3,0]: no fourth part
        "WzAsMCwtMV0",  # [0,0,-1]
        # [0,0,0] with 200 spaces inside: a cursor over 200 characters is not read at all
        "WzAsMCwg" + "ICAg" * 66 + "IDBd",
    ],
)
async def test_a_cursor_the_server_did_not_hand_out_is_refused(
    url: str, db: Database, owner: User, mode: str, cursor: str
) -> None:
    async with mcp_client(url, secret(db, owner), mode) as client:
        with pytest.raises(MCPError) as refused:
            await client.list_resources(cursor=cursor)
    assert refused.value.code == -32602
    assert refused.value.data == {"field": "cursor"}


async def test_a_text_over_the_budget_is_cut_and_says_which_call_reads_on(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    long_text = (HOSTILE * 25_000)[:199_999] + "z"
    record = file_record(db, owner, "CRW", "Huge", long_text)
    memory_edits.set_document(
        db, person_actor(owner), "CRW", "notes", long_text, expected_version=0
    )
    async with mcp_client(url, secret(db, owner), mode) as client:
        as_record = await read(client, f"{BASE}/CRW/memory/{record}")
        as_document = await read(client, f"{BASE}/CRW/documents/notes")
    for content, resume in (
        (as_record, f'"ids":["{record}"]'),
        (as_document, '"document":"notes"'),
    ):
        shown, _, note = content.text.rpartition("\n\n---\n\n")
        assert "get_project_memory" in note
        assert resume in note
        assert '"contentOffset":' in note
        offset = int(note.split('"contentOffset":')[1].split("}")[0])
        assert shown.endswith(long_text[:offset])
        assert 1000 < offset < 200_000


async def test_a_task_over_the_budget_comes_cut_with_flags_and_the_window_to_read_on(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    long_text = (HOSTILE * 25_000)[:199_999] + "z"
    make_task(db, owner, "CRW", "Huge", brief=long_text, description=long_text)
    async with mcp_client(url, secret(db, owner), mode) as client:
        content = await read(client, f"{BASE}/CRW/tasks/CRW-3")
    body = json.loads(content.text)
    task = body["task"]
    for field in ("brief", "description"):
        assert task[f"{field}Truncated"] is True
        assert task[f"{field}Length"] == 200_000
        assert long_text.startswith(task[field])
        assert f'"textField":"{field}","textOffset":{len(task[field])}' in body["note"]


async def test_an_overlong_uri_is_refused_without_echoing_all_of_it(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    uri = f"{BASE}/CRW/memory/" + "m" * 5_000
    async with mcp_client(url, secret(db, owner), mode) as client:
        refused = await refusal(client, uri)
    assert refused.code == NOT_FOUND
    assert refused.data == {"uri": uri[:1000]}


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_serves_the_same_resources_and_prompts(
    database_url: URL, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    issued = tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=["read", "tasks.manage"]
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "crewboard", "mcp"],
        env={
            "PATH": os.environ.get("PATH", ""),
            "CREWBOARD_DATABASE_URL": database_url.render_as_string(hide_password=False),
            "CREWBOARD_TOKEN": issued.secret,
        },
    )
    async with Client(params, mode=mode) as client:
        listed = {r.uri for r in await all_resources(client)}
        page = await read(client, f"{BASE}/CRW/state")
        missing = await refusal(client, f"{BASE}/OTH/state")
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        session = await client.get_prompt("start_session", {"projectId": "CRW"})
    assert f"{BASE}/CRW/tasks/CRW-1" in listed
    assert "## Now" in page.text
    assert missing.code == NOT_FOUND
    assert prompts == ["start_session", "take_next_task"]
    assert session.messages


async def test_a_records_long_summary_is_shortened_in_the_list(
    url: str, db: Database, owner: User, world: dict[str, str], mode: str
) -> None:
    record = file_record(db, owner, "CRW", "Long", "text", summary="word " * 400)
    async with mcp_client(url, secret(db, owner), mode) as client:
        listed = {r.uri: r for r in await all_resources(client)}
    description = listed[f"{BASE}/CRW/memory/{record}"].description
    assert description is not None
    assert len(description) <= 200
    assert description.endswith("…")
