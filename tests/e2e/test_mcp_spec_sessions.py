"""Spec sessions over real HTTP with the official SDK client, against a real model server on
loopback that speaks the OpenAI and Anthropic APIs: an agent starts a session and gets the
first reply and the link; each way a first turn can fail comes back as firstTurnError with the
session kept; bad arguments and read-only tokens create nothing; sessions are found, renamed,
archived and deleted."""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from sqlalchemy.engine import URL

from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import body_of, mcp_client
from tests.support.model_server import Api, Broken, Hang, ModelServer, Reply, Status
from tests.support.sessions import configure_model, questions, system_prompt
from tests.support.sessions_module import Serve

pytestmark = pytest.mark.anyio

TOOLSETS = {"X-MCP-Toolsets": "specs"}
ON = {"projectId": "CRW", "workspaceId": None}
OPENING = "We need a way for customers to export their invoices as CSV. Start a spec."


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com", is_owner=True)
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def secret(db: Database, owner: User) -> str:
    return tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=["read", "specs.write"]
    ).secret


async def start(url: str, secret: str, era: str, **arguments: Any) -> Any:
    async with mcp_client(url, secret, era, TOOLSETS) as client:
        return await client.call_tool(
            "start_spec_session", {**ON, "mode": "generate", "prompt": OPENING, **arguments}
        )


async def call(url: str, secret: str, mode: str, tool: str, arguments: dict[str, Any]) -> Any:
    async with mcp_client(url, secret, mode, TOOLSETS) as client:
        return await client.call_tool(tool, {"projectId": "CRW", **arguments})


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_an_agent_starts_a_session_and_hands_on_the_first_reply_and_its_link(
    db: Database, serve: Serve, *, secret: str, mode: str, model_server: ModelServer, api: Api
) -> None:
    configure_model(db, model_server, api)
    model_server.script(Reply(questions("Is CSV enough?", "Do admins export too?"), chunks=5))
    with serve() as url:
        answer = body_of(await start(url, secret, mode, sessionTitle="Invoice export"))
        assert answer["pendingAction"] == "mcq_form_pending"
        assert answer["assistantText"] == "A few questions first."  # the form is not prose
        assert answer["sessionUrl"] == f"{url}/p/CRW/sessions/{answer['sessionId']}"
        assert "firstTurnError" not in answer
        assert "sessionUrl" in answer["nextStepInstruction"]
        sent = model_server.requests[-1]
        assert sent.path.endswith("/chat/completions" if api == "openai" else "/v1/messages")
        assert sent.body["stream"] is True
        assert "crewboard-greenfield-v1" not in system_prompt(sent.body)  # ids are not prose
        assert "<questions>" in system_prompt(sent.body)  # the reply protocol is taught
        assert OPENING in str(sent.body["messages"])
        got = body_of(await call(url, secret, mode, "get_spec_session",
                                 {"sessionId": answer["sessionId"]}))  # fmt: skip
        session = got["session"]
        assert (session["title"], session["status"], session["workflowId"]) == (
            "Invoice export", "waiting", "crewboard-greenfield-v1",
        )  # fmt: skip
        assert session["usage"]["inputTokens"] == 10
        assert session["usage"]["outputTokens"] > 0
        assert "messages" not in got
        assert "conversation" not in str(got)


async def test_a_provider_answering_tool_less_json_gives_the_same_first_turn(
    db: Database, serve: Serve, secret: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server, "openai", stream=False)
    model_server.script(Reply("Let us begin. What is the deadline?"))
    with serve() as url:
        answer = body_of(await start(url, secret, "2026-07-28"))
    assert answer["assistantText"] == "Let us begin. What is the deadline?"
    assert answer["pendingAction"] == "none"
    assert model_server.requests[-1].body.get("stream") in (False, None)


async def test_a_rate_limit_then_success_is_retried_into_a_first_reply(
    db: Database, serve: Serve, secret: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server, "anthropic")
    model_server.script(Status(429, retry_after="0"), Reply("Ready when you are."))
    with serve() as url:
        answer = body_of(await start(url, secret, "legacy"))
    assert answer["assistantText"] == "Ready when you are."
    assert len(model_server.requests) == 2


@pytest.mark.parametrize(
    ("behaviours", "provider_code"),
    [
        ((Status(500),) * 3, "server_error"),
        ((Hang(30),) * 3, "timeout"),
        ((Status(401, message="bad key"),), "refused"),
        ((Broken("Half a rep", ending="drop"),) * 3, None),  # a stream cut before it ended
    ],
    ids=["500", "hang", "401", "broken"],
)
async def test_a_first_turn_that_cannot_run_is_reported_and_the_session_kept(
    db: Database,
    serve: Serve,
    *,
    secret: str,
    model_server: ModelServer,
    behaviours: tuple[Any, ...],
    provider_code: str | None,
) -> None:
    configure_model(db, model_server, "openai", timeout=1.0, max_retries=2)
    model_server.script(*behaviours)
    with serve() as url:
        answer = body_of(await start(url, secret, "legacy"))
        error = answer["firstTurnError"]
        assert error["code"] == "provider_failed"
        assert error["message"]
        if provider_code is not None:
            assert error["providerCode"] == provider_code
        listed = body_of(await call(url, secret, "legacy", "list_spec_sessions", {}))
    assert listed["total"] == 1
    assert listed["sessions"][0]["status"] == "failed"
    assert listed["sessions"][0]["id"] == answer["sessionId"]


async def test_with_no_provider_configured_the_session_exists_and_says_why(
    serve: Serve, secret: str
) -> None:
    with serve() as url:
        answer = body_of(await start(url, secret, "2026-07-28"))
    assert answer["firstTurnError"]["code"] == "no_provider"
    assert "Settings" in answer["firstTurnError"]["message"]
    assert answer["sessionId"].startswith("ses_")


async def test_a_key_read_from_the_environment_is_sent_and_shown_nowhere(
    db: Database,
    serve: Serve,
    secret: str,
    model_server: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "sk-test-0123456789abcdef"
    monkeypatch.setenv("CREWBOARD_TEST_MODEL_KEY", key)
    configure_model(db, model_server, "anthropic", key_env="CREWBOARD_TEST_MODEL_KEY")
    model_server.script(Status(403, message=f"key {key} is not allowed"))
    with serve() as url:
        answer = await start(url, secret, "legacy")
    assert model_server.requests[-1].headers["x-api-key"] == key
    assert key not in str(answer.content)
    assert key not in str(answer.structured_content)


async def test_a_first_reply_still_running_after_the_wait_finishes_in_the_background(
    db: Database, serve: Serve, secret: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server, "openai", timeout=20)
    model_server.script(Hang(1.5))  # answers 504 after the hang; the retry then succeeds
    with serve(session_first_turn_wait=0.3) as url:
        answer = body_of(await start(url, secret, "2026-07-28"))
        assert answer["pendingAction"] == "turn_still_running"
        assert "background" in answer["nextStepInstruction"]
        session_id = answer["sessionId"]
        for _ in range(100):
            got = body_of(await call(url, secret, "2026-07-28", "get_spec_session",
                                     {"sessionId": session_id}))  # fmt: skip
            if got["session"]["status"] != "running":
                break
            await anyio.sleep(0.1)
    assert got["session"]["status"] == "waiting"


async def test_a_retry_with_the_same_key_answers_the_same_session(
    db: Database, serve: Serve, secret: str, mode: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    with serve() as url:
        first = body_of(await start(url, secret, mode, idempotencyKey="spec-1"))
        again = await start(url, secret, mode, idempotencyKey="spec-1")
        other = await start(url, secret, mode, idempotencyKey="spec-1", prompt="Something else")
        listed = body_of(await call(url, secret, mode, "list_spec_sessions", {}))
    assert body_of(again)["sessionId"] == first["sessionId"]
    assert other.is_error
    assert other.structured_content["code"] == "IDEMPOTENCY_CONFLICT"
    assert listed["total"] == 1
    assert len(model_server.requests) == 1


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"workflowId": "nope-v1"}, "workflowId"),
        ({"workflowId": "crewboard-edit-v1"}, "workflowId"),  # an edit workflow, mode generate
        ({"workflowId": "myspec-edit-v1"}, "workflowId"),  # the alias of an edit workflow
        ({"modelId": "not-configured"}, "modelId"),
        ({"attachmentIds": ["att_0000000000000000000000"]}, "attachmentIds[0]"),
        ({"specFileIds": ["spf_0000000000000000000000"]}, "specFileIds[0]"),
        ({"language": "klingon"}, "language"),
        ({"mode": "rewrite"}, "mode"),
        ({"sessionTitle": "x" * 501}, "sessionTitle"),
        ({"prompt": "   "}, "prompt"),
        ({"specFileIds": [f"spf_{n}" for n in range(26)]}, "specFileIds"),
    ],
    ids=lambda value: str(value)[:40],
)
async def test_bad_arguments_are_refused_naming_the_field_and_nothing_is_created(
    db: Database,
    serve: Serve,
    *,
    secret: str,
    model_server: ModelServer,
    arguments: dict[str, Any],
    field: str,
) -> None:
    configure_model(db, model_server)
    with serve() as url:
        refused = await start(url, secret, "legacy", **arguments)
        listed = body_of(await call(url, secret, "legacy", "list_spec_sessions",
                                    {"archiveFilter": "all"}))  # fmt: skip
    assert refused.is_error
    assert field in refused.structured_content["message"]
    assert listed["total"] == 0
    assert model_server.requests == []


async def test_a_read_only_token_starts_nothing(
    db: Database, serve: Serve, owner: User, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    reader = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=["read"]).secret
    with serve() as url:
        async with mcp_client(url, reader, "legacy", TOOLSETS) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            refused = await client.call_tool(
                "start_spec_session", {**ON, "mode": "generate", "prompt": OPENING}
            )
            listed = body_of(await client.call_tool("list_spec_sessions", {"projectId": "CRW"}))
    assert "start_spec_session" not in names
    assert "list_spec_sessions" in names
    assert refused.is_error
    assert refused.structured_content["code"] == "PERMISSION_DENIED"
    assert listed["total"] == 0
    assert model_server.requests == []


async def test_sessions_are_renamed_archived_found_and_deleted_only_when_archived(
    db: Database, serve: Serve, secret: str, mode: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    with serve() as url:
        made = body_of(await start(url, secret, mode, sessionTitle="Invoices"))
        other = body_of(await start(url, secret, mode, sessionTitle="Payments"))
        sid = {"sessionId": made["sessionId"], "workspaceId": None}
        renamed = body_of(await call(url, secret, mode, "rename_spec_session",
                                     {**sid, "title": "Invoice export"}))  # fmt: skip
        assert renamed["session"]["title"] == "Invoice export"
        refused = await call(url, secret, mode, "delete_spec_session", sid)
        assert refused.is_error
        assert "archive" in refused.structured_content["message"]
        body_of(await call(url, secret, mode, "archive_spec_session", sid))
        again = body_of(await call(url, secret, mode, "archive_spec_session", sid))
        assert again["changed"] is False  # idempotent
        active = body_of(await call(url, secret, mode, "list_spec_sessions", {}))
        assert [s["id"] for s in active["sessions"]] == [other["sessionId"]]
        found = body_of(await call(url, secret, mode, "list_spec_sessions",
                                   {"archiveFilter": "all", "query": "EXPORT"}))  # fmt: skip
        assert [s["title"] for s in found["sessions"]] == ["Invoice export"]
        renamed = body_of(await call(url, secret, mode, "rename_spec_session",
                                     {**sid, "title": "Archived but renamed"}))  # fmt: skip
        assert renamed["session"]["archived"] is True
        body_of(await call(url, secret, mode, "unarchive_spec_session", sid))
        body_of(await call(url, secret, mode, "archive_spec_session", sid))
        gone = body_of(await call(url, secret, mode, "delete_spec_session", sid))
        assert gone["deleted"] is True
        missing = await call(url, secret, mode, "get_spec_session", {"sessionId": sid["sessionId"]})
        assert missing.is_error
        assert missing.structured_content["code"] == "NOT_FOUND"


async def test_sessions_page_ten_by_default_and_twenty_at_most(
    db: Database, serve: Serve, secret: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    with serve(session_first_turn_wait=0) as url:
        for n in range(22):
            body_of(await start(url, secret, "2026-07-28", sessionTitle=f"S{n}"))
        first = body_of(await call(url, secret, "2026-07-28", "list_spec_sessions", {}))
        most = body_of(await call(url, secret, "2026-07-28", "list_spec_sessions",
                                  {"limit": 20, "offset": 20}))  # fmt: skip
        over = await call(url, secret, "2026-07-28", "list_spec_sessions", {"limit": 21})
    assert (len(first["sessions"]), first["total"], first["nextOffset"]) == (10, 22, 10)
    assert (len(most["sessions"]), most["nextOffset"]) == (2, None)
    assert over.is_error
    assert "limit" in over.structured_content["message"]


async def test_the_working_context_names_the_files_the_session_works_on(
    db: Database, serve: Serve, secret: str, owner: User, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    actor = person_actor(owner)
    spec = spec_calls.upload_spec_file(
        db, actor, project="CRW", workspace_id=None, path="specs/billing/requirements.md",
        content=b"# Billing\n1. Invoices are numbered.\n", idempotency_key=None,
    ).body["file"]  # fmt: skip
    note = spec_calls.upload_attachment(
        db, actor, project="CRW", workspace_id=None, name="notes.txt",
        content=b"Customers asked for CSV in March.\n", override=False, idempotency_key=None,
    ).body["attachment"]  # fmt: skip
    with serve() as url:
        made = body_of(await start(
            url, secret, "legacy", mode="edit", specFileIds=[spec["id"]],
            attachmentIds=[note["id"]],
        ))  # fmt: skip
        got = body_of(await call(url, secret, "legacy", "get_spec_session",
                                 {"sessionId": made["sessionId"], "includeContext": True}))  # fmt: skip
    assert got["session"]["workflowId"] == "crewboard-edit-v1"
    assert "Invoices are numbered." in got["context"]
    assert "Customers asked for CSV" in got["context"]
    assert "Invoices are numbered." in system_prompt(model_server.requests[-1].body)


async def test_over_stdio_the_mcp_process_runs_the_first_turn_itself(
    database_url: URL, db: Database, secret: str, model_server: ModelServer
) -> None:
    """`crewboard mcp` on a machine where no server runs: its own runner takes the turn."""
    configure_model(db, model_server, "anthropic")
    model_server.script(Reply(questions("Which formats?")))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "crewboard", "mcp", "--toolsets", "specs"],
        env={
            "PATH": os.environ.get("PATH", ""),
            "CREWBOARD_DATABASE_URL": database_url.render_as_string(hide_password=False),
            "CREWBOARD_TOKEN": secret,
        },
    )
    async with Client(params, mode="legacy") as client:
        answer = body_of(
            await client.call_tool(
                "start_spec_session", {**ON, "mode": "generate", "prompt": OPENING}
            )
        )
    assert answer["pendingAction"] == "mcq_form_pending"
    assert answer["sessionUrl"].endswith(f"/p/CRW/sessions/{answer['sessionId']}")
    assert len(model_server.requests) == 1


async def test_get_project_lists_the_active_sessions_and_counts_spec_files(
    db: Database, serve: Serve, secret: str, owner: User, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    spec_calls.upload_spec_file(
        db, person_actor(owner), project="CRW", workspace_id=None, path="specs/a.md",
        content=b"# A\n", idempotency_key=None,
    )  # fmt: skip
    with serve() as url:
        made = body_of(await start(url, secret, "2026-07-28", sessionTitle="Export"))
        archived = body_of(await start(url, secret, "2026-07-28", sessionTitle="Old"))
        body_of(await call(url, secret, "2026-07-28", "archive_spec_session",
                           {"sessionId": archived["sessionId"], "workspaceId": None}))  # fmt: skip
        async with mcp_client(url, secret, "2026-07-28") as client:
            project = body_of(await client.call_tool("get_project", {"projectId": "CRW"}))
    assert [s["id"] for s in project["activeSessions"]] == [made["sessionId"]]
    assert project["activeSessions"][0]["pendingAction"] == "none"
    assert (project["counts"]["specFiles"], project["counts"]["attachments"]) == (1, 0)


async def test_an_alias_starts_its_workflow_and_a_speckit_session_is_told_its_feature_number(
    db: Database, serve: Serve, secret: str, owner: User, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    spec_calls.upload_spec_file(
        db, person_actor(owner), project="CRW", workspace_id=None, path="specs/001-login/spec.md",
        content=b"# Login\n", idempotency_key=None,
    )  # fmt: skip
    with serve() as url:
        aliased = body_of(await start(url, secret, "legacy", workflowId="myspec-greenfield-v1"))
        kit = body_of(await start(url, secret, "legacy", workflowId="speckit-greenfield-v1",
                                  prompt="Invoices as CSV."))  # fmt: skip
        first = body_of(await call(url, secret, "legacy", "get_spec_session",
                                   {"sessionId": aliased["sessionId"]}))  # fmt: skip
        got = body_of(await call(url, secret, "legacy", "get_spec_session",
                                 {"sessionId": kit["sessionId"], "includeContext": True}))  # fmt: skip
    assert first["session"]["workflowId"] == "crewboard-greenfield-v1"
    assert got["session"]["workflowId"] == "speckit-greenfield-v1"
    assert "The next free feature number is 002" in got["context"]
    assert "specs/002-short-name/" in system_prompt(model_server.requests[-1].body)


async def test_a_session_that_reads_code_with_no_bridge_answers_at_once_with_what_to_run(
    db: Database, serve: Serve, secret: str, model_server: ModelServer
) -> None:
    # The first reply cannot come before the person's `crewboard reverse` does: the agent is
    # told at once (not after the whole wait) what to run, and the session waits for it.
    configure_model(db, model_server, "openai")
    with serve(session_first_turn_wait=60) as url:
        began = anyio.current_time()
        answer = body_of(await start(url, secret, "2026-07-28", workflowId="myspec-brownfield-v1"))
        assert anyio.current_time() - began < 30
        assert answer["pendingAction"] == "turn_still_running"
        assert "firstTurnError" not in answer
        [warning] = answer["warnings"]
        assert "crewboard reverse --project CRW" in warning
        assert "crewboard reverse --project CRW <folder>" in answer["nextStepInstruction"]
        got = body_of(await call(url, secret, "2026-07-28", "get_spec_session",
                                 {"sessionId": answer["sessionId"]}))  # fmt: skip
        assert got["warnings"] == [warning]
        assert got["session"]["workflowId"] == "crewboard-brownfield-v1"
    assert model_server.requests == []  # the model is not asked before the code can be read
