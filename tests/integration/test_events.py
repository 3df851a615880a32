"""The event log: a row per change in the change's transaction; listeners hear only commits."""

from __future__ import annotations

import threading

import pytest

from crewboard.errors import AlreadyExists
from crewboard.services.identity.users import person_actor
from crewboard.services.projects import projects
from crewboard.storage.database import Database
from crewboard.storage.uow import EventRecord, UnitOfWork
from tests.conftest import ONLY_POSTGRESQL
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


def _write_one(db: Database, type_: str) -> EventRecord:
    heard: list[list[EventRecord]] = []
    db.add_event_listener(heard.append)
    db.write(lambda uow: uow.record_event(type_, actor={}, payload={}))
    return heard[-1][0]


def test_event_ids_are_not_reused_after_the_newest_row_is_deleted(db: Database) -> None:
    first = _write_one(db, "test.one")
    with db.engine.begin() as conn:
        conn.exec_driver_sql(f"DELETE FROM events WHERE id = {first.id}")
    second = _write_one(db, "test.two")
    assert second.id > first.id


@ONLY_POSTGRESQL
def test_event_ids_follow_commit_order_across_concurrent_writers(db: Database) -> None:
    """A writer whose events are inserted holds the event lock until it commits: another
    writer's events wait, so a reader that saw id N never later finds a smaller one."""
    first = db.engine.connect()
    trans = first.begin()
    early = UnitOfWork(first, db.clock)
    early.record_event("test.early", actor={}, payload={})
    early.write_events()  # id drawn, lock held, not yet committed
    done = threading.Event()

    def later() -> None:
        db.write(lambda uow: uow.record_event("test.later", actor={}, payload={}))
        done.set()

    worker = threading.Thread(target=later)
    worker.start()
    assert not done.wait(0.5)  # waits for the first writer's commit
    trans.commit()
    first.close()
    worker.join(10)
    rows = db.read(lambda uow: uow.events.list_after(project_id=None))
    assert [r["type"] for r in rows][-2:] == ["test.early", "test.later"]
    assert rows[-1]["id"] > rows[-2]["id"]
