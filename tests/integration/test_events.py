"""The event log: a row per change in the change's transaction; listeners hear only commits."""

from __future__ import annotations

import threading
import warnings

import pytest

from crewboard.contract.projects import present
from crewboard.errors import AlreadyExists
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from crewboard.storage.uow import EVENT_LOCK, EventRecord, UnitOfWork
from tests.conftest import ONLY_POSTGRESQL
from tests.support.factories import make_user


def test_every_change_writes_an_event_with_increasing_ids(db: Database) -> None:
    actor = person_actor(make_user(db, "ada@example.com"))
    present.create_project(db, actor, workspace_id=None, key="CRW", name="Crew")
    present.create_project(db, actor, workspace_id=None, key="TWO", name="Two")
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
    present.create_project(db, actor, workspace_id=None, key="CRW", name="Crew")
    assert [[e.type for e in batch] for batch in heard] == [["project.created"]]
    with pytest.raises(AlreadyExists):
        present.create_project(db, actor, workspace_id=None, key="CRW", name="Again")
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
def test_an_event_writer_waits_while_another_transaction_holds_the_event_lock(
    db: Database,
) -> None:
    """The event lock orders the commits: a transaction holding it (as a write does while
    the server runs its last message) keeps another write's events waiting until it ends."""
    first = db.engine.connect()
    trans = first.begin()
    UnitOfWork(first, db.clock).serialize(EVENT_LOCK)
    done = threading.Event()

    def later() -> None:
        db.write(lambda uow: uow.record_event("test.later", actor={}, payload={}))
        done.set()

    worker = threading.Thread(target=later)
    worker.start()
    try:
        assert not done.wait(0.5)  # waits for the lock's holder to end
    finally:
        trans.commit()
        first.close()
    worker.join(10)
    assert done.is_set()
    assert db.read(lambda uow: uow.events.count(type_="test.later")) == 1


@ONLY_POSTGRESQL
def test_event_ids_follow_commit_order_under_concurrent_writers(db: Database) -> None:
    """Writers on several connections at once; a reader that pages "after the last id it saw"
    never later finds an id below one it has already passed, and sees every event once."""
    writers, each = 8, 40
    stop = threading.Event()
    seen: list[int] = []
    late: list[int] = []

    def write(n: int) -> None:
        for k in range(each):
            db.write(
                lambda uow, k=k: [
                    uow.record_event("test.burst", actor={}, payload={"n": n, "k": k, "i": i})
                    for i in range(1 + k % 3)
                ]
            )

    def read() -> None:
        after = 0
        while True:
            final = stop.is_set()
            rows = db.read(lambda uow, a=after: uow.events.list_after(project_id=None, after_id=a))
            for row in rows:
                seen.append(row["id"])
            if rows:
                newest = rows[-1]["id"]
                # An id at or below `after` committed after the reader passed it.
                every = db.read(lambda uow: uow.events.list_after(project_id=None, limit=10_000))
                late.extend(r["id"] for r in every if r["id"] <= after and r["id"] not in seen)
                after = newest
            elif final:
                return

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    reader = threading.Thread(target=read)
    reader.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    stop.set()
    reader.join(60)
    assert late == []
    total = db.read(lambda uow: uow.events.count(type_="test.burst"))
    assert total == sum(1 + k % 3 for k in range(each)) * writers
    assert sorted(seen) == seen
    assert len(set(seen)) == len(seen) == total


@ONLY_POSTGRESQL
def test_a_write_commits_its_events_in_the_message_that_takes_the_event_lock(
    db: Database,
) -> None:
    """The values travel bound by the driver (quotes, a placeholder, a statement separator,
    non-ASCII text come back as written); the write's answer carries the ids the rows got,
    and the connection is left with no transaction and no lock."""
    awkward = {"text": 'it\'s \\ a %s; COMMIT; -- ✓ "q"', "list": [1, None, "x"]}
    heard: list[list[EventRecord]] = []
    db.add_event_listener(heard.append)

    def work(uow: UnitOfWork) -> str:
        for n in range(3):
            uow.record_event(
                f"test.awkward{n}", actor={"kind": "person'"}, payload=awkward, project_id=None
            )
        return "done"

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert db.write(work) == "done"
    batch = heard[-1]
    assert [e.type for e in batch] == ["test.awkward0", "test.awkward1", "test.awkward2"]
    rows = db.read(lambda uow: uow.events.list_after(project_id=None))[-3:]
    assert [r["id"] for r in rows] == [e.id for e in batch]
    assert all(r["payload"] == awkward and r["actor"] == {"kind": "person'"} for r in rows)
    assert all(r["created_at"] == e.created_at for r, e in zip(rows, batch, strict=True))
    with db.engine.connect() as conn:
        held = conn.exec_driver_sql(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())"
        ).scalar_one()
        idle = conn.exec_driver_sql(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND state LIKE 'idle in transaction%%'"
        ).scalar_one()
    assert (held, idle) == (0, 0)
