"""Activity, messages and proposal cards over REST: what a script (or an agent's tool) can do,
and that no route lets a token decide a card."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user

SCOPES = ["read", "tasks.manage", "messages.write", "team.manage"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def api(db: Database, url: str, owner: User) -> Iterator[httpx2.Client]:
    secret = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=SCOPES).secret
    with httpx2.Client(
        base_url=f"{url}/api/v1", headers={"Authorization": f"Bearer {secret}"}
    ) as client:
        yield client


def test_a_message_lands_in_a_thread_and_a_retry_with_its_key_replays(
    api: httpx2.Client, owner: User
) -> None:
    body = {"workspaceId": None, "participantId": owner.id, "body": "Deploy is **done**."}
    first = api.post("/projects/CRW/messages", json=body, headers={"Idempotency-Key": "m-1"})
    assert first.status_code == 201, first.text
    again = api.post("/projects/CRW/messages", json=body, headers={"Idempotency-Key": "m-1"})
    assert again.status_code == 201
    assert again.json()["replayed"] is True
    assert again.json()["message"]["id"] == first.json()["message"]["id"]
    nobody = api.post("/projects/CRW/messages", json={**body, "participantId": "usr_nobody"})
    assert nobody.status_code == 404
    assert nobody.json()["error"]["code"] == "NOT_FOUND"


def test_proposal_cards_are_made_and_listed_but_never_decided_over_rest(
    api: httpx2.Client,
) -> None:
    made = api.post(
        "/projects/CRW/proposals",
        json={"kind": "task", "workspaceId": None, "title": "Add a logout button"},
    )
    assert made.status_code == 201, made.text
    card = made.json()["proposal"]
    assert (card["kind"], card["status"]) == ("task", "pending")
    listed = api.get("/projects/CRW/proposals", params={"status": "pending"}).json()
    assert [p["id"] for p in listed["proposals"]] == [card["id"]]
    unknown = api.post("/projects/CRW/proposals", json={"kind": "poem", "workspaceId": None})
    assert unknown.status_code == 422
    assert unknown.json()["error"]["details"]["field"] == "kind"
    for verb in ("accept", "dismiss"):
        refused = api.post(f"/projects/CRW/proposals/{card['id']}/{verb}", json={})
        assert refused.status_code in (404, 405)  # there is no such route


def test_activity_lists_newest_first_and_follows_a_cursor(api: httpx2.Client) -> None:
    for title in ("one", "two"):
        api.post(
            "/projects/CRW/proposals",
            json={"kind": "task", "workspaceId": None, "title": title},
        )
    page = api.get("/projects/CRW/activity", params={"limit": 1}).json()
    assert [e["type"] for e in page["entries"]] == ["proposal.created"]
    cursor = page["cursor"]
    assert api.get("/projects/CRW/activity", params={"since": cursor}).json()["entries"] == []
    api.post("/projects/CRW/proposals", json={"kind": "task", "workspaceId": None, "title": "3"})
    newer = api.get("/projects/CRW/activity", params={"since": cursor}).json()
    assert [e["type"] for e in newer["entries"]] == ["proposal.created"]
    bad = api.get("/projects/CRW/activity", params={"since": "nope"})
    assert bad.status_code == 422
    assert bad.json()["error"]["details"]["field"] == "since"
