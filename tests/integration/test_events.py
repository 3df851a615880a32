"""The event log: a row per change in the change's transaction; listeners hear only commits."""

from __future__ import annotations

import pytest

from crewboard.errors import AlreadyExists
from crewboard.services.identity.users import person_actor
from crewboard.services.projects import projects
from crewboard.storage.database import Database
from crewboard.storage.uow import EventRecord, UnitOfWork
from tests.support.factories import make_user


def test_every_change_writes_an_event_with_increasing_ids(db: Database) -> None:
    actor = person_actor(make_user(db, "ada@example.com"))
    projects.create_project(db, actor, workspace_id=None, key="CRW", name="Crew")
    projects.create_project(db, actor, workspace_id=None, key="TWO", name="Two")
    rows = db.read(lambda uow: uow.events.list_after(project_id=None))
    assert [r["type"] for r in rows] == ["user.created", "project.created", "project.created"]
    ids = [r["id"] for r in rows]
    assert ids == sorted(ids)
    assert len(set(ids)) == 3
    created = rows[1]
    assert created["actor"] == {"kind": "person", "userId": actor.user_id, "tokenId": None}
    assert created["payload"]["project"]["key"] == "CRW"
    assert created["project_id"] == created["payload"]["project"]["id"]


def test_listeners_hear_events_after_commit_and_nothing_from_a_rollback(db: Database) -> None:
    heard: list[list[EventRecord]] = []
    db.add_event_listener(heard.append)
    actor = person_actor(make_user(db, "ada@example.com"))
    heard.clear()
    projects.create_project(db, actor, workspace_id=None, key="CRW", name="Crew")
    assert [[e.type for e in batch] for batch in heard] == [["project.created"]]
    with pytest.raises(AlreadyExists):
        projects.create_project(db, actor, workspace_id=None, key="CRW", name="Again")
    assert len(heard) == 1

    def fail_after_event(uow: UnitOfWork) -> None:
        uow.record_event("test.rolled_back", actor={}, payload={})
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        db.write(fail_after_event)
    assert len(heard) == 1
    assert db.read(lambda uow: uow.events.count(type_="test.rolled_back")) == 0


def test_event_ids_are_not_reused_after_the_newest_row_is_deleted(db: Database) -> None:
    first = db.write(lambda uow: uow.record_event("test.one", actor={}, payload={}))
    with db.engine.begin() as conn:
        conn.exec_driver_sql(f"DELETE FROM events WHERE id = {first.id}")
    second = db.write(lambda uow: uow.record_event("test.two", actor={}, payload={}))
    assert second.id > first.id
