"""The transaction runner: what a read and a write cost on the wire, and that a read's mode
never leaks into a write on the same pooled connection."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import select

from crewboard.storage.database import Database
from crewboard.storage.identity import tables as identity
from crewboard.storage.uow import UnitOfWork
from tests.support.factories import count_rows, make_user


class Boom(Exception):
    pass


def in_transaction(uow: UnitOfWork) -> bool:
    """Whether the database holds a transaction open for this unit of work, after a query."""
    uow.conn.execute(select(identity.users.c.id)).all()
    dbapi = uow.conn.connection.dbapi_connection
    if uow.conn.dialect.name == "postgresql":
        return bool(dbapi.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS)
    return bool(dbapi.in_transaction)


def test_a_read_on_postgresql_holds_no_transaction_a_write_does(db: Database) -> None:
    """Under READ COMMITTED every statement takes its own snapshot, in a transaction or not,
    so a read's BEGIN and COMMIT were two round trips that bought nothing. SQLite keeps its
    read transaction: there it is one snapshot for the whole read."""
    make_user(db, "owner@example.com")
    assert db.read(in_transaction) is (db.dialect == "sqlite")
    assert db.write(in_transaction) is True


def test_a_failed_write_after_reads_on_the_same_connections_is_rolled_back(
    db: Database,
) -> None:
    owner = make_user(db, "owner@example.com")
    for _ in range(3):  # every pooled connection has served reads
        db.read(lambda uow: uow.users.get(owner.id))

    def write_then_fail(uow: UnitOfWork) -> None:
        uow.conn.execute(
            identity.users.update()
            .where(identity.users.c.id == owner.id)
            .values(display_name="Changed")
        )
        raise Boom

    with pytest.raises(Boom):
        db.write(write_then_fail)
    found = db.read(lambda uow: uow.users.get(owner.id))
    assert found is not None
    assert found.display_name == owner.display_name
    assert count_rows(db, "users") == 1


def test_a_rehearsal_answers_as_the_write_would_and_keeps_nothing(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    events = count_rows(db, "events")
    heard: list[object] = []
    db.add_event_listener(heard.append)

    def rename(uow: UnitOfWork) -> str:
        uow.conn.execute(
            identity.users.update()
            .where(identity.users.c.id == owner.id)
            .values(display_name="Changed")
        )
        uow.record_event("user.renamed", actor={}, payload={"userId": owner.id})
        found = uow.users.get(owner.id)
        assert found is not None
        return found.display_name

    assert db.rehearse(rename) == "Changed"  # the write's own view of what it did
    found = db.read(lambda uow: uow.users.get(owner.id))
    assert found is not None
    assert found.display_name == owner.display_name
    assert count_rows(db, "events") == events
    assert heard == []
