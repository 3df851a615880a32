"""REST: the caller's own notifications (list, unreadOnly, paging), marking read (ids or all;
other people's ids left alone), and the settings; agent tokens refused with
HUMAN_IDENTITY_REQUIRED; bad arguments named."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.notifications.notify import notify
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from tests.support.factories import make_project, make_user
from tests.support.server import free_port, running_server


@pytest.fixture
def server(db: Database, tmp_path: Path) -> Iterator[str]:
    with running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base:
        yield f"{base}/api/v1"


def tell(db: Database, user: User, project_id: str, n: int) -> None:
    clock = db.clock
    assert isinstance(clock, ManualClock)
    for index in range(n):
        clock.advance(timedelta(minutes=1))

        def work(uow: UnitOfWork, i: int = index) -> None:
            notify(
                uow, recipients=[user.id], kind="handoff.received", project_id=project_id,
                title=f"Note {i}", body="", link="/p/CRW/handoffs", source=f"{user.id}:{i}",
                in_app=True, email=False,
            )  # fmt: skip

        db.write(work)


def client(db: Database, server: str, user: User, kind: str = "personal") -> httpx2.Client:
    issued = tokens.issue_token(
        db,
        person_actor(user),
        kind=kind,
        scopes=["read"],
        project="CRW" if kind == "agent" else None,
    )
    return httpx2.Client(base_url=server, headers={"Authorization": f"Bearer {issued.secret}"})


def test_list_mark_read_and_settings(db: Database, server: str) -> None:
    owner = make_user(db, "owner@example.com")
    other = make_user(db, "other@example.com")
    project = make_project(db, owner, "CRW")
    tell(db, owner, project, 3)
    tell(db, other, project, 1)
    with client(db, server, owner) as api, client(db, server, other) as theirs:
        listed = api.get("/notifications").json()
        assert [n["title"] for n in listed["notifications"]] == ["Note 2", "Note 1", "Note 0"]
        assert (listed["total"], listed["unread"], listed["nextOffset"]) == (3, 3, None)
        assert listed["notifications"][0]["readAt"] is None
        paged = api.get("/notifications", params={"limit": 2}).json()
        assert [n["title"] for n in paged["notifications"]] == ["Note 2", "Note 1"]
        assert paged["nextOffset"] == 2
        assert (
            api.get("/notifications", params={"limit": 2, "offset": 2}).json()["nextOffset"] is None
        )

        newest = listed["notifications"][0]["id"]
        foreign = theirs.get("/notifications").json()["notifications"][0]["id"]
        marked = api.post("/notifications/read", json={"ids": [newest, foreign]})
        assert marked.status_code == 200
        assert marked.json() == {"marked": 1, "unread": 2}
        assert theirs.get("/notifications").json()["unread"] == 1  # theirs left alone
        unread = api.get("/notifications", params={"unreadOnly": "true"}).json()
        assert [n["title"] for n in unread["notifications"]] == ["Note 1", "Note 0"]
        assert api.post("/notifications/read", json={"all": True}).json() == {
            "marked": 2,
            "unread": 0,
        }

        assert api.get("/notifications/settings").json() == {
            "inApp": True,
            "email": False,
            "emailAvailable": False,
        }
        changed = api.put("/notifications/settings", json={"inApp": False})
        assert changed.status_code == 200
        assert changed.json()["inApp"] is False
        assert api.get("/notifications/settings").json()["inApp"] is False


def test_bad_arguments_are_named(db: Database, server: str) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    with client(db, server, owner) as api:
        for params, field in (
            ({"limit": "0"}, "limit"),
            ({"offset": "-1"}, "offset"),
            ({"unread": "1"}, "unread"),
        ):
            answer = api.get("/notifications", params=params)
            assert answer.status_code == 422, answer.text
            assert answer.json()["error"]["code"] == "VALIDATION"
            assert field in answer.json()["error"]["message"]
        nothing = api.post("/notifications/read", json={})
        assert nothing.status_code == 422
        assert "ids" in nothing.json()["error"]["message"]
        too_many = api.post("/notifications/read", json={"ids": ["ntf_x"] * 201})
        assert too_many.status_code == 422
        wrong = api.put("/notifications/settings", json={"inApp": "yes"})
        assert wrong.status_code == 422
        assert "inApp" in wrong.json()["error"]["message"]
        unknown = api.put("/notifications/settings", json={"sms": True})
        assert unknown.status_code == 422
        assert "sms" in unknown.json()["error"]["message"]


def test_agent_tokens_are_refused(db: Database, server: str) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    with client(db, server, owner, kind="agent") as agent:
        for answer in (
            agent.get("/notifications"),
            agent.post("/notifications/read", json={"all": True}),
            agent.get("/notifications/settings"),
            agent.put("/notifications/settings", json={"email": True}),
        ):
            assert answer.status_code == 403, answer.text
            assert answer.json()["error"]["code"] == "HUMAN_IDENTITY_REQUIRED"
    with httpx2.Client(base_url=server) as anonymous:
        assert anonymous.get("/notifications").status_code == 401
