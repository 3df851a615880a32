"""The board over REST: the same services, argument models and error codes as the MCP tools."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from crewboard.api.board.tasks import ENDPOINTS
from crewboard.config import Settings
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, make_project, make_user
from tests.support.server import free_port, running_server

ALL = ["read", "tasks.manage", "projects.admin", "team.manage"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def api(db: Database, owner: User, tmp_path: Path) -> Iterator[httpx2.Client]:
    secret = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=ALL).secret
    headers = {"Authorization": f"Bearer {secret}"}
    with (
        running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base,
        httpx2.Client(base_url=f"{base}/api/v1", headers=headers) as client,
    ):
        yield client


def create(api: httpx2.Client, key: str, **fields: Any) -> httpx2.Response:
    body = {"workspaceId": None, "title": f"Task {key}", **fields}
    return api.post("/projects/CRW/tasks", json=body, headers={"Idempotency-Key": key})


def code_of(response: httpx2.Response) -> str:
    return str(response.json()["error"]["code"])


def field_of(response: httpx2.Response) -> str:
    return str(response.json()["error"]["details"]["field"])


def test_create_task_is_201_and_a_retry_with_its_key_replays_it(
    api: httpx2.Client, db: Database
) -> None:
    created = create(api, "k1", description="Write the intro", tags=["docs"], priority="high")
    assert created.status_code == 201
    task = created.json()["task"]
    assert (task["key"], task["number"], task["revision"]) == ("CRW-1", 1, 1)
    assert (task["priority"], task["tags"], task["status"]) == ("high", ["docs"], "backlog")
    assert created.json()["replayed"] is False
    again = create(api, "k1", description="Write the intro", tags=["docs"], priority="high")
    assert again.status_code == 201
    assert again.json() == {"task": task, "replayed": True}
    clash = create(api, "k1", description="Something else")
    assert clash.status_code == 409
    assert code_of(clash) == "IDEMPOTENCY_CONFLICT"
    assert clash.json()["error"]["details"]["resourceId"] == task["id"]
    assert count_rows(db, "tasks") == 1


def test_create_task_without_key_or_with_bad_fields_is_422_naming_the_field(
    api: httpx2.Client,
) -> None:
    no_key = api.post("/projects/CRW/tasks", json={"workspaceId": None, "title": "T"})
    assert no_key.status_code == 422
    assert (code_of(no_key), field_of(no_key)) == ("VALIDATION", "Idempotency-Key")
    bad_status = create(api, "k2", status="finished")
    assert bad_status.status_code == 422
    assert field_of(bad_status) == "status"
    assert "review" in bad_status.json()["error"]["details"]["accepted"]
    # Left out, workspaceId is the project's own; another workspace is refused.
    no_workspace = api.post(
        "/projects/CRW/tasks", json={"title": "T"}, headers={"Idempotency-Key": "k3"}
    )
    assert no_workspace.status_code == 201
    other = api.post(
        "/projects/CRW/tasks",
        json={"title": "T", "workspaceId": "ws_other"},
        headers={"Idempotency-Key": "k3b"},
    )
    assert (other.status_code, field_of(other)) == (422, "workspaceId")
    unknown = create(api, "k4", colour="red")
    assert (unknown.status_code, field_of(unknown)) == (422, "colour")
    key_in_body = create(api, "k5", idempotencyKey="k5")
    assert (key_in_body.status_code, field_of(key_in_body)) == (422, "idempotencyKey")
    too_long = create(api, "k6", title="x" * 301)
    assert (too_long.status_code, code_of(too_long)) == (422, "LIMIT_EXCEEDED")
    assert create(api, "k7", assigneeId="rol_nobody").status_code == 422


def test_get_task_by_id_or_key_with_or_without_its_context_pack(api: httpx2.Client) -> None:
    task = create(api, "k1", brief="- [ ] draft\n- [x] outline").json()["task"]
    by_id = api.get(f"/tasks/{task['id']}")
    assert by_id.status_code == 200
    assert by_id.json()["task"] == task
    assert by_id.json()["checklist"] == [
        {"text": "draft", "state": "open"},
        {"text": "outline", "state": "done"},
    ]
    assert "contextPack" in by_id.json()
    by_key = api.get("/tasks/CRW-1", params={"includeContextPack": "false"})
    assert by_key.json()["task"]["id"] == task["id"]
    assert "contextPack" not in by_key.json()
    brief = api.get("/tasks/crw-1", params={"format": "agent_brief"}).json()
    assert brief["text"].startswith("Task CRW-1: Task k1")
    assert api.get("/tasks/CRW-1", params={"includeContextPack": "maybe"}).status_code == 422
    missing = api.get("/tasks/CRW-99")
    assert (missing.status_code, code_of(missing)) == (404, "NOT_FOUND")
    assert api.get("/tasks/tsk_nothing").status_code == 404


def _number(row: dict[str, Any]) -> int:
    """A compact row's task number, read from its key (`CRW-2` → 2)."""
    return int(str(row["key"]).rsplit("-", 1)[1])


def test_list_tasks_filters_pages_and_names_bad_parameters(api: httpx2.Client) -> None:
    for made in (
        create(api, "a", description="alpha rocket", tags=["Docs"], status="blocked"),
        create(api, "b", description="beta rocket launch", tags=["code"], status="review"),
        create(api, "c", description="gamma", tags=["docs"], status="done", cycle="c1"),
    ):
        assert made.status_code == 201, made.json()
    listed = api.get("/projects/CRW/tasks", params={"limit": 2})
    assert listed.status_code == 200
    page = listed.json()
    assert ([_number(t) for t in page["tasks"]], page["total"], page["nextOffset"]) == (
        [1, 2],
        3,
        2,
    )
    assert api.get("/projects/CRW/tasks", params={"offset": 2}).json()["nextOffset"] is None
    repeated = api.get("/projects/CRW/tasks?status=review&status=done").json()
    comma = api.get("/projects/CRW/tasks", params={"status": "review,done"}).json()
    assert [_number(t) for t in repeated["tasks"]] == [_number(t) for t in comma["tasks"]] == [2, 3]
    assert [
        _number(t) for t in api.get("/projects/CRW/tasks", params={"tag": "DOCS"}).json()["tasks"]
    ] == [1, 3]
    assert [
        _number(t)
        for t in api.get("/projects/CRW/tasks", params={"q": "Rocket beta"}).json()["tasks"]
    ] == [2]
    assert [
        _number(t) for t in api.get("/projects/CRW/tasks", params={"number": "1,3"}).json()["tasks"]
    ] == [1, 3]
    assert [
        _number(t) for t in api.get("/projects/CRW/tasks", params={"cycle": "c1"}).json()["tasks"]
    ] == [3]
    newest = api.get(
        "/projects/CRW/tasks", params={"order": "desc", "fields": "title,revision"}
    ).json()
    assert newest["tasks"][0] == {
        "key": newest["tasks"][0]["key"],
        "title": "Task c",
        "revision": 1,
    }
    since = api.get("/projects/CRW/tasks", params={"updatedSince": "2026-03-01T00:00:00Z"})
    assert since.json()["total"] == 3
    for params, field in (
        ({"status": "review,finished"}, "status"),
        ({"limit": "many"}, "limit"),
        ({"limit": 500}, "limit"),
        ({"number": "one"}, "number"),
        ({"fields": "title,colour"}, "fields.1"),
        ({"order": "up"}, "order"),
        ({"stauts": "done"}, "stauts"),
        ({"updatedSince": "2026-03-01T00:00:00"}, "updatedSince"),
    ):
        refused = api.get("/projects/CRW/tasks", params=params)
        assert (refused.status_code, field_of(refused)) == (422, field), params
    assert api.get("/projects/NOPE/tasks").status_code == 404


def test_patch_with_if_match_is_412_when_stale_and_body_revision_409(api: httpx2.Client) -> None:
    task = create(api, "k1").json()["task"]
    url = f"/tasks/{task['key']}"
    first = api.patch(
        url, json={"status": "review"}, headers={"If-Match": '"1"', "Idempotency-Key": "u1"}
    )
    assert first.status_code == 200
    assert (first.json()["task"]["status"], first.json()["task"]["revision"]) == ("review", 2)
    assert first.json()["replayed"] is False
    stale_header = api.patch(
        url, json={"title": "Late"}, headers={"If-Match": '"1"', "Idempotency-Key": "u2"}
    )
    assert (stale_header.status_code, code_of(stale_header)) == (412, "REVISION_CONFLICT")
    details = stale_header.json()["error"]["details"]
    assert (details["currentRevision"], details["expectedRevision"]) == (2, 1)
    assert details["updatedBy"]["displayName"] == "owner"
    assert details["updatedAt"].startswith("2026-03-02T09:00:00")
    stale_body = api.patch(
        url, json={"title": "Late", "expectedRevision": 1}, headers={"Idempotency-Key": "u3"}
    )
    assert (stale_body.status_code, code_of(stale_body)) == (409, "REVISION_CONFLICT")
    assert stale_body.json()["error"]["details"]["currentRevision"] == 2
    fresh = api.patch(
        f"/tasks/{task['id']}",
        json={
            "title": "On time",
            "expectedRevision": 2,
            "workspaceId": None,
            "dueDate": "2026-04-01",
        },
        headers={"Idempotency-Key": "u4"},
    )
    assert fresh.status_code == 200
    assert (fresh.json()["task"]["title"], fresh.json()["task"]["dueDate"]) == (
        "On time",
        "2026-04-01",
    )
    assert api.get(url).json()["task"]["revision"] == 3


def test_patch_replays_by_key_and_refuses_what_it_cannot_apply(api: httpx2.Client) -> None:
    task = create(api, "k1").json()["task"]
    url = f"/tasks/{task['id']}"
    headers = {"If-Match": '"1"', "Idempotency-Key": "u1"}
    done = api.patch(url, json={"tags": ["x"]}, headers=headers)
    replay = api.patch(url, json={"tags": ["x"]}, headers=headers)
    assert replay.status_code == 200
    assert replay.json() == {**done.json(), "replayed": True}
    other = api.patch(url, json={"tags": ["y"]}, headers=headers)
    assert (other.status_code, code_of(other)) == (409, "IDEMPOTENCY_CONFLICT")
    no_key = api.patch(url, json={"tags": ["y"]}, headers={"If-Match": '"2"'})
    assert (no_key.status_code, field_of(no_key)) == (422, "Idempotency-Key")
    no_revision = api.patch(url, json={"tags": ["y"]}, headers={"Idempotency-Key": "u2"})
    assert (no_revision.status_code, field_of(no_revision)) == (422, "expectedRevision")
    unknown = api.patch(
        url, json={"colour": "red", "expectedRevision": 2}, headers={"Idempotency-Key": "u3"}
    )
    assert (unknown.status_code, field_of(unknown)) == (422, "colour")
    empty = api.patch(url, json={"expectedRevision": 2}, headers={"Idempotency-Key": "u4"})
    assert (empty.status_code, field_of(empty)) == (422, "patch")
    cleared_title = api.patch(
        url, json={"title": None, "expectedRevision": 2}, headers={"Idempotency-Key": "u5"}
    )
    assert (cleared_title.status_code, field_of(cleared_title)) == (422, "title")
    missing = api.patch(
        "/tasks/CRW-9",
        json={"title": "x", "expectedRevision": 1},
        headers={"Idempotency-Key": "u6"},
    )
    assert (missing.status_code, code_of(missing)) == (404, "NOT_FOUND")
    assert api.get(url).json()["task"]["revision"] == 2


def test_patch_takes_the_mcp_shape_too_and_refuses_the_two_mixed(api: httpx2.Client) -> None:
    task = create(api, "k1").json()["task"]
    url = f"/tasks/{task['id']}"
    done = api.patch(
        url,
        json={"projectId": "CRW", "workspaceId": None, "expectedRevision": 1,
              "patch": {"title": "Renamed"}},
        headers={"Idempotency-Key": "m1"},
    )  # fmt: skip
    assert done.status_code == 200, done.text
    assert done.json()["task"]["title"] == "Renamed"
    mixed = api.patch(
        url,
        json={"expectedRevision": 2, "patch": {"title": "x"}, "tags": ["y"]},
        headers={"Idempotency-Key": "m2"},
    )
    assert (mixed.status_code, field_of(mixed)) == (422, "tags")
    bad = api.patch(
        url,
        json={"expectedRevision": 2, "patch": {"priority": "whenever"}},
        headers={"Idempotency-Key": "m3"},
    )
    assert (bad.status_code, field_of(bad)) == (422, "patch.priority")
    elsewhere = api.patch(
        url,
        json={"projectId": "NOPE", "expectedRevision": 2, "patch": {"title": "x"}},
        headers={"Idempotency-Key": "m4"},
    )
    assert (elsewhere.status_code, code_of(elsewhere)) == (404, "NOT_FOUND")
    assert api.get(url).json()["task"]["revision"] == 2


def test_task_events_come_oldest_first_in_pages(api: httpx2.Client) -> None:
    task = create(api, "k1").json()["task"]
    for revision, status in enumerate(("ready_for_ai", "review", "done"), start=1):
        api.patch(
            f"/tasks/{task['id']}",
            json={"status": status, "expectedRevision": revision},
            headers={"Idempotency-Key": f"s{revision}"},
        )
    first = api.get(f"/tasks/{task['key']}/events", params={"limit": 3})
    assert first.status_code == 200
    page = first.json()
    assert (page["coverage"], page["hasMore"]) == ("complete", True)
    assert {(e["taskId"], e["taskKey"]) for e in page["events"]} == {(task["id"], "CRW-1")}
    moves = [(e["data"]["from"], e["data"]["to"]) for e in page["events"]]
    assert moves == [(None, "backlog"), ("backlog", "ready_for_ai"), ("ready_for_ai", "review")]
    rest = api.get(
        f"/tasks/{task['key']}/events", params={"limit": 3, "cursor": page["nextCursor"]}
    ).json()
    assert [e["data"]["to"] for e in rest["events"]] == ["done"]
    assert (rest["hasMore"], rest["nextCursor"]) == (False, None)
    only = api.get(
        f"/tasks/{task['id']}/events", params={"eventTypes": "assignment_changed,blocker_changed"}
    )
    assert only.json()["events"] == []
    bad_type = api.get(f"/tasks/{task['id']}/events", params={"eventTypes": "renamed"})
    assert (bad_type.status_code, field_of(bad_type)) == (422, "eventTypes.0")
    naive = api.get(f"/tasks/{task['id']}/events", params={"since": "2026-03-01T00:00:00"})
    assert (naive.status_code, field_of(naive)) == (422, "since")
    other_filters = api.get(
        f"/tasks/{task['key']}/events",
        params={"cursor": page["nextCursor"], "eventTypes": "status_changed"},
    )
    assert (other_filters.status_code, field_of(other_filters)) == (422, "cursor")
    assert api.get("/tasks/CRW-7/events").status_code == 404


def test_a_person_without_a_role_sees_no_task_and_no_token_is_401(
    api: httpx2.Client, db: Database
) -> None:
    task = create(api, "k1").json()["task"]
    stranger = make_user(db, "stranger@example.com")
    secret = tokens.issue_token(db, person_actor(stranger), kind="personal", scopes=ALL).secret
    as_stranger = {"Authorization": f"Bearer {secret}"}
    for response in (
        api.get(f"/tasks/{task['id']}", headers=as_stranger),
        api.get("/projects/CRW/tasks", headers=as_stranger),
        api.get(f"/tasks/{task['key']}/events", headers=as_stranger),
        api.patch(
            f"/tasks/{task['id']}",
            json={"title": "x", "expectedRevision": 1},
            headers={**as_stranger, "Idempotency-Key": "x"},
        ),
    ):
        assert (response.status_code, code_of(response)) == (404, "NOT_FOUND")
    assert httpx2.get(str(api.base_url.join("projects/CRW/tasks"))).status_code == 401


def test_a_read_only_token_reads_tasks_but_cannot_write_them(
    api: httpx2.Client, db: Database, owner: User
) -> None:
    task = create(api, "k1").json()["task"]
    secret = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=["read"]).secret
    reader = {"Authorization": f"Bearer {secret}"}
    assert api.get(f"/tasks/{task['id']}", headers=reader).status_code == 200
    refused = api.patch(
        f"/tasks/{task['id']}",
        json={"title": "x", "expectedRevision": 1},
        headers={**reader, "Idempotency-Key": "x"},
    )
    assert (refused.status_code, code_of(refused)) == (403, "PERMISSION_DENIED")
    refused = api.post(
        "/projects/CRW/tasks",
        json={"workspaceId": None, "title": "x"},
        headers={**reader, "Idempotency-Key": "y"},
    )
    assert (refused.status_code, code_of(refused)) == (403, "PERMISSION_DENIED")


def test_openapi_lists_the_task_routes_with_their_bodies(api: httpx2.Client) -> None:
    document = httpx2.get(str(api.base_url.join("openapi.json"))).json()
    described = {(path, method) for path, ops in document["paths"].items() for method in ops}
    assert {(e.path, e.method.lower()) for e in ENDPOINTS} <= described
    assert ("/api/v1/projects/{project}/tasks", "post") in described
    assert ("/api/v1/tasks/{task}", "patch") in described
    assert ("/api/v1/tasks/{task}/events", "get") in described
    post = document["paths"]["/api/v1/projects/{project}/tasks"]["post"]
    schema = post["requestBody"]["content"]["application/json"]["schema"]
    assert set(schema["required"]) == {"title"}
    assert "workspaceId" in schema["properties"]
    assert "idempotencyKey" not in schema["properties"]
    assert post["responses"]["201"]
    patch = document["paths"]["/api/v1/tasks/{task}"]["patch"]
    properties = patch["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert {"status", "boardOrder", "expectedRevision", "workspaceId"} <= set(properties)
    assert "required" not in patch["requestBody"]["content"]["application/json"]["schema"]
