"""An agent token's AI seat: chosen at creation and stored, followed by every user of the seat
(stamps, claims, 'me'), and the rules for tokens that store none or lost theirs; on both
databases."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import inspect, select

from crewboard.contract.projects import present
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, SeatState, User
from crewboard.domain.identity.tokens import (
    display_prefix,
    generate_token_secret,
    hash_token_secret,
)
from crewboard.errors import ErrorCode
from crewboard.services.board import claims, queries, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.tokens import IssuedToken
from crewboard.services.identity.users import person_actor
from crewboard.services.seats import ai_seat_of
from crewboard.services.views import seat_note, token_view
from crewboard.storage import migrate
from crewboard.storage.database import Database
from crewboard.storage.identity import tables as identity
from crewboard.storage.projects.tables import projects
from tests.support.errors import refused
from tests.support.factories import grant, make_project, make_user

SCOPES = ["read", "tasks.manage", "drafts.create"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    make_project(db, user, "OPS")
    return user


def add_seat(db: Database, owner: User, name: str, project: str = "CRW", kind: str = "ai") -> str:
    made = present.add_team_role(db, person_actor(owner), project=project, name=name, kind=kind)
    return str(made["id"])


def issue(db: Database, owner: User, **options: Any) -> IssuedToken:
    fields: dict[str, Any] = {"kind": "agent", "scopes": SCOPES, "project": "CRW"} | options
    return tokens.issue_token(db, person_actor(owner), **fields)


def acting(db: Database, issued: IssuedToken) -> Actor:
    return tokens.authenticate_token(db, issued.secret)


def seat_of(db: Database, issued: IssuedToken) -> str | None:
    found = db.read(lambda uow: ai_seat_of(uow, acting(db, issued)))
    return found.id if found else None


def listed_seat(db: Database, owner: User, token_id: str) -> dict[str, Any]:
    shown = [token_view(t.token, t.seat) for t in tokens.list_tokens(db, person_actor(owner))]
    return next(v for v in shown if v["id"] == token_id)


def note_of(db: Database, owner: User, token_id: str) -> str:
    """How the CLI and the web app word the token's seat."""
    listed = next(t for t in tokens.list_tokens(db, person_actor(owner)) if t.token.id == token_id)
    assert listed.seat is not None
    return seat_note(listed.seat)


def new_task(db: Database, owner: User, title: str, **fields: object) -> str:
    made = tasks.create_task(
        db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key=title,
        title=title, status="ready_for_ai", **fields,
    )  # fmt: skip
    return str(made.body["task"]["key"])


def mine(db: Database, actor: Actor) -> list[str]:
    page = queries.list_assignee_tasks(db, actor, assignee="me", projection="compact")
    keys = {p.id: p.key for p in page.projects.values()}
    return sorted(f"{keys[r.project_id]}-{r.number}" for r in page.rows)  # type: ignore[union-attr]


def test_the_seat_is_chosen_by_id_or_name_and_the_token_name_no_longer_decides(
    db: Database, owner: User
) -> None:
    coder = add_seat(db, owner, "Coder")
    writer = add_seat(db, owner, "Writer")
    by_name = issue(db, owner, name="Coder", seat="writer")  # any case
    by_id = issue(db, owner, name="Writer", seat=coder)
    assert (by_name.token.seat_id, by_id.token.seat_id) == (writer, coder)
    assert (seat_of(db, by_name), seat_of(db, by_id)) == (writer, coder)
    shown = listed_seat(db, owner, by_name.token.id)
    assert shown["seatId"] == writer
    assert shown["seat"] == {"state": "chosen", "id": writer, "name": "Writer"}
    assert by_name.seat is not None
    assert by_name.seat.state is SeatState.CHOSEN


def test_a_seat_that_is_not_an_ai_seat_of_the_tokens_project_is_refused_naming_seat(
    db: Database, owner: User
) -> None:
    add_seat(db, owner, "Coder")
    person_seat = add_seat(db, owner, "Lead", kind="human")
    elsewhere = add_seat(db, owner, "Ops bot", project="OPS")
    for seat in ("Nobody", person_seat, elsewhere, "Lead"):
        error = refused(ErrorCode.VALIDATION, issue, db, owner, seat=seat)
        assert error.details["field"] == "seat"
        assert error.details["accepted"] == [f"Coder ({_id(db, owner, 'Coder')})"]
    no_project = refused(
        ErrorCode.VALIDATION, tokens.issue_token, db, person_actor(owner),
        kind="personal", scopes=["read"], seat="Coder",
    )  # fmt: skip
    assert no_project.details["field"] == "seat"
    assert "project" in no_project.message
    personal = refused(ErrorCode.VALIDATION, issue, db, owner, kind="personal", seat="Coder")
    assert personal.details["field"] == "seat"
    assert tokens.list_tokens(db, person_actor(owner)) == []


def test_two_seats_of_one_name_ask_for_the_id(db: Database, owner: User) -> None:
    first = add_seat(db, owner, "Coder")
    add_seat(db, owner, "coder")
    error = refused(ErrorCode.VALIDATION, issue, db, owner, seat="Coder")
    assert error.details["field"] == "seat"
    assert issue(db, owner, seat=first).token.seat_id == first


def test_a_token_with_no_seat_acts_as_the_only_ai_seat_and_as_none_when_there_are_more(
    db: Database, owner: User
) -> None:
    add_seat(db, owner, "Lead", kind="human")  # a person's seat never counts
    coder = add_seat(db, owner, "Coder")
    legacy = issue(db, owner, name="Anything")
    assert seat_of(db, legacy) == coder
    assert listed_seat(db, owner, legacy.token.id)["seat"]["state"] == "only"
    add_seat(db, owner, "Anything")  # named like the token: still not its seat
    assert seat_of(db, legacy) is None
    shown = listed_seat(db, owner, legacy.token.id)
    assert shown["seat"] == {"state": "none", "id": None, "name": None}
    assert note_of(db, owner, legacy.token.id).startswith("no seat")


def test_an_archived_seat_leaves_its_token_acting_as_no_seat_and_the_listing_says_so(
    db: Database, owner: User
) -> None:
    coder = add_seat(db, owner, "Coder")
    add_seat(db, owner, "Writer")
    issued = issue(db, owner, seat="Coder")
    present.archive_team_role(db, person_actor(owner), project="CRW", role_id=coder)
    assert seat_of(db, issued) is None
    shown = listed_seat(db, owner, issued.token.id)
    assert shown["seat"] == {"state": "removed", "id": coder, "name": "Coder"}
    assert "removed" in note_of(db, owner, issued.token.id)
    refused(ErrorCode.VALIDATION, issue, db, owner, seat="Coder")  # no new token takes it


def test_claim_next_task_takes_the_stored_seats_tasks_not_the_named_ones(
    db: Database, owner: User
) -> None:
    coder = add_seat(db, owner, "Coder")
    writer = add_seat(db, owner, "Writer")
    new_task(db, owner, "For the coder", assignee_id=coder, priority="high")
    for_writer = new_task(db, owner, "For the writer", assignee_id=writer, priority="low")
    agent = acting(db, issue(db, owner, name="Coder", seat="Writer"))
    taken = claims.claim_next_task(db, agent, project="CRW", workspace_id=None)
    assert taken is not None
    assert taken.key == for_writer
    assert taken.claim.holder.role_id == writer
    assert claims.claim_next_task(db, agent, project="CRW", workspace_id=None) is None


def test_me_is_what_a_person_is_assigned_or_owns_and_an_agents_seats_tasks(
    db: Database, owner: User
) -> None:
    writer_user = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer_user, Role.WRITE)
    seat = add_seat(db, owner, "Coder")
    add_seat(db, owner, "Writer")
    assigned = new_task(db, owner, "Assigned", assignee_id=owner.id, assignee_type="human")
    owned = new_task(
        db, owner, "Owned", assignee_id=seat, assignee_type="ai", human_owner_id=owner.id
    )
    new_task(db, owner, "Someone else's", assignee_id=writer_user.id, assignee_type="human")
    new_task(db, owner, "Nobody's")
    assert mine(db, person_actor(owner)) == sorted([assigned, owned])
    page = queries.list_tasks(db, person_actor(owner), project="CRW", assignee="me")
    assert page.total == 2
    assert mine(db, person_actor(writer_user)) == ["CRW-3"]
    with_seat = acting(db, issue(db, owner, seat="Coder"))
    assert mine(db, with_seat) == [owned]
    without_seat = acting(db, issue(db, owner, name="Coder"))  # two AI seats, none chosen
    assert mine(db, without_seat) == sorted([assigned, owned])


def _id(db: Database, owner: User, name: str) -> str:
    roles = present.list_team(db, person_actor(owner), project="CRW")[0]["roles"]
    return str(next(r["id"] for r in roles if r["name"] == name))


def test_a_token_made_before_the_seat_column_keeps_working_after_the_migration(
    db: Database, owner: User
) -> None:
    coder = add_seat(db, owner, "Coder")
    migrate.downgrade(db, "0024_task_claims")
    with db.engine.begin() as conn:
        assert "seat_id" not in {c["name"] for c in inspect(conn).get_columns("api_tokens")}
        project_id = conn.execute(select(projects.c.id).where(projects.c.key == "CRW")).scalar()
        secret = generate_token_secret()
        conn.execute(
            identity.api_tokens.insert().values(
                id="tok_old", user_id=owner.id, name="Made before", kind="agent",
                secret_hash=hash_token_secret(secret), display_prefix=display_prefix(secret),
                scopes=SCOPES, project_id=project_id, toolsets=[], created_at=datetime.now(UTC),
            )
        )  # fmt: skip
    migrate.upgrade(db)
    assert migrate.schema_differences(db) == []
    old = tokens.authenticate_token(db, secret)
    assert old.token is not None
    assert old.token.seat_id is None
    found = db.read(lambda uow: ai_seat_of(uow, old))
    assert found is not None
    assert found.id == coder  # the project's only AI seat
