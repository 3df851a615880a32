"""The OpenAPI document and the routes say the same thing, walked over every instance, on both
databases: a body the document requires is refused when left out (naming `body`), and one it
does not require may be left out; a header or query parameter it marks required is refused
when missing, and one it does not is not asked for; a method a path does not take gets 405
with an `Allow` naming every method the document lists for it; a caller without a token gets
401 before any word about their input; the live stream's events and an artifact file's media
type are what the document declares; a write's key is documented in one place (the header).

tests/e2e/test_fuzz_rest.py runs schemathesis' checks over the same document; these name each
rule on its own, so a failure says which one broke."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import jsonschema_rs
import pytest

from crewboard.api.common import Endpoint
from crewboard.api.openapi import LIVE_PATH
from crewboard.api.routes import all_endpoints
from crewboard.config import Settings
from crewboard.domain.identity.access import Scope
from crewboard.services.artifacts.artifacts import FileInput
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import artifact_calls
from tests.support.factories import make_project, make_user
from tests.support.server import free_port, running_server

# A signed webhook (GitHub's) takes no token and reads its raw body as the sender signed it:
# the walks below leave it out and `test_a_signed_webhook_*` says what it answers instead.
WRITES = [
    e for e in all_endpoints() if e.method in ("POST", "PUT", "PATCH", "DELETE") and not e.signed
]
SIGNED = [e for e in all_endpoints() if e.signed]


@dataclass
class Served:
    base: str
    client: httpx2.Client
    document: dict[str, Any]


@pytest.fixture
def served(db: Database, tmp_path: Path) -> Iterator[Served]:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    actor = person_actor(user)
    secret = tokens.issue_token(db, actor, kind="personal", scopes=[str(s) for s in Scope]).secret
    actor = tokens.authenticate_token(db, secret)
    tasks.create_task(
        db, actor, project="CRW", workspace_id=None, idempotency_key="t1", title="First"
    )
    artifact_calls.create_artifact(
        db, actor, project="CRW", workspace_id=None, slug="login", title=None, description=None,
        files=[FileInput("index.html", b"<h1>Login</h1>\n")], idempotency_key="artifact",
    )  # fmt: skip
    headers = {"Authorization": f"Bearer {secret}"}
    with (
        running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base,
        httpx2.Client(base_url=base, headers=headers, timeout=30) as client,
    ):
        document = client.get("/api/v1/openapi.json").json()
        yield Served(base, client, document)


def url_of(endpoint: Endpoint) -> str:
    """The endpoint's path with the project named and every other parameter made up."""
    path = endpoint.path.replace("{project}", "CRW").replace("{revision}", "1")
    return path.replace("{", "x-").replace("}", "")


def required_headers(endpoint: Endpoint) -> dict[str, str]:
    return {h.name: "1" for h in endpoint.headers if endpoint.requires(h)}


def operation(document: dict[str, Any], endpoint: Endpoint) -> dict[str, Any]:
    return document["paths"][endpoint.path][endpoint.method.lower()]  # type: ignore[no-any-return]


def field_of(response: httpx2.Response) -> Any:
    return response.json()["error"]["details"].get("field")


def test_a_body_is_required_exactly_when_the_document_says_so(served: Served) -> None:
    assert sum(e.body_required for e in WRITES) >= 20
    assert sum(e.body is not None and not e.body_required for e in WRITES) >= 10
    for endpoint in WRITES:
        body = operation(served.document, endpoint).get("requestBody")
        documented = bool(body and body["required"])
        assert documented == endpoint.body_required, endpoint
        answer = served.client.request(
            endpoint.method, url_of(endpoint), headers=required_headers(endpoint)
        )
        refused = answer.status_code == 422 and field_of(answer) == "body"
        assert refused == documented, (endpoint, answer.text)
        if refused:
            error = answer.json()["error"]
            assert error["code"] == "VALIDATION"
            assert error["details"]["required"] == list(endpoint.required_body_fields)


def test_a_header_the_document_marks_required_is_refused_when_missing(served: Served) -> None:
    walked = 0
    for endpoint in all_endpoints():
        listed = {
            p["name"]
            for p in operation(served.document, endpoint)["parameters"]
            if p["in"] == "header" and p["required"]
        }
        assert listed == set(required_headers(endpoint))
        for name in listed:
            walked += 1
            others = {k: v for k, v in required_headers(endpoint).items() if k != name}
            answer = served.client.request(
                endpoint.method, url_of(endpoint), json={"title": "x"}, headers=others
            )
            assert (answer.status_code, field_of(answer)) == (422, name), endpoint
    assert walked >= 2


def test_a_query_parameter_is_required_exactly_when_the_document_says_so(served: Served) -> None:
    walked = 0
    for endpoint in all_endpoints():
        if endpoint.query is None:
            continue
        walked += 1
        parameters = operation(served.document, endpoint)["parameters"]
        query = {p["name"]: p["required"] for p in parameters if p["in"] == "query"}
        answer = served.client.request(endpoint.method, url_of(endpoint))
        named = answer.status_code == 422 and field_of(answer) in query
        if named:  # refused for a parameter left out: the document must require it
            assert query[field_of(answer)], (endpoint, answer.text)
        required = sorted(n for n, r in query.items() if r)
        if required:
            assert (answer.status_code, field_of(answer)) == (422, required[0]), endpoint
    assert walked >= 25


def test_a_method_a_path_does_not_take_gets_405_with_every_method_it_does(
    served: Served,
) -> None:
    assert len(served.document["paths"]) >= 50
    for path, operations in served.document["paths"].items():
        methods = {m.upper() for m in operations}
        if "GET" in methods:
            methods.add("HEAD")
        url = path.replace("{project}", "CRW").replace("{revision}", "1").replace("{", "x-")
        answer = served.client.request("OPTIONS", url.replace("}", ""))
        assert answer.status_code == 405, path
        allowed = {m.strip() for m in answer.headers["allow"].split(",")}
        assert allowed == methods, path
        assert answer.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def test_a_caller_without_a_token_gets_401_before_any_word_about_their_input(
    served: Served,
) -> None:
    for endpoint in (e for e in all_endpoints() if not e.signed):
        answer = httpx2.request(
            endpoint.method,
            served.base + url_of(endpoint) + "?limit=-1&colour=red",
            content=b"{oops" if endpoint.method != "GET" else None,
            headers={"Idempotency-Key": "", "If-Match": "not a revision"},
        )
        assert answer.status_code == 401, (endpoint, answer.text)
        assert answer.json()["error"]["code"] == "UNAUTHENTICATED"


def test_a_signed_webhook_answers_a_project_without_it_as_not_found_whatever_it_is_sent(
    served: Served,
) -> None:
    """No token, no signature, a body that is no JSON: a project that has not set the webhook
    up answers as an unknown project does (a refusal with its code), never a word about the
    input. test_github_webhook holds the set-up project's answers (401 for a bad signature)."""
    assert SIGNED, "the GitHub webhook is a signed route"
    for endpoint in SIGNED:
        assert "default" in operation(served.document, endpoint)["responses"], endpoint
        answer = httpx2.request(
            endpoint.method, served.base + url_of(endpoint), content=b"{oops",
            headers={"X-GitHub-Event": "push"},
        )  # fmt: skip
        assert answer.status_code == 404, (endpoint, answer.text)
        assert answer.json()["error"]["code"] == "NOT_FOUND"


def test_a_proposal_without_a_body_or_a_kind_is_refused_naming_what_is_missing(
    served: Served,
) -> None:
    url = "/api/v1/projects/CRW/proposals"
    empty = served.client.post(url)
    assert (empty.status_code, field_of(empty)) == (422, "body")
    assert empty.json()["error"]["details"]["required"] == ["kind"]
    kindless = served.client.post(url, json={"title": "A task"})
    assert (kindless.status_code, field_of(kindless)) == (422, "kind")
    assert "None" not in kindless.json()["error"]["message"]
    made = served.client.post(
        url,
        json={"kind": "task", "workspaceId": None, "title": "A task"},
        headers={"Idempotency-Key": "p1"},
    )
    assert made.status_code == 201, made.text
    body = served.document["paths"][url.replace("CRW", "{project}")]["post"]["requestBody"]
    choices = body["content"]["application/json"]["schema"]["oneOf"]
    kinds = [c["properties"]["kind"]["const"] for c in choices]
    assert kinds == ["task", "task_update", "task_delete", "role", "composition"]
    assert all(c["required"][0] == "kind" for c in choices)


def test_a_null_revision_is_read_as_left_out_and_named_by_its_own_field(served: Served) -> None:
    task = served.client.patch(
        "/api/v1/tasks/CRW-1",
        json={"expectedRevision": None, "title": "Renamed"},
        headers={"Idempotency-Key": "u1"},
    )
    assert (task.status_code, field_of(task)) == (422, "expectedRevision")
    with_header = served.client.patch(
        "/api/v1/tasks/CRW-1",
        json={"expectedRevision": None, "title": "Renamed"},
        headers={"Idempotency-Key": "u2", "If-Match": '"1"'},
    )
    assert with_header.status_code == 200, with_header.text
    revision = served.client.post(
        "/api/v1/projects/CRW/artifacts/login/revisions",
        json={"files": [{"path": "index.html", "content": "<h1>2</h1>"}]},
        headers={"Idempotency-Key": "r1"},
    )
    assert (revision.status_code, field_of(revision)) == (422, "expectedVersion")


def test_an_artifact_file_is_served_as_a_media_type_the_document_declares(
    served: Served,
) -> None:
    answer = served.client.get(
        "/api/v1/projects/CRW/artifacts/login/file", params={"path": "index.html"}
    )
    assert answer.status_code == 200
    served_as = answer.headers["content-type"].split(";")[0]
    assert served_as == "text/html"
    path = "/api/v1/projects/{project}/artifacts/{artifact}/file"
    declared = served.document["paths"][path]["get"]["responses"]["200"]["content"]
    assert served_as in declared or "*/*" in declared


def test_each_live_event_matches_the_event_the_document_declares(served: Served) -> None:
    declared = served.document["paths"][LIVE_PATH]["get"]["responses"]["200"]["content"]
    schema = {
        **declared["text/event-stream"]["schema"],
        "components": served.document["components"],
    }
    validator = jsonschema_rs.validator_for(schema)
    events: list[dict[str, Any]] = []
    with served.client.stream("GET", "/api/v1/projects/CRW/events", params={"after": 0}) as live:
        assert live.headers["content-type"].startswith("text/event-stream")
        block: dict[str, Any] = {}
        for line in live.iter_lines():
            if line:
                name, _, value = line.partition(":")
                if name:  # a line starting with ":" is a heartbeat
                    block[name] = value.removeprefix(" ")
                continue
            if "data" in block:  # a block without data (`retry:`) is no event
                events.append({"event": "message", **block})
                if len(events) == 2:
                    break
            block = {}
    assert len(events) == 2
    for event in events:
        errors = [e.message for e in validator.iter_errors(event)]
        assert not errors, (event, errors)
        assert isinstance(json.loads(event["data"]), dict)


def test_a_writes_key_has_one_documented_place_and_a_key_in_the_body_still_counts(
    served: Served,
) -> None:
    keyed = [e for e in all_endpoints() if any(h.name == "Idempotency-Key" for h in e.headers)]
    assert len(keyed) >= 15
    for endpoint in keyed:
        body = operation(served.document, endpoint).get("requestBody")
        if body is None:
            continue
        schema = body["content"]["application/json"]["schema"]
        for choice in schema.get("oneOf", [schema]):
            assert "idempotencyKey" not in choice["properties"], endpoint
    url = "/api/v1/tasks/CRW-1/comments"
    comment = {"workspaceId": None, "content": "On it."}
    in_body = served.client.post(url, json={**comment, "idempotencyKey": "c1"})
    in_header = served.client.post(url, json=comment, headers={"Idempotency-Key": "c2"})
    assert (in_body.status_code, in_header.status_code) == (201, 201)
    neither = served.client.post(url, json=comment)
    assert (neither.status_code, field_of(neither)) == (422, "Idempotency-Key")
    both = served.client.post(
        url, json={**comment, "idempotencyKey": "c3"}, headers={"Idempotency-Key": "c4"}
    )
    assert (both.status_code, field_of(both)) == (422, "idempotencyKey")
