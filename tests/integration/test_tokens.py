"""Issuing, authenticating, listing and revoking API tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest

from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.tokens import generate_token_secret, hash_token_secret
from crewboard.errors import NotFound, PermissionDenied, Unauthenticated, ValidationFailed
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from crewboard.storage.identity import tables
from tests.support.factories import grant, make_project, make_user


def test_token_is_stored_hashed_and_authenticates_as_its_user(db: Database) -> None:
    user = make_user(db, "ada@example.com")
    issued = tokens.issue_token(
        db, person_actor(user), kind="personal", scopes=["read", "tasks.manage"]
    )
    with db.engine.connect() as conn:
        stored = conn.execute(tables.api_tokens.select()).one()
    assert stored.secret_hash == hash_token_secret(issued.secret)
    assert issued.secret not in str(stored._asdict())
    actor = tokens.authenticate_token(db, issued.secret)
    assert actor.user_id == user.id
    assert actor.token is not None
    assert actor.token.id == issued.token.id
    assert sorted(actor.scopes) == ["read", "tasks.manage"]


def test_revoked_token_stops_working_at_once(db: Database) -> None:
    user = make_user(db, "ada@example.com")
    issued = tokens.issue_token(db, person_actor(user), kind="personal", scopes=["read"])
    tokens.authenticate_token(db, issued.secret)
    revoked = tokens.revoke_token(db, issued.token.id)
    assert revoked.revoked_at is not None
    with pytest.raises(Unauthenticated):
        tokens.authenticate_token(db, issued.secret)
    again = tokens.revoke_token(db, issued.token.id)
    assert again.revoked_at == revoked.revoked_at
    assert tokens.list_all_tokens(db) == []
    assert [t.token.id for t in tokens.list_all_tokens(db, include_revoked=True)] == [
        issued.token.id
    ]


@pytest.mark.parametrize(
    "secret",
    [
        "",
        "cb_short",
        "Bearer nothing",
        "cb_" + "A" * 38,
        "ghp_0123456789abcdefghijklmnopqrstuvwxyz12",
    ],
)
def test_malformed_or_unknown_tokens_are_unauthenticated(db: Database, secret: str) -> None:
    with pytest.raises(Unauthenticated):
        tokens.authenticate_token(db, secret)


def test_well_formed_but_unknown_token_is_unauthenticated(db: Database) -> None:
    with pytest.raises(Unauthenticated):
        tokens.authenticate_token(db, generate_token_secret())


def test_last_used_time_is_recorded_at_most_once_a_minute(db: Database, clock: ManualClock) -> None:
    user = make_user(db, "ada@example.com")
    issued = tokens.issue_token(db, person_actor(user), kind="personal", scopes=["read"])
    assert issued.token.last_used_at is None
    first_use = clock.now()
    tokens.authenticate_token(db, issued.secret)
    clock.advance(timedelta(seconds=30))
    tokens.authenticate_token(db, issued.secret)
    (listed,) = tokens.list_all_tokens(db)
    assert listed.token.last_used_at == first_use
    clock.advance(timedelta(seconds=31))
    tokens.authenticate_token(db, issued.secret)
    (listed,) = tokens.list_all_tokens(db)
    assert listed.token.last_used_at == clock.now()


def test_agent_token_needs_a_project(db: Database) -> None:
    user = make_user(db, "ada@example.com")
    with pytest.raises(ValidationFailed) as caught:
        tokens.issue_token(db, person_actor(user), kind="agent", scopes=["read"])
    assert caught.value.details["field"] == "project"


def test_token_cannot_hold_a_role_above_its_person(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    reader = make_user(db, "reader@example.com")
    make_project(db, owner, "CRW")
    grant(db, owner, "CRW", reader, Role.READ)
    with pytest.raises(PermissionDenied) as caught:
        tokens.issue_token(
            db, person_actor(reader), kind="agent", scopes=["read"], project="CRW", role="write"
        )
    assert caught.value.details == {"role": "read", "requestedRole": "write"}


def test_token_for_a_project_the_person_cannot_open_is_not_found(db: Database) -> None:
    owner = make_user(db, "owner@example.com")
    other = make_user(db, "other@example.com")
    make_project(db, owner, "CRW")
    with pytest.raises(NotFound):
        tokens.issue_token(db, person_actor(other), kind="agent", scopes=["read"], project="CRW")


@pytest.mark.parametrize(
    ("field", "options"),
    [
        ("kind", {"kind": "robot", "scopes": ["read"]}),
        ("scopes", {"kind": "personal", "scopes": ["read", "admin"]}),
        ("scopes", {"kind": "personal", "scopes": ["tasks.manage"]}),
        ("toolsets", {"kind": "personal", "scopes": ["read"], "toolsets": ["board", "kitchen"]}),
    ],
)
def test_bad_token_options_name_the_field(
    db: Database, field: str, options: dict[str, object]
) -> None:
    user = make_user(db, "ada@example.com")
    with pytest.raises(ValidationFailed) as caught:
        tokens.issue_token(db, person_actor(user), **options)  # type: ignore[arg-type]
    assert caught.value.details["field"] == field
    assert caught.value.details.get("accepted")


def test_a_token_cannot_issue_tokens(db: Database) -> None:
    user = make_user(db, "ada@example.com")
    issued = tokens.issue_token(db, person_actor(user), kind="personal", scopes=["read"])
    actor = tokens.authenticate_token(db, issued.secret)
    with pytest.raises(PermissionDenied):
        tokens.issue_token(db, actor, kind="personal", scopes=["read"])


def test_a_person_revokes_only_their_own_tokens(db: Database) -> None:
    ada = make_user(db, "ada@example.com")
    bob = make_user(db, "bob@example.com")
    issued = tokens.issue_token(db, person_actor(ada), kind="personal", scopes=["read"])
    with pytest.raises(NotFound):
        tokens.revoke_token(db, issued.token.id, actor=person_actor(bob))
    tokens.authenticate_token(db, issued.secret)
