"""REST routes built from the operation declarations: every operation a door can carry has
one route, listed in OpenAPI; the routes the generic handler serves work and refuse over real
HTTP as their MCP tools do."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from crewboard.api.openapi import openapi_document
from crewboard.api.routes import all_endpoints, routes
from crewboard.contract.catalogue import default_catalogue
from crewboard.contract.operation import NoDoor, Rest
from crewboard.domain.identity.records import User
from crewboard.services.board import repos
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_task, make_user
from tests.support.mcp_client import mcp_client

SCOPES = ["read", "tasks.manage", "messages.write", "team.manage"]
PRIVATE = {"workspaceId": None}


def _matches(route_path: str, path: str) -> bool:
    """Whether a Starlette route path (with `{revision:int}`) is the declared path."""
    return re.sub(r"{(\w+):\w+}", r"{\1}", route_path) == path


def test_every_operation_a_door_can_carry_declares_one_route_that_is_served_and_documented() -> (
    None
):
    served = [(r.path, set(r.methods or ())) for r in routes()]
    paths = openapi_document("http://testserver")["paths"]
    declared = []
    for operation in default_catalogue():
        if operation.stdio_only:
            assert isinstance(operation.rest, NoDoor), operation.name
            assert operation.rest.reason, operation.name
            continue
        assert isinstance(operation.rest, Rest), f"{operation.name} declares no REST route"
        rest = operation.rest
        declared.append((rest.method, rest.path))
        assert any(_matches(p, rest.path) and rest.method in m for p, m in served), operation.name
        assert rest.method.lower() in paths.get(rest.path, {}), operation.name
    assert [pair for pair, n in Counter(declared).items() if n > 1] == []


def test_each_endpoint_naming_an_operation_serves_exactly_its_declared_route() -> None:
    operations = {op.name: op for op in default_catalogue()}
    serving: Counter[str] = Counter()
    for endpoint in all_endpoints():
        if endpoint.operation is None:
            continue
        operation = operations.get(endpoint.operation)
        assert operation is not None, endpoint.operation
        assert isinstance(operation.rest, Rest)
        assert (endpoint.method, endpoint.path, endpoint.success) == (
            operation.rest.method,
            operation.rest.path,
            operation.rest.status,
        )
        serving[endpoint.operation] += 1
    carried = {op.name for op in operations.values() if isinstance(op.rest, Rest)}
    assert set(serving) == carried
    assert max(serving.values()) == 1


def test_a_generated_route_documents_its_path_arguments_only_in_the_path() -> None:
    paths = openapi_document("http://testserver")["paths"]
    notes = paths["/api/v1/tasks/{task}/notes"]["get"]
    assert [(p["name"], p["in"]) for p in notes["parameters"] if p["name"] == "taskId"] == []
    status = paths["/api/v1/projects/{project}/tasks/bulk-status"]["post"]
    body = status["requestBody"]["content"]["application/json"]["schema"]
    assert "projectId" not in body["properties"]
    assert "idempotencyKey" not in body["properties"]  # the Idempotency-Key header carries it
    assert {"Idempotency-Key"} <= {p["name"] for p in status["parameters"] if p["in"] == "header"}


# --- over real HTTP -----------------------------------------------------------------------


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    make_task(db, user, "CRW", "Fix the login redirect")
    make_task(db, user, "CRW", "Write the release notes")
    return user


def _client(url: str, secret: str) -> httpx2.Client:
    return httpx2.Client(base_url=f"{url}/api/v1", headers={"Authorization": f"Bearer {secret}"})


@pytest.fixture
def secret(db: Database, owner: User) -> str:
    return tokens.issue_token(db, person_actor(owner), kind="personal", scopes=SCOPES).secret


@pytest.fixture
def api(url: str, secret: str) -> Iterator[httpx2.Client]:
    with _client(url, secret) as client:
        yield client


def _refused(response: httpx2.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code, error
    return error


def test_the_week_is_read_and_a_bad_week_is_refused_naming_it(api: httpx2.Client) -> None:
    week = api.get("/projects/CRW/week", params={"timeZone": "Europe/Berlin"})
    assert week.status_code == 200, week.text
    assert len(week.json()["days"]) == 7
    bad = _refused(api.get("/projects/CRW/week", params={"week": "soon"}), 422, "VALIDATION")
    assert bad["details"]["field"] == "week"
    unknown = _refused(api.get("/projects/CRW/week", params={"colour": "red"}), 422, "VALIDATION")
    assert unknown["details"]["field"] == "colour"
    assert _refused(api.get("/projects/NOPE/week"), 404, "NOT_FOUND")


def test_a_question_and_an_update_are_notes_of_the_task_and_a_keyed_retry_replays(
    api: httpx2.Client,
) -> None:
    ask = {**PRIVATE, "question": "Which redirect URL is right?"}
    first = api.post("/tasks/CRW-1/questions", json=ask, headers={"Idempotency-Key": "q-1"})
    assert first.status_code == 201, first.text
    again = api.post("/tasks/CRW-1/questions", json=ask, headers={"Idempotency-Key": "q-1"})
    assert again.json() == first.json()
    update = {**PRIVATE, "content": "Half way there."}
    made = api.post("/tasks/CRW-1/updates", json=update, headers={"Idempotency-Key": "u-1"})
    assert made.status_code == 201, made.text
    notes = api.get("/tasks/CRW-1/notes", params={"kind": "question"})
    assert notes.status_code == 200, notes.text
    assert [n["kind"] for n in notes.json()["notes"]] == ["question"], notes.json()
    missing = _refused(api.post("/tasks/CRW-1/questions", json=ask), 422, "VALIDATION")
    assert missing["details"]["field"] == "Idempotency-Key"
    carried = api.post(
        "/tasks/CRW-1/questions",
        json={**ask, "taskId": "CRW-2"},
        headers={"Idempotency-Key": "q-2"},
    )
    assert _refused(carried, 422, "VALIDATION")["details"]["field"] == "taskId"


def test_repositories_are_listed_reported_on_and_an_unknown_one_refused(
    api: httpx2.Client, db: Database, owner: User
) -> None:
    repo = repos.add_repo(db, person_actor(owner), "CRW", "app", "https://github.com/a/app").id
    listed = api.get("/projects/CRW/repos")
    assert listed.status_code == 200, listed.text
    assert [r["id"] for r in listed.json()["repos"]] == [repo]
    change = {**PRIVATE, "branch": "agent/crw-1-fix-login", "title": "Fix login"}
    made = api.post(
        f"/tasks/CRW-1/repos/{repo}/changes", json=change, headers={"Idempotency-Key": "p-1"}
    )
    assert made.status_code == 201, made.text
    assert made.json()["created"] is True
    report = {**PRIVATE, "commit": "abc1234", "tests": "passed"}
    status = api.post(
        f"/tasks/CRW-1/repos/{repo}/status", json=report, headers={"Idempotency-Key": "r-1"}
    )
    assert status.status_code == 201, status.text
    assert status.json()["report"]["tests"] == "passed"
    on_task = api.get("/projects/CRW/repos", params={"taskId": "CRW-1"}).json()
    assert [x["branch"] for x in on_task["links"]] == ["agent/crw-1-fix-login"]
    unknown = api.post(
        "/tasks/CRW-1/repos/repo_nope/changes", json=change, headers={"Idempotency-Key": "p-2"}
    )
    assert _refused(unknown, 404, "NOT_FOUND")


def test_bulk_status_changes_move_tasks_and_a_stale_if_match_on_assignment_is_412(
    api: httpx2.Client,
) -> None:
    changes = {
        **PRIVATE,
        "changes": [
            {"taskId": "CRW-1", "status": "ready_for_ai"},
            {"taskId": "CRW-2", "status": "ready_for_ai"},
        ],
    }
    moved = api.post(
        "/projects/CRW/tasks/bulk-status", json=changes, headers={"Idempotency-Key": "s-1"}
    )
    assert moved.status_code == 200, moved.text
    assert moved.json()["failed"] == 0, moved.text
    listed = api.get("/projects/CRW/tasks", params={"status": "ready_for_ai"}).json()
    assert sorted(t["key"] for t in listed["tasks"]) == ["CRW-1", "CRW-2"]
    bad = {**PRIVATE, "changes": [{"taskId": "CRW-1", "status": "sideways"}]}
    refused = api.post(
        "/projects/CRW/tasks/bulk-status", json=bad, headers={"Idempotency-Key": "s-2"}
    )
    assert _refused(refused, 422, "VALIDATION")["message"].startswith("changes")
    stale = api.post(
        "/tasks/CRW-2/assignment",
        json={**PRIVATE, "assigneeId": None},
        headers={"Idempotency-Key": "a-1", "If-Match": '"99"'},
    )
    assert _refused(stale, 412, "REVISION_CONFLICT")


def test_stream_tokens_are_made_listed_and_revoked(api: httpx2.Client) -> None:
    made = api.post("/stream-tokens", json={"projectIds": ["CRW"], "name": "dashboard"})
    assert made.status_code == 201, made.text
    token_id = made.json()["streamToken"]["id"]
    assert made.json()["secret"].startswith("cbs_")
    listed = api.get("/stream-tokens")
    assert [t["id"] for t in listed.json()["streamTokens"]] == [token_id]
    revoked = api.delete(f"/stream-tokens/{token_id}")
    assert revoked.status_code == 200, revoked.text
    assert revoked.json()["changed"] is True
    assert api.delete(f"/stream-tokens/{token_id}").json()["changed"] is False
    assert _refused(api.delete("/stream-tokens/stk_nope"), 404, "NOT_FOUND")
    empty = _refused(api.post("/stream-tokens", json={"projectIds": []}), 422, "VALIDATION")
    assert empty["details"]["field"] == "projectIds"


def test_messages_are_read_back_with_get_and_the_participant_is_required(
    api: httpx2.Client, owner: User
) -> None:
    body = {**PRIVATE, "participantId": owner.id, "body": "Deploy is done."}
    posted = api.post("/projects/CRW/messages", json=body, headers={"Idempotency-Key": "m-1"})
    assert posted.status_code == 201, posted.text
    thread = api.get("/projects/CRW/messages", params={"participantId": owner.id})
    assert thread.status_code == 200, thread.text
    assert [m["body"] for m in thread.json()["messages"]] == ["Deploy is done."]
    missing = _refused(api.get("/projects/CRW/messages"), 422, "VALIDATION")
    assert missing["details"]["field"] == "participantId"


@pytest.mark.anyio
async def test_a_token_missing_a_scope_is_refused_by_a_generated_route_as_by_mcp(
    url: str, db: Database, owner: User
) -> None:
    secret = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=["read"]).secret
    arguments = {**PRIVATE, "question": "May I?"}
    with _client(url, secret) as api:
        refused = api.post(
            "/tasks/CRW-1/questions", json=arguments, headers={"Idempotency-Key": "q-1"}
        )
    error = _refused(refused, 403, "PERMISSION_DENIED")
    assert error["details"]["requiredScope"] == "tasks.manage"
    async with mcp_client(url, secret, "legacy") as client:
        result = await client.call_tool(
            "ask_question", {**arguments, "taskId": "CRW-1", "idempotencyKey": "q-1"}
        )
    assert result.is_error
    assert result.structured_content is not None
    assert error == {
        "code": result.structured_content["code"],
        "message": result.structured_content["message"],
        "details": result.structured_content["details"],
    }
