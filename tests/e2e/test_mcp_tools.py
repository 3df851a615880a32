"""The MCP door through the official SDK client over real HTTP, in both protocol eras."""

from __future__ import annotations

import pytest
from mcp import MCPError

from crewboard.contract.catalogue import DEFAULT_TOOLSETS, default_catalogue
from crewboard.domain.identity.access import Role
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import grant, make_project, make_user
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

ALL = [
    "read",
    "tasks.manage",
    "drafts.create",
    "messages.write",
    "team.manage",
    "specs.write",
    "projects.admin",
]
# The declarations are the one list (contract/catalogue.py gathers them in tools/list order);
# these tests check that the MCP door lists, hides and annotates each as declared.
CATALOGUE = list(default_catalogue())
# Listed and run on the stdio server only (tests/e2e/test_mcp_specs.py): over HTTP the server
# cannot reach the caller's disk.
STDIO_ONLY_TOOLS = [t.name for t in CATALOGUE if t.stdio_only]
CATALOGUE_ORDER = [t.name for t in CATALOGUE if not t.stdio_only]
WRITE_TOOLS = {t.name for t in CATALOGUE if not t.read_only}
# Writes the read role may make: a stream token only reads; a check-in reads (and renews only
# claims, which a reader cannot hold).
STREAM_TOKEN_WRITES = {"create_stream_token", "revoke_stream_token"}
READ_ROLE_WRITES = STREAM_TOKEN_WRITES | {"get_updates"}
# Reads only a project's admins are shown (a webhook's URL and delivery log).
ADMIN_READS = {t.name for t in CATALOGUE if t.read_only and t.least_role is Role.ADMIN}
# The integrations' admin tools, in catalogue order: webhooks out, then GitHub in.
INTEGRATION_TOOLS = [t.name for t in CATALOGUE if t.area in ("webhooks", "github")]


@pytest.fixture
def owner(db: Database):  # type: ignore[no-untyped-def]
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


def secret_for(db: Database, user, scopes: list[str], **options: object) -> str:  # type: ignore[no-untyped-def]
    issued = tokens.issue_token(db, person_actor(user), kind="personal", scopes=scopes, **options)  # type: ignore[arg-type]
    return issued.secret


EVERYTHING = {"X-MCP-Toolsets": "all"}


def in_default_toolsets(name: str) -> bool:
    tool = default_catalogue().find(name)
    assert tool is not None, name
    return tool.toolset in DEFAULT_TOOLSETS


async def test_full_token_asking_for_all_toolsets_sees_the_whole_catalogue_in_order(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(url, secret_for(db, owner, ALL), mode, EVERYTHING) as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == CATALOGUE_ORDER
        # Everything else in the catalogue works with the caller's disk: not served over HTTP.
        unlisted = [t.name for t in default_catalogue() if t.name not in CATALOGUE_ORDER]
        assert unlisted == STDIO_ONLY_TOOLS
        assert all(default_catalogue().find(n).stdio_only for n in unlisted)  # type: ignore[union-attr]
        assert client.instructions is not None
        assert "update_project_state" in client.instructions
        assert "get_project_state" in client.instructions
        assert "X-MCP-Toolsets" not in client.instructions  # nothing more to ask for


async def test_token_naming_no_toolset_sees_the_agent_loop_and_is_told_how_to_ask_for_more(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(url, secret_for(db, owner, ALL), mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == [n for n in CATALOGUE_ORDER if in_default_toolsets(n)]
        # The whole loop: find, claim, read, plan, note, hand in, and memory reads.
        assert {"get_task", "claim_next_task", "create_task", "update_task"} <= set(names)
        assert {"submit_result", "list_task_notes", "get_project_memory"} <= set(names)
        assert "list_activity" not in names
        assert client.instructions is not None
        assert "X-MCP-Toolsets" in client.instructions
        for toolset in ("review", "planning", "repos", "team", "admin"):
            assert toolset in client.instructions
    async with mcp_client(
        url, secret_for(db, owner, ALL), mode, {"X-MCP-Toolsets": "board,review,memory"}
    ) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert {"get_project_memory", "list_activity"} <= set(names)
        assert "create_project" not in names


async def test_token_toolsets_setting_replaces_the_default(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    secret = secret_for(db, owner, ALL, toolsets=["memory"])
    async with mcp_client(url, secret, mode) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["get_project_memory"]


async def test_read_only_token_sees_no_write_tool_or_write_rule_and_is_refused(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(url, secret_for(db, owner, ["read"]), mode, EVERYTHING) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        # The admins' reads need projects.admin too.
        assert names == [
            n
            for n in CATALOGUE_ORDER
            if (n not in WRITE_TOOLS and n not in ADMIN_READS) or n in READ_ROLE_WRITES
        ]
        assert client.instructions is not None
        assert "update_project_state" not in client.instructions
        assert "idempotencyKey" not in client.instructions
        refused = await client.call_tool(
            "update_project_state",
            {"projectId": "CRW", "workspaceId": None, "content": "x", "expectedRevision": 0},
        )
        assert refused.is_error
        assert refused.structured_content["code"] == "PERMISSION_DENIED"
        assert refused.structured_content["details"]["requiredScope"] == "tasks.manage"
        assert "tasks.manage" in refused.content[0].text  # type: ignore[union-attr]


ADMIN_TOOLS = {"update_project", "archive_project", "unarchive_project", "delete_project"}
SESSION_WRITES = [
    "start_spec_session",
    "rename_spec_session",
    "archive_spec_session",
    "unarchive_spec_session",
    "delete_spec_session",
]


async def test_the_list_follows_the_callers_project_roles_not_only_its_scopes(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    async with mcp_client(url, secret_for(db, reader, ALL), mode, EVERYTHING) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        # A read member sees no write tool, though its token has every scope; creating a
        # project needs no project role, so that stays.
        assert names == [
            n
            for n in CATALOGUE_ORDER
            if (n not in WRITE_TOOLS and n not in ADMIN_READS)
            or n == "create_project"
            or n in READ_ROLE_WRITES
        ]
        assert client.instructions is not None
        assert "update_project_state" not in client.instructions
        refused = await client.call_tool(
            "update_project_state",
            {"projectId": "CRW", "workspaceId": None, "content": "x", "expectedRevision": 0},
        )
        assert refused.structured_content["code"] == "PERMISSION_DENIED"
    writer = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer, Role.WRITE)
    async with mcp_client(url, secret_for(db, writer, ALL), mode, EVERYTHING) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "update_project_state" in names
        assert not names & (ADMIN_TOOLS | set(INTEGRATION_TOOLS))
    # The owner's token capped at the write role is shown what a write member is shown, and no
    # create_project (a capped token may not act past its cap).
    capped = secret_for(db, owner, ALL, role="write", project="CRW")
    async with mcp_client(url, capped, mode, EVERYTHING) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "update_project_state" in names
        assert not names & (ADMIN_TOOLS | {"create_project"})
    loner = make_user(db, "loner@example.com")
    async with mcp_client(url, secret_for(db, loner, ALL), mode, EVERYTHING) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["list_projects", "create_project", "list_stream_tokens"]


async def test_annotations_and_schemas_are_true_to_each_tool(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(url, secret_for(db, owner, ALL), mode, EVERYTHING) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for name, tool in tools.items():
        assert tool.annotations is not None
        # The protocol's default for readOnlyHint is false: only read tools say it.
        assert bool(tool.annotations.read_only_hint) is (name not in WRITE_TOOLS)
        assert tool.annotations.open_world_hint is False
        if name in WRITE_TOOLS:
            assert tool.annotations.destructive_hint is not None, name
    assert tools["delete_project"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert tools["update_project"].annotations.destructive_hint is False  # type: ignore[union-attr]
    schema = tools["update_project_state"].input_schema
    assert set(schema["required"]) == {"projectId", "content", "expectedRevision"}
    assert "workspaceId" not in schema["properties"]  # taken, not listed (contract/args.py)
    assert schema["properties"]["content"]["maxLength"] == 5000
    assert schema["additionalProperties"] is False
    status = tools["create_project"].input_schema["properties"]["status"]
    assert status["enum"] == ["planning", "active", "paused", "done"]
    # Spec sessions: every write names its project (its workspace may be named too, unlisted);
    # only delete destroys, and a second delete is no repeat of the first.
    for name in SESSION_WRITES:
        assert "projectId" in tools[name].input_schema["required"], name
        hints = tools[name].annotations
        assert hints is not None
        assert bool(hints.destructive_hint) is (name == "delete_spec_session"), name
        assert bool(hints.idempotent_hint) is (name != "delete_spec_session"), name
    assert "workspaceId" not in tools["get_spec_session"].input_schema["required"]
    assert tools["start_spec_session"].input_schema["properties"]["mode"]["enum"] == [
        "generate",
        "edit",
    ]


async def test_state_page_round_trip_with_conflict_naming_the_current_revision(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(url, secret_for(db, owner, ["read", "tasks.manage"]), mode) as client:
        page = body_of(await client.call_tool("get_project_state", {"projectId": "CRW"}))
        assert page["revision"] == 0
        args = {"projectId": "CRW", "workspaceId": None, "content": "first", "expectedRevision": 0}
        saved = body_of(await client.call_tool("update_project_state", args))
        assert saved["revision"] == 1
        retry = await client.call_tool("update_project_state", args)
        assert body_of(retry)["revision"] == 1
        assert len(retry.content) == 2  # the second part says this was a replay
        stale = await client.call_tool("update_project_state", {**args, "content": "other"})
        assert stale.is_error
        assert stale.structured_content["code"] == "REVISION_CONFLICT"
        assert stale.structured_content["details"]["currentRevision"] == 1


async def test_bad_arguments_are_error_results_naming_the_field(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(url, secret_for(db, owner, ALL), mode) as client:
        cases = {
            "status": {"projectId": "CRW", "workspaceId": None, "status": "gone"},
            "workspaceId": {"projectId": "CRW", "workspaceId": "ws_other", "name": "Elsewhere"},
            "colour": {"projectId": "CRW", "workspaceId": None, "colour": "red"},
        }
        for field, arguments in cases.items():
            result = await client.call_tool("update_project", arguments)
            assert result.is_error, field
            assert result.structured_content["code"] == "VALIDATION"
            assert result.structured_content["details"]["field"] == field
        enum = await client.call_tool("update_project", cases["status"])
        assert enum.structured_content["details"]["accepted"] == [
            "planning",
            "active",
            "paused",
            "done",
        ]
        long = await client.call_tool(
            "update_project_state",
            {"projectId": "CRW", "workspaceId": None, "content": "x" * 5001, "expectedRevision": 0},
        )
        assert long.structured_content["code"] == "LIMIT_EXCEEDED"


async def test_unknown_tool_is_a_protocol_error(url: str, db: Database, owner, mode: str) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(url, secret_for(db, owner, ALL), mode) as client:
        with pytest.raises(MCPError):
            await client.call_tool("drop_all_tables", {})


async def test_a_project_without_a_role_is_not_found(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    stranger = make_user(db, "stranger@example.com")
    async with mcp_client(url, secret_for(db, stranger, ALL), mode) as client:
        for tool, arguments in [
            ("get_project", {"projectId": "CRW"}),
            ("get_project_state", {"projectId": "CRW"}),
            ("archive_project", {"projectId": "CRW", "workspaceId": None}),
        ]:
            result = await client.call_tool(tool, arguments)
            assert result.structured_content["code"] == "NOT_FOUND", tool
        assert body_of(await client.call_tool("list_projects", {}))["total"] == 0


async def test_role_refusal_names_what_is_missing(url: str, db: Database, owner, mode: str) -> None:  # type: ignore[no-untyped-def]
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    async with mcp_client(url, secret_for(db, reader, ALL), mode) as client:
        result = await client.call_tool(
            "update_project_state",
            {"projectId": "CRW", "workspaceId": None, "content": "x", "expectedRevision": 0},
        )
        assert result.structured_content["code"] == "PERMISSION_DENIED"
        assert "needs the write role on the project; you have read" in result.content[0].text  # type: ignore[union-attr]


async def test_project_lifecycle_and_keyed_create(url: str, db: Database, owner, mode: str) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(url, secret_for(db, owner, ALL), mode) as client:
        create = {"workspaceId": None, "key": "NEW", "name": "New", "idempotencyKey": "new-1"}
        made = body_of(await client.call_tool("create_project", create))
        again = await client.call_tool("create_project", create)
        assert body_of(again) == made
        clash = await client.call_tool("create_project", {**create, "name": "Other"})
        assert clash.structured_content["code"] == "IDEMPOTENCY_CONFLICT"
        assert clash.structured_content["details"]["resourceId"] == made["project"]["id"]
        ref = {"projectId": "NEW", "workspaceId": None}
        active = await client.call_tool("delete_project", ref)
        assert active.structured_content["code"] == "VALIDATION"
        assert (
            body_of(await client.call_tool("archive_project", ref))["project"]["archived"] is True
        )
        assert body_of(await client.call_tool("archive_project", ref))["changed"] is False
        assert body_of(await client.call_tool("delete_project", ref))["deleted"] is True
        gone = await client.call_tool("get_project", {"projectId": "NEW"})
        assert gone.structured_content["code"] == "NOT_FOUND"


async def test_a_cut_page_says_so_in_a_second_part(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    make_project(db, owner, "TWO")
    async with mcp_client(url, secret_for(db, owner, ALL), mode) as client:
        whole = await client.call_tool("list_projects", {})
        assert len(whole.content) == 1
        cut = await client.call_tool("list_projects", {"limit": 1})
        assert body_of(cut)["nextOffset"] == 1
        assert body_of(cut)["total"] == 2
        assert len(cut.content) == 2
        assert "offset 1" in cut.content[1].text  # type: ignore[union-attr]


async def test_toolset_headers_and_token_defaults_narrow_the_list(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    secret = secret_for(db, owner, ALL)
    async with mcp_client(url, secret, mode, {"X-MCP-Toolsets": "admin"}) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == [
            "create_project",
            "update_project",
            "archive_project",
            "unarchive_project",
            "delete_project",
            "create_stream_token",
            "list_stream_tokens",
            "revoke_stream_token",
            *INTEGRATION_TOOLS,
        ]
        assert "get_project_state" not in (client.instructions or "")
    async with mcp_client(
        url, secret, mode, {"X-MCP-Tools": "get_project_state,list_team"}
    ) as client:
        assert [t.name for t in (await client.list_tools()).tools] == [
            "get_project_state",
            "list_team",
        ]
    defaults = secret_for(db, owner, ALL, toolsets=["admin"])
    async with mcp_client(url, defaults, mode) as client:
        assert "list_projects" not in [t.name for t in (await client.list_tools()).tools]
    read_only = secret_for(db, owner, ["read"])
    async with mcp_client(url, read_only, mode, {"X-MCP-Toolsets": "admin"}) as client:
        assert [t.name for t in (await client.list_tools()).tools] == sorted(
            STREAM_TOKEN_WRITES | {"list_stream_tokens"}, key=CATALOGUE_ORDER.index
        )


async def test_list_team_marks_the_caller(url: str, db: Database, owner, mode: str) -> None:  # type: ignore[no-untyped-def]
    async with mcp_client(url, secret_for(db, owner, ["read"]), mode) as client:
        teams = body_of(await client.call_tool("list_team", {"projectId": "CRW"}))["teams"]
    (crw,) = teams
    assert crw["people"] == [
        {"userId": owner.id, "displayName": "owner", "projectRole": "admin", "you": True}
    ]
    assert crw["roles"] == []


async def test_a_project_whose_texts_escape_to_six_bytes_a_character_still_answers_within_48_kib(
    url: str, db: Database, owner, mode: str
) -> None:  # type: ignore[no-untyped-def]
    # Control characters are stored as sent and take six bytes each in JSON (\u0001): 10,000
    # of them and a 2,000-character goal would make a 72 KB answer whole.
    make_project(
        db, owner, "ESC", description="P" + "\x01" * 9_998 + ".", goal="G" + "\x02" * 1_999
    )
    async with mcp_client(url, secret_for(db, owner, ALL), mode, EVERYTHING) as client:
        one = await client.call_tool("get_project", {"projectId": "ESC"})
        listed = await client.call_tool("list_projects", {"projectId": "ESC"})
    for result in (one, listed):
        assert not result.is_error
        assert len(result.content[0].text.encode()) <= 48 * 1024  # type: ignore[union-attr]
    project = body_of(one)["project"]
    assert project["descriptionTruncated"] is True
    assert project["descriptionLength"] == 10_000
    assert ("P" + "\x01" * 9_998 + ".").startswith(project["description"])
    row = body_of(listed)["projects"][0]
    assert row["descriptionTruncated"] is True
