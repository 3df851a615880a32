"""The REST API: the same services and error codes as MCP, with HTTP statuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from crewboard.api.openapi import LIVE_PATH
from crewboard.api.routes import all_endpoints
from crewboard.config import Settings
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.server import free_port, running_server

ALL = ["read", "tasks.manage", "projects.admin", "team.manage"]


@pytest.fixture
def api(db: Database, tmp_path: Path) -> Iterator[httpx2.Client]:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    secret = tokens.issue_token(db, person_actor(user), kind="personal", scopes=ALL).secret
    headers = {"Authorization": f"Bearer {secret}"}
    with (
        running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base,
        httpx2.Client(base_url=f"{base}/api/v1", headers=headers) as client,
    ):
        yield client


def test_an_idempotency_key_sent_twice_with_two_values_is_refused_and_nothing_made(
    api: httpx2.Client,
) -> None:
    body = {"workspaceId": None, "key": "TWO", "name": "Two", "idempotencyKey": -3.9e220}
    refused = api.post("/projects", json=body, headers={"Idempotency-Key": "k-two"})
    assert refused.status_code == 422
    assert refused.json()["error"]["details"]["field"] == "idempotencyKey"
    assert "Idempotency-Key header" in refused.json()["error"]["message"]
    assert api.get("/projects/TWO").status_code == 404
    same = api.post(
        "/projects", json={**body, "idempotencyKey": "k-two"}, headers={"Idempotency-Key": "k-two"}
    )
    assert same.status_code == 201


def test_project_crud_with_statuses(api: httpx2.Client) -> None:
    created = api.post(
        "/projects",
        json={"workspaceId": None, "key": "NEW", "name": "New"},
        headers={"Idempotency-Key": "k1"},
    )
    assert created.status_code == 201
    project = created.json()["project"]
    replay = api.post(
        "/projects",
        json={"workspaceId": None, "key": "NEW", "name": "New"},
        headers={"Idempotency-Key": "k1"},
    )
    assert replay.json()["project"] == project
    assert replay.json()["replayed"] is True
    clash = api.post(
        "/projects",
        json={"workspaceId": None, "key": "NEW2", "name": "X"},
        headers={"Idempotency-Key": "k1"},
    )
    assert clash.status_code == 409
    assert clash.json()["error"]["code"] == "IDEMPOTENCY_CONFLICT"
    assert api.get("/projects/NEW").json()["project"]["id"] == project["id"]
    patched = api.patch("/projects/NEW", json={"phase": "build"})
    assert patched.status_code == 200
    assert patched.json()["project"]["phase"] == "build"
    assert api.delete("/projects/NEW").status_code == 422
    assert api.post("/projects/NEW/archive", json={"workspaceId": None}).json()["project"][
        "archived"
    ]
    assert api.delete("/projects/NEW").status_code == 200
    assert api.get("/projects/NEW").status_code == 404
    listed = api.get("/projects", params={"limit": 1})
    assert listed.json()["total"] == 1


def test_validation_errors_are_422_naming_the_field(api: httpx2.Client) -> None:
    bad = api.post(
        "/projects", json={"workspaceId": None, "key": "X1", "name": "X", "type": "blue"}
    )
    assert bad.status_code == 422
    assert bad.json()["error"]["details"]["field"] == "type"
    assert (
        api.get("/projects", params={"limit": "many"}).json()["error"]["details"]["field"]
        == "limit"
    )
    assert api.post("/projects", content=b"{not json").status_code == 422


def test_no_role_is_404_and_no_token_is_401(api: httpx2.Client, db: Database) -> None:
    stranger = make_user(db, "stranger@example.com")
    secret = tokens.issue_token(db, person_actor(stranger), kind="personal", scopes=ALL).secret
    response = api.get("/projects/CRW/state", headers={"Authorization": f"Bearer {secret}"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
    assert httpx2.get(str(api.base_url.join("projects"))).status_code == 401


def test_state_page_with_if_match_412_and_body_revision_409(api: httpx2.Client) -> None:
    assert api.get("/projects/CRW/state").json()["revision"] == 0
    first = api.put("/projects/CRW/state", json={"content": "one"}, headers={"If-Match": '"0"'})
    assert first.status_code == 200
    assert first.json()["revision"] == 1
    stale_header = api.put(
        "/projects/CRW/state", json={"content": "two"}, headers={"If-Match": '"0"'}
    )
    assert stale_header.status_code == 412
    assert stale_header.json()["error"]["details"]["currentRevision"] == 1
    stale_body = api.put("/projects/CRW/state", json={"content": "two", "expectedRevision": 0})
    assert stale_body.status_code == 409
    assert stale_body.json()["error"]["code"] == "REVISION_CONFLICT"
    missing = api.put("/projects/CRW/state", json={"content": "two"})
    assert missing.status_code == 422
    assert (
        api.put("/projects/CRW/state", json={"content": "two", "expectedRevision": 1}).json()[
            "revision"
        ]
        == 2
    )


def test_state_versions_are_listable_and_restorable(api: httpx2.Client) -> None:
    for revision, text in enumerate(["one", "two"]):
        api.put("/projects/CRW/state", json={"content": text, "expectedRevision": revision})
    versions = api.get("/projects/CRW/state/versions").json()
    assert [v["revision"] for v in versions["versions"]] == [2, 1]
    restored = api.post("/projects/CRW/state/versions/1/restore", json={"expectedRevision": 2})
    assert restored.status_code == 200
    assert (restored.json()["revision"], restored.json()["content"]) == (3, "one")
    stale = api.post("/projects/CRW/state/versions/1/restore", headers={"If-Match": "2"})
    assert stale.status_code == 412
    assert (
        api.post("/projects/CRW/state/versions/9/restore", json={"expectedRevision": 3}).status_code
        == 404
    )


def test_team_lists_roles_and_people(api: httpx2.Client) -> None:
    (team,) = api.get("/projects/CRW/team").json()["teams"]
    assert team["projectKey"] == "CRW"
    assert team["people"][0]["you"] is True


def test_openapi_describes_every_route(api: httpx2.Client) -> None:
    document = httpx2.get(str(api.base_url.join("openapi.json"))).json()
    assert document["openapi"] == "3.1.0"
    described = {(path, method) for path, ops in document["paths"].items() for method in ops}
    assert ("/api/v1/projects/{project}/state", "put") in described
    assert ("/api/v1/projects", "post") in described
    table = {(e.path, e.method.lower()) for e in all_endpoints()}
    assert described == table | {(LIVE_PATH, "get")}  # the live stream is served beside it
    put_state = document["paths"]["/api/v1/projects/{project}/state"]["put"]
    schema = put_state["requestBody"]["content"]["application/json"]["schema"]
    assert schema["properties"]["content"]["maxLength"] == 5000
