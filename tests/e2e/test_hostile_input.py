"""Hostile input through the public doors: each case here once broke the server (issue 10).

Numbers that are not finite or do not fit their column, JSON nested past any need, request ids
JSON-RPC does not allow, date-times sent as numbers, and tokens acting past their limits: each
is refused with the usual error naming the field, nothing is written, and the connection stays
usable for the next request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.domain.identity.access import ALL_SCOPES
from crewboard.domain.identity.records import User
from crewboard.jsonbody import MAX_DEPTH
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, make_project, make_user
from tests.support.mcp_client import RAW_HEADERS, call, rpc
from tests.support.server import free_port, running_server

HUGE = [2**31, 2**63, 2**64, 10**30]


@dataclass
class World:
    base: str
    secret: str
    owner: User
    task_id: str
    http: httpx2.Client

    def mcp(self, body: bytes | str | Any, **headers: str) -> httpx2.Response:
        content = body if isinstance(body, bytes | str) else json.dumps(body)
        return self.http.post(
            f"{self.base}/mcp",
            content=content,
            headers={**RAW_HEADERS, "Authorization": f"Bearer {self.secret}", **headers},
        )

    def rest(self, method: str, path: str, body: bytes | str | None = None) -> httpx2.Response:
        headers = {
            "Authorization": f"Bearer {self.secret}",
            "Content-Type": "application/json",
            "Idempotency-Key": f"rest-{method}-{path}-{body!r:.60}",
        }
        return self.http.request(method, f"{self.base}/api/v1{path}", content=body, headers=headers)


@pytest.fixture
def world(db: Database, tmp_path: Path) -> Iterator[World]:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    created = tasks.create_task(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        idempotency_key="first",
        title="First task",
    )
    secret = tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=sorted(ALL_SCOPES)
    ).secret
    with (
        running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base,
        httpx2.Client(timeout=30) as http,
    ):
        yield World(base, secret, owner, str(created.body["task"]["id"]), http)


def _strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in a response is not JSON")

    return json.loads(text, parse_constant=refuse)


def _tool_error(response: httpx2.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    result = _strict_json(response.text)["result"]
    assert result["isError"] is True
    error: dict[str, Any] = result["structuredContent"]
    return error


def _update_task(world: World, patch_json: str, revision: str = "1") -> httpx2.Response:
    arguments = (
        f'{{"projectId":"CRW","workspaceId":null,"idempotencyKey":"k-{len(patch_json)}",'
        f'"taskId":"{world.task_id}","expectedRevision":{revision},"patch":{patch_json}}}'
    )
    body = (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call",'
        f'"params":{{"name":"update_task","arguments":{arguments}}}}}'
    )
    return world.mcp(body)


def _task(world: World) -> dict[str, Any]:
    response = world.rest("GET", f"/tasks/{world.task_id}")
    assert response.status_code == 200, response.text
    task: dict[str, Any] = _strict_json(response.text)["task"]
    return task


# --- 1. numbers that are not finite --------------------------------------------------------


@pytest.mark.parametrize("value", ["1e309", "-1e309", "1e13"])
def test_update_task_refuses_a_board_order_that_is_not_a_finite_bounded_number(
    world: World, value: str
) -> None:
    error = _tool_error(_update_task(world, f'{{"boardOrder":{value}}}'))
    assert error["code"] == "VALIDATION"
    assert error["details"]["field"] == "patch.boardOrder"
    assert error["details"]["maximum"] == 1e12
    task = _task(world)
    assert task["revision"] == 1
    assert task["boardOrder"] == 1024.0


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_literals_are_a_parse_error_on_mcp(world: World, literal: str) -> None:
    response = _update_task(world, f'{{"boardOrder":{literal}}}')
    assert response.status_code == 400
    assert _strict_json(response.text)["error"]["code"] == -32700
    assert _task(world)["revision"] == 1


@pytest.mark.parametrize("literal", ["1e309", "NaN"])
def test_rest_refuses_a_board_order_that_is_not_finite_and_the_task_still_reads(
    world: World, literal: str
) -> None:
    body = f'{{"expectedRevision":1,"boardOrder":{literal}}}'
    response = world.rest("PATCH", f"/tasks/{world.task_id}", body)
    assert response.status_code == 422, response.text
    assert _strict_json(response.text)["error"]["code"] == "VALIDATION"
    assert _task(world)["boardOrder"] == 1024.0
    created = world.http.post(
        f"{world.base}/api/v1/projects/CRW/tasks",
        json={"title": "Next", "workspaceId": None},
        headers={"Authorization": f"Bearer {world.secret}", "Idempotency-Key": "next"},
    )
    assert created.status_code == 201, created.text
    assert _strict_json(created.text)["task"]["boardOrder"] == 2048.0


# --- 4. integers past what a column holds ----------------------------------------------------


@pytest.mark.parametrize("value", HUGE)
def test_mcp_refuses_integers_past_the_column_naming_field_and_range(
    world: World, value: int
) -> None:
    cases = [
        ("list_tasks", {"projectId": "CRW", "offset": value}, "offset"),
        ("list_tasks", {"projectId": "CRW", "number": [1, value]}, "number.1"),
        ("get_task", {"projectId": "CRW", "number": value}, "number"),
        ("list_projects", {"offset": value}, "offset"),
        ("get_project_memory", {"projectId": "CRW", "offset": value}, "offset"),
    ]
    for tool, arguments, field in cases:
        error = _tool_error(world.mcp(call(tool, arguments)))
        assert error["code"] == "VALIDATION", (tool, error)
        assert error["details"]["field"] == field
        assert error["details"]["maximum"] == 2**31 - 1
    error = _tool_error(_update_task(world, '{"title":"x"}', revision=str(value)))
    assert error["details"]["field"] == "expectedRevision"
    assert _task(world)["title"] == "First task"


@pytest.mark.parametrize("value", [str(2**63), "99999999999999999999", "-1", "²", "1e3"])
def test_rest_refuses_an_offset_that_is_not_a_whole_number_in_range(
    world: World, value: str
) -> None:
    for path in ("/projects", "/projects/CRW/tasks", f"/tasks/{world.task_id}/comments"):
        response = world.http.get(
            f"{world.base}/api/v1{path}",
            params={"offset": value},
            headers={"Authorization": f"Bearer {world.secret}"},
        )
        assert response.status_code == 422, (path, response.text)
        assert _strict_json(response.text)["error"]["details"]["field"] == "offset"


@pytest.mark.parametrize("value", ["1e30", str(2**63), "1.5", "true"])
def test_rest_refuses_an_expected_revision_that_is_not_a_revision(world: World, value: str) -> None:
    for path in ("/projects/CRW/state", f"/tasks/{world.task_id}"):
        method = "PUT" if path.endswith("state") else "PATCH"
        body = f'{{"expectedRevision":{value},"content":"x"}}'
        if method == "PATCH":
            body = f'{{"expectedRevision":{value},"title":"x"}}'
        response = world.rest(method, path, body)
        assert response.status_code == 422, (path, response.text)
        assert _strict_json(response.text)["error"]["details"]["field"] == "expectedRevision"
    assert _task(world)["title"] == "First task"


# --- 5. JSON nested past any need, and bodies too large --------------------------------------


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_deeply_nested_json_is_refused_on_every_door_and_the_connection_stays_usable(
    world: World, db: Database, depth: int
) -> None:
    events = count_rows(db, "events")
    single = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_projects",'
        f'"arguments":{{"projectId":{_nested(depth)}}}}}}}'
    )
    for body in (single, f"[{single}]", _nested(depth)):
        response = world.mcp(body)
        assert response.status_code == 400, response.text[:200]
        assert _strict_json(response.text)["error"]["code"] in (-32600, -32700)
    rest = world.rest("POST", "/projects/CRW/tasks", f'{{"title":"x","tags":{_nested(depth)}}}')
    assert rest.status_code == 422
    assert _strict_json(rest.text)["error"]["details"]["field"] == "body"
    # The same kept-alive connection answers the next request.
    assert world.mcp(rpc("tools/list", {})).status_code == 200
    assert count_rows(db, "events") == events


def test_rest_refuses_a_body_over_four_mebibytes_with_413(world: World, db: Database) -> None:
    events = count_rows(db, "events")
    body = json.dumps({"title": "x", "description": "a" * (4 * 1024 * 1024)})
    response = world.rest("POST", "/projects/CRW/tasks", body)
    assert response.status_code == 413
    assert _strict_json(response.text)["error"]["code"] == "LIMIT_EXCEEDED"
    assert count_rows(db, "events") == events
    assert _task(world)["title"] == "First task"


# --- 6. request ids JSON-RPC does not allow --------------------------------------------------


@pytest.mark.parametrize("id_", [{"a": 1}, [1], True, False, None, 1.5])
def test_a_request_whose_id_is_not_a_string_or_integer_is_an_invalid_request(
    world: World, id_: Any
) -> None:
    message = {"jsonrpc": "2.0", "id": id_, "method": "tools/list", "params": {}}
    response = world.mcp(message)
    assert response.status_code == 400
    error = _strict_json(response.text)
    assert error["id"] is None
    assert error["error"]["code"] == -32600
    batch = world.mcp([message, rpc("tools/list", {}, id_=2)])
    assert batch.status_code == 200
    answers = _strict_json(batch.text)
    assert [a.get("error", {}).get("code") for a in answers] == [-32600, None]
    assert answers[1]["id"] == 2


# --- 7. date-times as numbers ----------------------------------------------------------------


def test_date_and_date_time_arguments_refuse_numbers(world: World) -> None:
    cases = [
        ("list_tasks", {"projectId": "CRW", "updatedSince": 1_700_000_000}, "updatedSince"),
        ("list_task_events", {"taskId": world.task_id, "since": 0}, "since"),
        ("get_week", {"projectId": "CRW", "week": 20260301}, "week"),
        ("list_tasks", {"projectId": "CRW", "updatedSince": "1700000000"}, "updatedSince"),
        ("list_tasks", {"projectId": "CRW", "updatedSince": "2026-03-01T09:00"}, "updatedSince"),
        ("get_week", {"projectId": "CRW", "week": "0"}, "week"),
        ("get_week", {"projectId": "CRW", "week": "20260301"}, "week"),
    ]
    for tool, arguments, field in cases:
        error = _tool_error(world.mcp(call(tool, arguments)))
        assert error["code"] == "VALIDATION"
        assert error["details"]["field"] == field
    error = _tool_error(_update_task(world, '{"dueDate":1700000000}'))
    assert error["details"]["field"] == "patch.dueDate"
    assert _task(world)["dueDate"] is None


# --- 3. create_project and limited tokens ---------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"kind": "personal", "project": "CRW"},
        {"kind": "personal", "project": "CRW", "role": "read"},
        {"kind": "personal", "project": "CRW", "role": "admin"},
        {"kind": "agent", "project": "CRW", "role": "admin"},
        {"kind": "agent", "project": "CRW"},
        {"kind": "agent", "project": "CRW", "role": "read"},
    ],
)
def test_create_project_is_refused_to_every_limited_token(
    world: World, db: Database, options: dict[str, str]
) -> None:
    limited = tokens.issue_token(
        db, person_actor(world.owner), scopes=sorted(ALL_SCOPES), **options
    ).secret
    projects = count_rows(db, "projects")
    arguments = {"workspaceId": None, "key": "NEW", "name": "New", "idempotencyKey": "n"}
    response = world.http.post(
        f"{world.base}/mcp",
        content=json.dumps(call("create_project", arguments)),
        headers={**RAW_HEADERS, "Authorization": f"Bearer {limited}"},
    )
    error = _tool_error(response)
    assert error["code"] == "PERMISSION_DENIED"
    assert error["message"]
    rest = world.http.post(
        f"{world.base}/api/v1/projects",
        json={"workspaceId": None, "key": "NEW", "name": "New"},
        headers={"Authorization": f"Bearer {limited}"},
    )
    assert rest.status_code == 403
    assert count_rows(db, "projects") == projects


def test_create_project_works_for_an_unlimited_personal_token(world: World) -> None:
    arguments = {"workspaceId": None, "key": "NEW", "name": "New", "idempotencyKey": "n"}
    result = _strict_json(world.mcp(call("create_project", arguments)).text)["result"]
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"])["project"]["key"] == "NEW"


def test_the_sign_in_form_refuses_a_body_far_larger_than_a_sign_in(world: World) -> None:
    response = world.http.post(
        f"{world.base}/login",
        content=b"email=a%40b.c&password=" + b"x" * 100_000,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 413
    assert world.http.get(f"{world.base}/login").status_code == 200


# --- REST paths and bodies the fuzzers found ------------------------------------------------


def test_an_unknown_rest_path_or_method_answers_in_the_error_shape(world: World) -> None:
    for method, path, status, code in [
        ("GET", "/nothing-here", 404, "NOT_FOUND"),
        ("POST", "/projects/CRW/state/versions/abc/restore", 404, "NOT_FOUND"),
        ("DELETE", "/me", 405, "METHOD_NOT_ALLOWED"),
    ]:
        response = world.rest(method, path)
        assert response.status_code == status, (path, response.text)
        assert _strict_json(response.text)["error"]["code"] == code
    assert "GET" in world.rest("DELETE", "/me").headers["allow"]


def test_the_state_page_refuses_nul_and_a_revision_past_any_page(
    world: World, db: Database
) -> None:
    versions = count_rows(db, "project_state_versions")
    cases = [
        ('{"content":"a\\u0000b","expectedRevision":0}', "content"),
        (f'{{"content":"x","expectedRevision":{2**31 - 1}}}', None),
        ('{"content":"x","expectedRevision":0,"workspaceId":7}', "workspaceId"),
        ('{"content":"x","expectedRevision":0,"extra":1}', "extra"),
    ]
    for body, field in cases:
        response = world.rest("PUT", "/projects/CRW/state", body)
        error = _strict_json(response.text)["error"]
        if field is None:
            assert response.status_code == 409, response.text
            assert error["code"] == "REVISION_CONFLICT"
        else:
            assert response.status_code == 422, response.text
            assert error["details"]["field"] == field
    assert count_rows(db, "project_state_versions") == versions


@pytest.mark.parametrize("query", ["includeArchived=maybe", "includeArchived="])
def test_list_projects_refuses_a_flag_that_is_not_true_or_false(world: World, query: str) -> None:
    response = world.rest("GET", f"/projects?{query}")
    assert response.status_code == 422
    assert _strict_json(response.text)["error"]["details"]["field"] == "includeArchived"


@pytest.mark.parametrize("query", ["status=", "status=backlog,,review", "fields="])
def test_a_repeated_query_parameter_with_an_empty_value_is_refused(
    world: World, query: str
) -> None:
    response = world.rest("GET", f"/projects/CRW/tasks?{query}")
    assert response.status_code == 422
    assert (
        _strict_json(response.text)["error"]["details"]["field"] == query.split("=", maxsplit=1)[0]
    )


def _latin1(text: str) -> bytes:
    """Header bytes as a server decodes them (latin-1): "²" arrives as "²", which isdigit()."""
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode()


@pytest.mark.parametrize("value", ["²", "١٢", "-1", "0", str(2**31)])
def test_task_numbers_and_if_match_take_only_ascii_whole_numbers_in_range(
    world: World, value: str
) -> None:
    listed = world.http.get(
        f"{world.base}/api/v1/projects/CRW/tasks",
        params={"number": value},
        headers={"Authorization": f"Bearer {world.secret}"},
    )
    assert listed.status_code == 422, listed.text
    assert _strict_json(listed.text)["error"]["details"]["field"] == "number"
    patched = world.http.patch(
        f"{world.base}/api/v1/tasks/{world.task_id}",
        json={"title": "x"},
        headers={
            "Authorization": f"Bearer {world.secret}",
            "Idempotency-Key": f"if-match-{value.encode().hex()}",
            "If-Match": _latin1(f'"{value}"'),
        },
    )
    if value == "0":  # a revision number, only not this task's
        assert patched.status_code == 412, patched.text
    else:
        assert patched.status_code == 422, patched.text
        assert _strict_json(patched.text)["error"]["details"]["field"] == "If-Match"
    assert _task(world)["title"] == "First task"
