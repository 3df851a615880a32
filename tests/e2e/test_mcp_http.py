"""The /mcp endpoint over raw HTTP: authentication, methods, sizes, headers and batches."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from pydantic import Field

from crewboard.config import Settings
from crewboard.contract.args import Args
from crewboard.contract.catalogue import Catalogue, default_catalogue
from crewboard.contract.operation import Call, Operation
from crewboard.contract.reply import Reply
from crewboard.domain.identity.access import Toolset
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, make_project, make_user
from tests.support.mcp_client import RAW_HEADERS, call, rpc
from tests.support.server import free_port, running_server


class RevokeMe(Args):
    note: str = Field(default="", max_length=10)


def _revoke_me(call_: Call, _args: RevokeMe) -> Reply:
    assert call_.actor.token is not None
    tokens.revoke_token(call_.db, call_.actor.token.id)
    return Reply({"revoked": call_.actor.token.id})


# A test-only tool: lets a batch revoke its own token between two messages.
REVOKE_ME = Operation(
    name="revoke_me",
    title="Revoke me",
    description="Test tool.",
    args=RevokeMe,
    toolset=Toolset.ADMIN,
    run=_revoke_me,
    read_only=False,
)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, port=free_port(), base_url=None)


@pytest.fixture
def url(db: Database, settings: Settings) -> Iterator[str]:
    with running_server(
        settings, db, catalogue=Catalogue([*default_catalogue(), REVOKE_ME])
    ) as base:
        yield base


@pytest.fixture
def secret(db: Database) -> str:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    scopes = ["read", "tasks.manage", "projects.admin"]
    return tokens.issue_token(db, person_actor(user), kind="personal", scopes=scopes).secret


def post(url: str, secret: str | None, body: Any, **headers: str) -> httpx2.Response:
    all_headers = {**RAW_HEADERS, **headers}
    if secret is not None:
        all_headers["Authorization"] = f"Bearer {secret}"
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(f"{url}/mcp", content=content, headers=all_headers, timeout=30)


def test_post_to_mcp_is_answered_there_without_a_redirect(url: str, secret: str) -> None:
    response = post(url, secret, rpc("tools/list", {}))
    assert response.status_code == 200
    assert response.json()["result"]["tools"][0]["name"] == "list_projects"


def test_get_on_mcp_is_405_in_both_eras(url: str, secret: str) -> None:
    for version in ("2025-06-18", "2026-07-28"):
        response = httpx2.get(
            f"{url}/mcp",
            headers={
                "Authorization": f"Bearer {secret}",
                "MCP-Protocol-Version": version,
                "Accept": "text/event-stream",
            },
            timeout=5,
        )
        assert response.status_code == 405
        assert response.headers["allow"] == "POST"


@pytest.mark.parametrize("authorization", [None, "Bearer cb_notarealtoken", "Basic Zm9vOmJhcg=="])
def test_missing_or_bad_token_is_401_pointing_at_resource_metadata(
    url: str, settings: Settings, authorization: str | None
) -> None:
    headers = dict(RAW_HEADERS)
    if authorization:
        headers["Authorization"] = authorization
    response = httpx2.post(f"{url}/mcp", json=rpc("tools/list", {}), headers=headers)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    metadata_url = f"{settings.public_url}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata_url}"' in challenge
    metadata = httpx2.get(f"{url}/.well-known/oauth-protected-resource/mcp").json()
    assert metadata["resource"] == f"{settings.public_url}/mcp"
    assert metadata["bearer_methods_supported"] == ["header"]
    assert "tasks.manage" in metadata["scopes_supported"]


@pytest.mark.parametrize(
    "arguments", [{"projectId": "CRW"}, "not an object"], ids=["well-formed", "malformed"]
)
def test_a_tool_call_with_an_unknown_token_is_401_like_any_other_message(
    url: str, arguments: Any
) -> None:
    # A tool call's API token is checked in the call's own worker-thread hop; one the SDK
    # refuses before the call (malformed arguments) is checked all the same.
    body = rpc("tools/call", {"name": "get_project_state", "arguments": arguments})
    response = post(url, "cb_notarealtoken", body)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert response.json()["error"]["code"] == -32001
    assert response.json()["error"]["message"]


def test_a_tool_call_after_its_token_was_revoked_is_401(url: str, secret: str) -> None:
    done = post(url, secret, call("revoke_me", {}))
    assert done.status_code == 200
    assert json.loads(done.json()["result"]["content"][0]["text"])["revoked"]
    refused = post(url, secret, call("get_project_state", {"projectId": "CRW"}, 2))
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == -32001
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]


def test_a_body_over_16_mib_is_413(url: str, secret: str) -> None:
    big = json.dumps(call("list_projects", {"projectId": "x" * (16 * 1024 * 1024)})).encode()
    assert post(url, secret, big).status_code == 413


def test_foreign_host_and_origin_are_refused(url: str, secret: str) -> None:
    assert post(url, secret, rpc("tools/list", {}), Host="attacker.example").status_code == 421
    assert (
        post(url, secret, rpc("tools/list", {}), Origin="https://attacker.example").status_code
        == 403
    )


def test_unknown_toolset_header_is_refused_with_the_accepted_ones(url: str, secret: str) -> None:
    response = post(url, secret, rpc("tools/list", {}), **{"X-MCP-Toolsets": "board,kitchen"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert "kitchen" in error["message"]
    assert "board" in error["data"]["accepted"]


def test_stateless_era_requires_matching_headers(url: str, secret: str) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    message = rpc("tools/list", {"_meta": meta})
    headers = {"MCP-Protocol-Version": "2026-07-28"}
    mismatched = post(url, secret, message, **headers, **{"Mcp-Method": "tools/call"})
    assert mismatched.status_code == 400
    assert mismatched.json()["error"]["code"] == -32020
    ok = post(url, secret, message, **headers, **{"Mcp-Method": "tools/list"})
    assert ok.status_code == 200
    assert ok.json()["result"]["cacheScope"] == "private"
    # Whitespace around a header's value is not part of it (RFC 9110 §5.5), whichever HTTP
    # parser uvicorn uses (httptools keeps it; h11 strips it).
    # (http.client sends such values as given; httpx refuses them.)
    call = rpc("tools/call", {"name": "list_projects", "arguments": {}, "_meta": meta})
    padded = {"Mcp-Method": " tools/call\t", "Mcp-Name": "list_projects  "}
    connection = http.client.HTTPConnection(urlsplit(url).netloc, timeout=30)
    all_headers = {**RAW_HEADERS, **headers, **padded, "Authorization": f"Bearer {secret}"}
    connection.request("POST", "/mcp", json.dumps(call).encode(), all_headers)
    answered = connection.getresponse()
    body = json.loads(answered.read())
    connection.close()
    assert answered.status == 200, body
    assert body["result"]["isError"] is False


def test_stateless_era_keeps_the_single_message_rule(url: str, secret: str) -> None:
    response = post(url, secret, [rpc("tools/list", {})], **{"MCP-Protocol-Version": "2026-07-28"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600


def test_a_batch_runs_in_order_and_answers_an_array(url: str, secret: str) -> None:
    batch = [
        call(
            "update_project_state",
            {"projectId": "CRW", "workspaceId": None, "content": "a", "expectedRevision": 0},
            1,
        ),
        rpc("notifications/initialized", None, None),
        call(
            "update_project_state",
            {"projectId": "CRW", "workspaceId": None, "content": "b", "expectedRevision": 1},
            2,
        ),
        call("get_project_state", {"projectId": "CRW"}, 3),
    ]
    response = post(url, secret, batch)
    assert response.status_code == 200
    answers = response.json()
    assert [a["id"] for a in answers] == [1, 2, 3]
    state = json.loads(answers[2]["result"]["content"][0]["text"])
    assert "structuredContent" not in answers[2]["result"]
    assert state["content"] == "b"
    assert state["revision"] == 2


def test_an_all_notification_batch_gets_202(url: str, secret: str) -> None:
    response = post(url, secret, [rpc("notifications/initialized", None, None)] * 2)
    assert response.status_code == 202


@pytest.mark.parametrize("size", [0, 21])
def test_an_empty_or_oversized_batch_is_refused_whole_and_nothing_runs(
    url: str, secret: str, db: Database, size: int
) -> None:
    batch = [
        call("create_project", {"workspaceId": None, "key": f"B{i}", "name": f"B{i}"}, i + 1)
        for i in range(size)
    ]
    projects_before = count_rows(db, "projects")
    response = post(url, secret, batch)
    assert response.status_code == 400
    answer = response.json()
    assert isinstance(answer, dict)
    assert answer["error"]["code"] == -32600
    assert count_rows(db, "projects") == projects_before


def test_twenty_messages_are_accepted(url: str, secret: str) -> None:
    batch = [call("get_project_state", {"projectId": "CRW"}, i) for i in range(20)]
    answers = post(url, secret, batch).json()
    assert len(answers) == 20


def test_a_token_revoked_during_a_batch_stops_the_later_messages(url: str, secret: str) -> None:
    batch = [
        call("get_project_state", {"projectId": "CRW"}, 1),
        call("revoke_me", {}, 2),
        call("get_project_state", {"projectId": "CRW"}, 3),
    ]
    answers = post(url, secret, batch).json()
    assert "result" in answers[0]
    assert json.loads(answers[1]["result"]["content"][0]["text"])["revoked"]
    assert answers[2]["error"]["code"] == -32001
    assert post(url, secret, rpc("tools/list", {})).status_code == 401


def test_a_streamed_method_we_do_not_serve_is_404_not_a_dropped_answer(
    url: str, secret: str
) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    message = rpc(
        "subscriptions/listen", {"_meta": meta, "notifications": {"toolsListChanged": True}}
    )
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
    response = post(url, secret, message, **headers)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == -32601
