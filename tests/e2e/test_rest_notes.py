"""REST: a task's comments and outputs, with the same codes as MCP and HTTP statuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.domain.identity.access import Role
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, grant, make_project, make_user
from tests.support.server import free_port, running_server

SCOPES = ["read", "tasks.manage"]


@pytest.fixture
def server(db: Database, tmp_path: Path) -> Iterator[str]:
    with running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base:
        yield f"{base}/api/v1"


@pytest.fixture
def api(db: Database, server: str) -> Iterator[httpx2.Client]:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    tasks.create_task(
        db,
        person_actor(user),
        project="CRW",
        workspace_id=None,
        idempotency_key="t-1",
        title="Fix the login redirect",
    )
    secret = tokens.issue_token(db, person_actor(user), kind="personal", scopes=SCOPES).secret
    with httpx2.Client(base_url=server, headers={"Authorization": f"Bearer {secret}"}) as client:
        yield client


def client_for(db: Database, server: str, email: str, role: Role | None) -> httpx2.Client:
    user = make_user(db, email)
    if role is not None:
        owner = db.read(lambda uow: uow.users.get_by_email("owner@example.com"))
        assert owner is not None
        grant(db, owner, "CRW", user, role)
    secret = tokens.issue_token(db, person_actor(user), kind="personal", scopes=SCOPES).secret
    return httpx2.Client(base_url=server, headers={"Authorization": f"Bearer {secret}"})


def test_comments_post_with_a_key_replay_and_list_newest_first(api: httpx2.Client) -> None:
    body = {"workspaceId": None, "content": "First look: the guard is wrong."}
    created = api.post("/tasks/CRW-1/comments", json=body, headers={"Idempotency-Key": "c-1"})
    assert created.status_code == 201
    comment = created.json()["comment"]
    assert created.json()["replayed"] is False
    replay = api.post("/tasks/CRW-1/comments", json=body, headers={"Idempotency-Key": "c-1"})
    assert (replay.status_code, replay.json()["replayed"]) == (201, True)
    assert replay.json()["comment"] == comment
    clash = api.post(
        "/tasks/CRW-1/comments",
        json={**body, "content": "Other"},
        headers={"Idempotency-Key": "c-1"},
    )
    assert clash.status_code == 409
    assert clash.json()["error"]["code"] == "IDEMPOTENCY_CONFLICT"
    in_body = api.post("/tasks/CRW-1/comments", json={**body, "idempotencyKey": "c-2"})
    assert in_body.status_code == 201
    listed = api.get("/tasks/CRW-1/comments", params={"limit": 1})
    assert listed.status_code == 200
    page = listed.json()
    assert (page["total"], page["nextOffset"]) == (2, 1)
    assert page["comments"][0]["id"] == in_body.json()["comment"]["id"]
    assert page["task"]["key"] == "CRW-1"
    assert api.get("/tasks/CRW-1/comments", params={"kind": "agent_update"}).json()["total"] == 0


def test_comment_refusals_have_the_mcp_codes_and_http_statuses(
    api: httpx2.Client, db: Database, server: str
) -> None:
    no_key = api.post("/tasks/CRW-1/comments", json={"workspaceId": None, "content": "x"})
    assert no_key.status_code == 422
    assert no_key.json()["error"]["details"]["field"] == "Idempotency-Key"  # OpenAPI: required
    other_space = api.post(
        "/tasks/CRW-1/comments",
        json={"content": "x", "workspaceId": "ws_other"},
        headers={"Idempotency-Key": "k"},
    )
    assert other_space.json()["error"]["details"]["field"] == "workspaceId"
    too_long = api.post(
        "/tasks/CRW-1/comments",
        json={"workspaceId": None, "content": "x" * 20_001},
        headers={"Idempotency-Key": "k"},
    )
    assert (too_long.status_code, too_long.json()["error"]["code"]) == (422, "LIMIT_EXCEEDED")
    long_key = api.post(
        "/tasks/CRW-1/comments",
        json={"workspaceId": None, "content": "x"},
        headers={"Idempotency-Key": "k" * 129},
    )
    assert long_key.json()["error"]["details"]["field"] == "idempotencyKey"
    assert api.post("/tasks/CRW-1/comments", content=b"{oops").status_code == 422
    bad_kind = api.get("/tasks/CRW-1/comments", params={"kind": "everything"})
    assert bad_kind.json()["error"]["details"]["field"] == "kind"
    unknown = api.get("/tasks/CRW-1/comments", params={"colour": "red"})
    assert unknown.json()["error"]["details"]["field"] == "colour"
    missing = api.get("/tasks/CRW-9/comments")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "NOT_FOUND")
    with client_for(db, server, "reader@example.com", Role.READ) as reader:
        assert reader.get("/tasks/CRW-1/comments").status_code == 200
        denied = reader.post(
            "/tasks/CRW-1/comments",
            json={"workspaceId": None, "content": "x"},
            headers={"Idempotency-Key": "k"},
        )
        assert (denied.status_code, denied.json()["error"]["code"]) == (403, "PERMISSION_DENIED")
    with client_for(db, server, "stranger@example.com", None) as stranger:
        assert stranger.get("/tasks/CRW-1/comments").status_code == 404
    assert httpx2.get(f"{server}/tasks/CRW-1/comments").status_code == 401
    assert count_rows(db, "task_comments") == 0


def test_outputs_save_versions_list_newest_and_read_one_whole(api: httpx2.Client) -> None:
    def save(content: str, key: str) -> httpx2.Response:
        return api.post(
            "/tasks/CRW-1/outputs",
            json={"workspaceId": None, "name": "audit.md", "content": content},
            headers={"Idempotency-Key": key},
        )

    first = save("# Audit\n\nv1\n", "o-1")
    assert first.status_code == 201
    assert first.json()["output"]["version"] == 1
    assert save("# Audit\n\nv1\n", "o-1").json()["replayed"] is True
    second = save("# Audit\n\nv2\n", "o-2").json()["output"]
    assert (second["version"], second["versions"]) == (2, 2)
    listed = api.get("/tasks/CRW-1/outputs").json()
    assert [(o["name"], o["version"], o["preview"]) for o in listed["outputs"]] == [
        ("audit.md", 2, "# Audit\n\nv2\n")
    ]
    whole = api.get("/tasks/CRW-1/outputs", params={"name": "audit.md", "version": 1})
    assert whole.json()["output"]["content"] == "# Audit\n\nv1\n"
    gone = api.get("/tasks/CRW-1/outputs", params={"name": "audit.md", "version": 3})
    assert (gone.status_code, gone.json()["error"]["code"]) == (404, "NOT_FOUND")
    bad = api.get("/tasks/CRW-1/outputs", params={"version": "first"})
    assert bad.json()["error"]["details"]["field"] == "version"
    big = api.post(
        "/tasks/CRW-1/outputs",
        json={"workspaceId": None, "name": "big.txt", "content": "é" * 524_289},
        headers={"Idempotency-Key": "o-3"},
    )
    assert (big.status_code, big.json()["error"]["code"]) == (422, "LIMIT_EXCEEDED")
    assert big.json()["error"]["details"]["field"] == "content"


def test_openapi_describes_the_note_routes_with_their_bodies(api: httpx2.Client) -> None:
    document = httpx2.get(str(api.base_url.join("openapi.json"))).json()
    for kind in ("comments", "outputs"):
        operations = document["paths"][f"/api/v1/tasks/{{task}}/{kind}"]
        assert set(operations) == {"get", "post"}
        schema = operations["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert "workspaceId" in schema["properties"]
        assert "workspaceId" not in schema.get("required", [])
        assert "201" in operations["post"]["responses"]
