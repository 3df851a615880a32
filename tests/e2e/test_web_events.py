"""The live stream for signed-in people: Server-Sent Events from the broker, resumable."""

from __future__ import annotations

import json
import threading
from contextlib import ExitStack, closing
from typing import Any

import httpx2
import pytest

from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from crewboard.web.events import TABS
from tests.support.factories import make_project, make_user
from tests.support.web import sign_in


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    make_project(db, user, "OTH")
    return user


def add_task(db: Database, owner: User, title: str, project: str = "CRW") -> None:
    tasks.create_task(
        db,
        person_actor(owner),
        project=project,
        workspace_id=None,
        idempotency_key=f"{project}-{title}",
        title=title,
    )


def event_ids(db: Database) -> list[int]:
    with db.engine.connect() as conn:
        return list(conn.exec_driver_sql("SELECT id FROM events ORDER BY id").scalars())


def read_events(
    client: httpx2.Client, count: int, headers: dict[str, str], params: dict[str, str]
) -> list[dict[str, Any]]:
    """The first `count` events the stream sends (a bounded read: it never waits forever)."""
    found: list[dict[str, Any]] = []
    with client.stream("GET", "/events", headers=headers, params=params, timeout=10) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        event_id = None
        for line in answer.iter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                assert data["id"] == event_id
                found.append(data)
                if len(found) == count:
                    break
    return found


def test_the_stream_resumes_after_last_event_id_in_order(
    url: str, db: Database, owner: User
) -> None:
    for title in ("one", "two", "three"):
        add_task(db, owner, title)
    first, *rest = event_ids(db)[-3:]
    with closing(sign_in(url, owner.email)) as client:
        got = read_events(client, 2, {"last-event-id": str(first)}, {"project": "CRW"})
    assert [e["id"] for e in got] == rest
    assert {e["type"] for e in got} == {"task.created"}
    assert all("payload" not in e for e in got)  # ids and types only, never a text


def test_a_new_stream_starts_at_now_and_only_shows_the_chosen_project(
    url: str, db: Database, owner: User
) -> None:
    add_task(db, owner, "before")
    with closing(sign_in(url, owner.email)) as client:
        timer = threading.Timer(1.0, lambda: [add_task(db, owner, "elsewhere", "OTH"),
                                              add_task(db, owner, "after")])  # fmt: skip
        timer.start()
        got = read_events(client, 1, {}, {"project": "CRW"})
        timer.join()
    assert [e["type"] for e in got] == ["task.created"]
    assert got[0]["id"] == event_ids(db)[-1]  # "before" was not replayed; OTH was filtered


def test_the_stream_needs_a_session(url: str) -> None:
    with httpx2.Client(base_url=url) as client:
        assert client.get("/events").status_code == 401


def test_one_browser_session_may_hold_a_stream_per_tab_up_to_the_cap(url: str, owner: User) -> None:
    with closing(sign_in(url, owner.email)) as client, ExitStack() as open_streams:
        for _ in range(TABS):
            answer = open_streams.enter_context(client.stream("GET", "/events", timeout=10))
            assert answer.status_code == 200
        refused = client.get("/events", timeout=10)
        assert refused.status_code == 429
        assert f"{TABS} live streams" in refused.json()["error"]["message"]
        assert refused.headers["retry-after"] == "5"
        other = open_streams.enter_context(closing(sign_in(url, owner.email)))
        answer = open_streams.enter_context(other.stream("GET", "/events", timeout=10))
        assert answer.status_code == 200  # another session (the same person) has its own room
