"""REST: spec sessions over real HTTP, on both databases, against a real model server on
loopback. Starting waits for the first reply and answers it with the link for the person (or
firstTurnError when it could not run); a retry with the same Idempotency-Key answers the same
session; bad bodies and read-only tokens create nothing; sessions are listed, paged, filtered,
renamed, archived, unarchived and deleted only when archived; the working context on request;
a project's default model; and what OpenAPI states of each route."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest

from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support.factories import count_rows, make_project, make_user
from tests.support.model_server import ModelServer, Reply
from tests.support.sessions import configure_model, questions, system_prompt
from tests.support.sessions_module import Serve

S = "/projects/CRW/sessions"
OPENING = "We need a way for customers to export their invoices as CSV. Start a spec."
START = {"mode": "generate", "prompt": OPENING}


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com", is_owner=True)
    make_project(db, user, "CRW")
    make_project(db, user, "OTH")
    return user


def secret_of(db: Database, owner: User, *scopes: str) -> str:
    return tokens.issue_token(db, person_actor(owner), kind="personal", scopes=list(scopes)).secret


@pytest.fixture
def secret(db: Database, owner: User) -> str:
    return secret_of(db, owner, "read", "specs.write")


@contextmanager
def client(base: str, secret: str) -> Iterator[httpx2.Client]:
    headers = {"Authorization": f"Bearer {secret}"}
    with httpx2.Client(base_url=f"{base}/api/v1", headers=headers, timeout=30) as api:
        yield api


def start(api: httpx2.Client, key: str | None = None, **body: Any) -> httpx2.Response:
    headers = {} if key is None else {"Idempotency-Key": key}
    return api.post(S, json={**START, **body}, headers=headers)


def started(api: httpx2.Client, **body: Any) -> dict[str, Any]:
    answer = start(api, **body)
    assert answer.status_code == 201, answer.text
    return answer.json()  # type: ignore[no-any-return]


def test_start_waits_for_the_first_reply_and_answers_it_with_the_link(
    db: Database, serve: Serve, secret: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server, "anthropic")
    model_server.script(Reply(questions("Is CSV enough?", "Do admins export too?"), chunks=4))
    with serve() as base, client(base, secret) as api:
        answer = started(api, sessionTitle="Invoice export")
        got = api.get(f"{S}/{answer['sessionId']}").json()
    assert answer["pendingAction"] == "mcq_form_pending"
    assert answer["assistantText"] == "A few questions first."
    assert answer["sessionUrl"] == f"{base}/p/CRW/sessions/{answer['sessionId']}"
    assert "sessionUrl" in answer["nextStepInstruction"]
    assert "firstTurnError" not in answer
    assert answer["replayed"] is False
    assert OPENING in str(model_server.requests[-1].body["messages"])
    assert "<questions>" in system_prompt(model_server.requests[-1].body)
    session = got["session"]
    assert (session["title"], session["status"], session["mode"]) == (
        "Invoice export", "waiting", "generate",
    )  # fmt: skip
    assert got["sessionUrl"] == answer["sessionUrl"]
    assert "context" not in got
    assert "messages" not in got


def test_with_no_provider_the_session_is_kept_and_first_turn_error_says_why(
    db: Database, serve: Serve, secret: str
) -> None:
    with serve() as base, client(base, secret) as api:
        answer = started(api)
        listed = api.get(S, params={"status": "failed"}).json()
    assert answer["firstTurnError"]["code"] == "no_provider"
    assert "Settings" in answer["firstTurnError"]["message"]
    assert answer["sessionId"].startswith("ses_")
    assert "send the message again" in answer["nextStepInstruction"]
    assert [s["id"] for s in listed["sessions"]] == [answer["sessionId"]]


def test_a_retry_with_the_same_key_answers_the_same_session(
    db: Database, serve: Serve, secret: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    with serve() as base, client(base, secret) as api:
        first = started(api, key="spec-1")
        again = start(api, key="spec-1")
        in_body = started(api, idempotencyKey="spec-1")  # the same key, sent in the body
        other = start(api, key="spec-1", prompt="Something else entirely.")
        both = start(api, key="spec-1", idempotencyKey="spec-2")
    assert again.status_code == 201
    assert (again.json()["sessionId"], again.json()["replayed"]) == (first["sessionId"], True)
    assert again.json()["assistantText"] == first["assistantText"]
    assert in_body["sessionId"] == first["sessionId"]
    assert (other.status_code, other.json()["error"]["code"]) == (409, "IDEMPOTENCY_CONFLICT")
    assert (both.status_code, both.json()["error"]["details"]["field"]) == (422, "idempotencyKey")
    assert count_rows(db, "spec_sessions") == 1
    assert len(model_server.requests) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"workflowId": "nope-v1"}, "workflowId"),
        ({"workflowId": "crewboard-edit-v1"}, "workflowId"),  # an edit workflow, mode generate
        ({"modelId": "not-configured"}, "modelId"),
        ({"attachmentIds": ["att_0000000000000000000000"]}, "attachmentIds[0]"),
        ({"specFileIds": ["spf_0000000000000000000000"]}, "specFileIds[0]"),
        ({"specFileIds": [f"spf_{n}" for n in range(26)]}, "specFileIds"),
        ({"language": "klingon"}, "language"),
        ({"mode": "rewrite"}, "mode"),
        ({"mode": None}, "mode"),
        ({"sessionTitle": "x" * 501}, "sessionTitle"),
        ({"prompt": "   "}, "prompt"),
        ({"prompt": "x" * 20_001}, "prompt"),
        ({"prompt": 7}, "prompt"),
        ({"projectId": "OTH"}, "projectId"),
        ({"workspaceId": 3}, "workspaceId"),
        ({"unknownField": 1}, "unknownField"),
    ],
    ids=lambda value: str(value)[:40],
)
def test_bad_bodies_are_refused_naming_the_field_and_nothing_is_created(
    db: Database,
    serve: Serve,
    *,
    secret: str,
    model_server: ModelServer,
    body: dict[str, Any],
    field: str,
) -> None:
    configure_model(db, model_server)
    with serve() as base, client(base, secret) as api:
        refused = start(api, key="bad", **body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] in ("VALIDATION", "LIMIT_EXCEEDED")
    assert field in refused.json()["error"]["message"]
    assert count_rows(db, "spec_sessions") == 0
    assert count_rows(db, "spec_session_turns") == 0
    assert model_server.requests == []


def test_a_body_that_is_not_an_object_or_json_is_refused(
    db: Database, serve: Serve, secret: str
) -> None:
    with serve() as base, client(base, secret) as api:
        listed = api.post(S, json=[START])
        broken = api.post(S, content=b"{", headers={"Content-Type": "application/json"})
        empty = api.post(S, headers={"Idempotency-Key": ""}, json=START)
    assert listed.json()["error"]["details"]["field"] == "body"
    assert broken.json()["error"]["details"]["field"] == "body"
    assert empty.json()["error"]["details"]["field"] == "Idempotency-Key"
    assert {listed.status_code, broken.status_code, empty.status_code} == {422}
    assert count_rows(db, "spec_sessions") == 0


def test_a_read_only_token_reads_but_starts_and_changes_nothing(
    db: Database, serve: Serve, owner: User, secret: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    reader = secret_of(db, owner, "read")
    with serve() as base:
        with client(base, secret) as api:
            made = started(api)
        with client(base, reader) as api:
            refused = start(api, key="read-only")
            renamed = api.patch(f"{S}/{made['sessionId']}", json={"title": "Mine now"})
            archived = api.post(f"{S}/{made['sessionId']}/archive")
            listed = api.get(S).json()
            got = api.get(f"{S}/{made['sessionId']}")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "PERMISSION_DENIED")
    assert renamed.status_code == archived.status_code == 403
    assert listed["total"] == 1
    assert got.json()["session"]["title"] == OPENING  # the default title, not renamed
    assert got.json()["session"]["archived"] is False
    assert count_rows(db, "spec_sessions") == 1
    assert len(model_server.requests) == 1


def test_sessions_page_ten_by_default_twenty_at_most_and_filter(
    db: Database, serve: Serve, secret: str
) -> None:
    with serve() as base, client(base, secret) as api:  # no provider: each first turn fails
        for n in range(22):
            started(api, sessionTitle=f"Session {n}")
        first = api.get(S).json()
        most = api.get(S, params={"limit": 20, "offset": 20}).json()
        over = api.get(S, params={"limit": 21})
        negative = api.get(S, params={"offset": -1})
        found = api.get(S, params={"query": "SESSION 7"}).json()
        failed = api.get(S, params={"status": "failed", "limit": 1}).json()
        waiting = api.get(S, params={"status": "waiting"}).json()
        archived = api.get(S, params={"archiveFilter": "archived"}).json()
        bad_status = api.get(S, params={"status": "sleeping"})
        unknown = api.get(S, params={"sort": "title"})
        elsewhere = api.get("/projects/OTH/sessions").json()
    assert (len(first["sessions"]), first["total"], first["nextOffset"]) == (10, 22, 10)
    assert first["sessions"][0]["title"] == "Session 21"  # most recently active first
    assert (len(most["sessions"]), most["nextOffset"]) == (2, None)
    assert (over.status_code, over.json()["error"]["details"]["field"]) == (422, "limit")
    assert (negative.status_code, negative.json()["error"]["details"]["field"]) == (422, "offset")
    assert [s["title"] for s in found["sessions"]] == ["Session 7"]
    assert (failed["total"], len(failed["sessions"]), failed["nextOffset"]) == (22, 1, 1)
    assert waiting["total"] == archived["total"] == elsewhere["total"] == 0
    assert (bad_status.status_code, bad_status.json()["error"]["details"]["field"]) == (
        422, "status",
    )  # fmt: skip
    assert (unknown.status_code, unknown.json()["error"]["details"]["field"]) == (422, "sort")


def test_rename_archive_unarchive_and_delete_only_when_archived(
    db: Database, serve: Serve, secret: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server)
    with serve() as base, client(base, secret) as api:
        made = started(api, sessionTitle="Invoices")
        other = started(api, sessionTitle="Payments")
        one = f"{S}/{made['sessionId']}"
        renamed = api.patch(one, json={"title": "  Invoice export  ", "workspaceId": None})
        same = api.patch(one, json={"title": "Invoice export"}).json()
        blank = api.patch(one, json={"title": "   "})
        long = api.patch(one, json={"title": "x" * 501})
        carried = api.patch(one, json={"title": "X", "sessionId": other["sessionId"]})
        active = api.delete(one)
        first = api.post(f"{one}/archive").json()
        again = api.post(f"{one}/archive", json={}).json()
        listed = api.get(S).json()
        found = api.get(S, params={"archiveFilter": "archived"}).json()
        every = api.get(S, params={"archiveFilter": "all"}).json()
        archived_rename = api.patch(one, json={"title": "Archived but renamed"}).json()
        back = api.post(f"{one}/unarchive").json()
        api.post(f"{one}/archive")
        gone = api.delete(one)
        missing = api.get(one)
        twice = api.delete(one)
        wrong_project = api.get(f"/projects/OTH/sessions/{other['sessionId']}")
        not_an_id = api.get(f"{S}/tsk_123")
    assert renamed.status_code == 200, renamed.text
    assert (renamed.json()["session"]["title"], renamed.json()["changed"]) == (
        "Invoice export", True,
    )  # fmt: skip
    assert same["changed"] is False
    assert (blank.status_code, blank.json()["error"]["details"]["field"]) == (422, "title")
    assert long.status_code == 422
    assert "title" in long.json()["error"]["message"]
    assert carried.json()["error"]["details"]["field"] == "sessionId"
    assert (active.status_code, active.json()["error"]["details"]["field"]) == (422, "sessionId")
    assert "archive" in active.json()["error"]["message"]
    assert (first["session"]["archived"], first["changed"]) == (True, True)
    assert again["changed"] is False  # archiving twice changes nothing
    assert [s["id"] for s in listed["sessions"]] == [other["sessionId"]]
    assert [s["id"] for s in found["sessions"]] == [made["sessionId"]]
    assert every["total"] == 2
    assert archived_rename["session"]["archived"] is True
    assert (back["session"]["archived"], back["changed"]) == (False, True)
    assert (gone.status_code, gone.json()) == (200, {"deleted": True,
                                                     "sessionId": made["sessionId"]})  # fmt: skip
    assert missing.status_code == twice.status_code == 404
    assert missing.json()["error"]["code"] == "NOT_FOUND"
    assert wrong_project.status_code == not_an_id.status_code == 404
    assert count_rows(db, "spec_sessions") == 1


def test_include_context_adds_the_files_the_session_works_on(
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
    with serve() as base, client(base, secret) as api:
        made = started(api, mode="edit", specFileIds=[spec["id"]], attachmentIds=[note["id"]])
        one = f"{S}/{made['sessionId']}"
        shown = api.get(one, params={"includeContext": "true"}).json()
        plain = api.get(one, params={"includeContext": "false"}).json()
        bad = api.get(one, params={"includeContext": "maybe"})
        part = api.get(one, params={"contextOffset": 3, "contextLimit": 10}).json()
        off = api.get(one, params={"includeContext": "false", "contextOffset": 3})
        past = api.get(one, params={"contextLimit": 0})
    assert shown["session"]["workflowId"] == "crewboard-edit-v1"
    assert shown["session"]["specFileIds"] == [spec["id"]]
    assert "Invoices are numbered." in shown["context"]
    assert "Customers asked for CSV" in shown["context"]
    assert "context" not in plain
    assert (bad.status_code, bad.json()["error"]["details"]["field"]) == (422, "includeContext")
    assert (part["field"], part["text"], part["nextOffset"]) == (
        "context", shown["context"][3:13], 13,
    )  # fmt: skip
    assert part["length"] == len(shown["context"])
    assert (off.status_code, off.json()["error"]["details"]["field"]) == (422, "contextOffset")
    assert (past.status_code, past.json()["error"]["details"]["field"]) == (422, "contextLimit")


def test_a_projects_default_model_is_set_by_its_admins_only(
    db: Database, serve: Serve, owner: User, secret: str, model_server: ModelServer
) -> None:
    configure_model(db, model_server, model_id="house-model")
    admin = secret_of(db, owner, "read", "specs.write", "projects.admin")
    url = "/projects/CRW/session-settings"
    with serve() as base:
        with client(base, admin) as api:
            chosen = api.put(url, json={"modelId": "house-model"})
            unknown = api.put(url, json={"modelId": "nope"})
            missing = api.put(url, json={})
            read_back = api.get(url).json()
            cleared = api.put(url, json={"modelId": None}).json()
        with client(base, secret) as api:
            refused = api.put(url, json={"modelId": "house-model"})
            seen = api.get(url).json()
    assert (chosen.status_code, chosen.json()["modelId"]) == (200, "house-model")
    assert read_back["modelId"] == "house-model"
    assert seen["modelId"] is None  # a reader sees the choice (cleared by then)
    assert (unknown.status_code, unknown.json()["error"]["details"]["field"]) == (422, "modelId")
    assert "house-model" in unknown.json()["error"]["message"]
    assert (missing.status_code, missing.json()["error"]["details"]["field"]) == (422, "modelId")
    assert cleared["modelId"] is None
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "PERMISSION_DENIED")


def test_openapi_lists_every_session_route_with_its_bounds_and_bodies(
    serve: Serve, secret: str
) -> None:
    with serve() as base:
        document = httpx2.get(f"{base}/api/v1/openapi.json").json()
    paths = document["paths"]
    assert set(paths["/api/v1/projects/{project}/sessions"]) == {"get", "post"}
    one = "/api/v1/projects/{project}/sessions/{session}"
    assert set(paths[one]) == {"get", "patch", "delete"}
    assert set(paths[f"{one}/archive"]) == set(paths[f"{one}/unarchive"]) == {"post"}
    listing = paths["/api/v1/projects/{project}/sessions"]["get"]["parameters"]
    query = {p["name"]: p["schema"] for p in listing if p["in"] == "query"}
    # workspaceId: optional wherever a project is named (checked when sent)
    assert set(query) == {"archiveFilter", "status", "query", "limit", "offset", "workspaceId"}
    assert (query["limit"]["minimum"], query["limit"]["maximum"], query["limit"]["default"]) == (
        1, 20, 10,
    )  # fmt: skip
    post = paths["/api/v1/projects/{project}/sessions"]["post"]
    assert "201" in post["responses"]
    assert any(p["name"] == "Idempotency-Key" for p in post["parameters"])
    body = post["requestBody"]["content"]["application/json"]["schema"]
    assert {"mode", "prompt", "sessionTitle"} <= set(body["properties"])
    assert "idempotencyKey" not in body["properties"]  # the header is its documented place
    assert "projectId" not in body["properties"]
    assert body["properties"]["prompt"]["maxLength"] == 20_000
    details = {p["name"] for p in paths[one]["get"]["parameters"] if p["in"] == "query"}
    assert details == {"includeContext", "contextOffset", "contextLimit", "workspaceId"}
