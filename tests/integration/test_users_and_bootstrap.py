"""Accounts, passwords, and the first start of an empty instance."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from crewboard.contract.projects import present
from crewboard.domain.identity.access import ALL_SCOPES
from crewboard.errors import AlreadyExists, LimitExceeded, Unauthenticated, ValidationFailed
from crewboard.services.identity import tokens, users
from crewboard.services.identity.users import person_actor
from crewboard.services.projects import bootstrap
from crewboard.storage.database import Database
from crewboard.storage.identity import tables
from tests.support.factories import count_rows


def test_password_is_stored_as_argon2id_and_checked(db: Database) -> None:
    user = users.create_user(db, email="Ada@Example.com", password="a long enough password")
    assert user.email == "ada@example.com"
    with db.engine.connect() as conn:
        stored = conn.execute(tables.users.select()).one()
    assert stored.password_hash.startswith("$argon2id$")
    assert (
        users.authenticate_password(db, email="ada@example.com", password="a long enough password")
        == user
    )
    with pytest.raises(Unauthenticated):
        users.authenticate_password(db, email="ada@example.com", password="wrong password!")
    with pytest.raises(Unauthenticated):
        users.authenticate_password(
            db, email="nobody@example.com", password="a long enough password"
        )


def test_set_password_replaces_the_old_one(db: Database) -> None:
    users.create_user(db, email="ada@example.com", password="first password")
    users.set_password(db, email="ada@example.com", password="second password")
    users.authenticate_password(db, email="ada@example.com", password="second password")
    with pytest.raises(Unauthenticated):
        users.authenticate_password(db, email="ada@example.com", password="first password")


def test_bad_accounts_are_refused_naming_the_field(db: Database) -> None:
    with pytest.raises(ValidationFailed) as short:
        users.create_user(db, email="ada@example.com", password="short")
    assert short.value.details["field"] == "password"
    with pytest.raises(LimitExceeded):
        users.create_user(db, email="ada@example.com", password="x" * 1025)
    with pytest.raises(ValidationFailed) as email:
        users.create_user(db, email="not-an-email", password="long enough password")
    assert email.value.details["field"] == "email"
    users.create_user(db, email="ada@example.com", password="long enough password")
    with pytest.raises(AlreadyExists):
        users.create_user(db, email="ADA@example.com", password="long enough password")


def test_first_start_makes_owner_private_demo_project_and_a_working_token(db: Database) -> None:
    first = bootstrap.initialise(db, owner_email="owner@example.com")
    assert first is not None
    assert first.owner.is_owner
    users.authenticate_password(db, email="owner@example.com", password=first.password)
    assert first.project.key == "DEMO"
    assert first.project.workspace_id is None
    actor = tokens.authenticate_token(db, first.token.secret)
    assert actor.scopes == ALL_SCOPES
    views, total = present.list_projects(db, actor)
    assert total == 1
    assert views[0]["viewerRole"] == "admin"


def test_initialising_twice_creates_nothing_twice(db: Database) -> None:
    assert bootstrap.initialise(db, owner_email="owner@example.com") is not None
    counts = {t: count_rows(db, t) for t in ("users", "projects", "api_tokens", "events")}
    assert bootstrap.initialise(db, owner_email="owner@example.com") is None
    assert bootstrap.initialise(db, owner_email="someone-else@example.com") is None
    assert {t: count_rows(db, t) for t in counts} == counts


def test_concurrent_first_starts_initialise_once(db: Database) -> None:
    start = threading.Barrier(4)

    def init(n: int) -> bool:
        start.wait(timeout=10)
        return bootstrap.initialise(db, owner_email=f"owner{n}@example.com") is not None

    with ThreadPoolExecutor(max_workers=4) as pool:
        made = list(pool.map(init, range(4)))
    assert made.count(True) == 1
    assert count_rows(db, "users") == 1
    assert count_rows(db, "projects") == 1


def test_a_person_actor_has_every_scope_but_only_their_roles(db: Database) -> None:
    user = users.create_user(db, email="ada@example.com", password="long enough password")
    actor = person_actor(user)
    assert actor.scopes == ALL_SCOPES
    assert actor.token is None
    assert actor.principal == user.id
