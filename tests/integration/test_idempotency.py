"""The idempotency ledger: exact retries replay, other arguments conflict, races have one effect."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from crewboard.contract.projects import present
from crewboard.errors import ErrorCode, IdempotencyConflict, LimitExceeded
from crewboard.services.idempotency import KeyedResult
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import count_rows, make_user, token_actor


def test_exact_retry_returns_the_original_acknowledgement_and_changes_nothing(db: Database) -> None:
    actor = person_actor(make_user(db, "ada@example.com"))
    first = present.create_project(
        db, actor, workspace_id=None, key="CRW", name="Crew", idempotency_key="create-crw"
    )
    events_before = count_rows(db, "events")
    retry = present.create_project(
        db, actor, workspace_id=None, key="CRW", name="Crew", idempotency_key="create-crw"
    )
    assert retry.replayed
    assert not first.replayed
    assert retry.body == first.body
    assert count_rows(db, "projects") == 1
    assert count_rows(db, "events") == events_before


def test_same_key_with_other_arguments_is_refused_naming_what_the_key_made(db: Database) -> None:
    actor = person_actor(make_user(db, "ada@example.com"))
    first = present.create_project(
        db, actor, workspace_id=None, key="CRW", name="Crew", idempotency_key="k1"
    )
    with pytest.raises(IdempotencyConflict) as caught:
        present.create_project(
            db, actor, workspace_id=None, key="OTHER", name="Other", idempotency_key="k1"
        )
    error = caught.value
    assert error.code is ErrorCode.IDEMPOTENCY_CONFLICT
    assert error.details["operation"] == "create_project"
    assert error.details["resourceType"] == "project"
    assert error.details["resourceId"] == first.body["project"]["id"]
    assert first.body["project"]["id"] in error.message
    assert count_rows(db, "projects") == 1


def test_keys_belong_to_their_principal(db: Database) -> None:
    user = make_user(db, "ada@example.com")
    one = token_actor(db, user, ["read", "projects.admin"])
    two = token_actor(db, user, ["read", "projects.admin"])
    present.create_project(
        db, one, workspace_id=None, key="ONE", name="One", idempotency_key="same"
    )
    second = present.create_project(
        db, two, workspace_id=None, key="TWO", name="Two", idempotency_key="same"
    )
    assert not second.replayed
    assert count_rows(db, "projects") == 2


def test_key_over_128_characters_is_refused_before_anything_happens(db: Database) -> None:
    actor = person_actor(make_user(db, "ada@example.com"))
    with pytest.raises(LimitExceeded) as caught:
        present.create_project(
            db, actor, workspace_id=None, key="CRW", name="Crew", idempotency_key="k" * 129
        )
    assert caught.value.details["field"] == "idempotencyKey"
    assert count_rows(db, "projects") == 0
    done = present.create_project(
        db, actor, workspace_id=None, key="CRW", name="Crew", idempotency_key="k" * 128
    )
    assert done.body["project"]["key"] == "CRW"


def test_a_failed_keyed_write_leaves_the_key_unused(db: Database) -> None:
    actor = person_actor(make_user(db, "ada@example.com"))
    with pytest.raises(Exception, match="key"):
        present.create_project(db, actor, workspace_id=None, key="C", name="C", idempotency_key="k")
    made = present.create_project(
        db, actor, workspace_id=None, key="CRW", name="C", idempotency_key="k"
    )
    assert not made.replayed


@pytest.mark.parametrize("attempts", [20])
def test_concurrent_first_uses_of_one_key_have_one_effect(db: Database, attempts: int) -> None:
    user = make_user(db, "ada@example.com")
    actor = token_actor(db, user, ["read", "projects.admin"])
    events_before = count_rows(db, "events")
    start = threading.Barrier(attempts)

    def create(_: int) -> KeyedResult:
        start.wait(timeout=10)
        return present.create_project(
            db, actor, workspace_id=None, key="CRW", name="Crew", idempotency_key="race"
        )

    with ThreadPoolExecutor(max_workers=attempts) as pool:
        results = list(pool.map(create, range(attempts)))

    assert count_rows(db, "projects") == 1
    assert count_rows(db, "idempotency_keys") == 1
    assert count_rows(db, "events") == events_before + 1
    assert len({r.body["project"]["id"] for r in results}) == 1
    assert sum(not r.replayed for r in results) == 1


def test_replayed_acknowledgement_is_the_stored_one_even_after_the_resource_changes(
    db: Database,
) -> None:
    user = make_user(db, "ada@example.com")
    actor = person_actor(user)
    first = present.create_project(
        db, actor, workspace_id=None, key="CRW", name="Crew", idempotency_key="k"
    )
    tokens.issue_token(db, actor, kind="agent", scopes=["read"], project="CRW")
    retry = present.create_project(
        db, actor, workspace_id=None, key="CRW", name="Crew", idempotency_key="k"
    )
    assert retry.body == first.body
