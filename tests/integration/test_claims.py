"""Claims with leases through the services, on both databases: taking, renewing, releasing,
breaking and lapsing a claim, the fence a write sends, and the order claim_next_task takes
tasks in."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from crewboard.contract.review.present import hand_in_view
from crewboard.domain.board.claims import Claim, ClaimEnd
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.board import claims, task_updates, tasks
from crewboard.services.board.claim_lapses import sweep_lapsed
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import activity, drafts
from crewboard.storage import schema
from crewboard.storage.board.claims import ClaimRepository
from crewboard.storage.database import Database
from tests.support.errors import refused
from tests.support.factories import count_rows, make_project, make_user

SCOPES = ["read", "tasks.manage", "drafts.create"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


def agent(db: Database, owner: User) -> Actor:
    issued = tokens.issue_token(db, person_actor(owner), kind="agent", scopes=SCOPES, project="CRW")
    return tokens.authenticate_token(db, issued.secret)


def new_task(db: Database, owner: User, title: str, **fields: object) -> dict[str, Any]:
    made = tasks.create_task(
        db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key=title,
        title=title, status="ready_for_ai", **fields,
    )  # fmt: skip
    return dict(made.body["task"])


def events(db: Database, type_: str) -> list[dict[str, Any]]:
    """The payloads of the events of one type, in the order they were recorded."""
    with db.engine.connect() as conn:
        rows = conn.execute(
            select(schema.events.c.payload)
            .where(schema.events.c.type == type_)
            .order_by(schema.events.c.id)
        )
        return [dict(row[0]) for row in rows]


def rename(db: Database, actor: Actor, task: dict[str, Any], fence: int | None, key: str) -> None:
    task_updates.update_task(
        db, actor, project="CRW", workspace_id=None, idempotency_key=key, task_id=str(task["id"]),
        expected_revision=int(task["revision"]), patch={"title": f"Renamed {key}"},
        claim_fence=fence,
    )  # fmt: skip


def test_a_claim_holds_a_task_against_others_and_its_holder_claims_it_again(
    db: Database, owner: User
) -> None:
    task = new_task(db, owner, "One")
    first, second = agent(db, owner), agent(db, owner)
    held = claims.claim_task(db, first, task=str(task["id"]), workspace_id=None, lease_seconds=60)
    assert (held.claim.fence, held.key, held.claim.holder.token_id) == (1, "CRW-1", first.token.id)  # type: ignore[union-attr]
    error = refused(
        ErrorCode.ALREADY_EXISTS, claims.claim_task, db, second, task="CRW-1", workspace_id=None
    )
    assert error.details["currentFence"] == 1
    again = claims.claim_task(db, first, task="CRW-1", workspace_id=None, lease_seconds=120)
    assert again.claim.fence == 1
    assert again.claim.lease_seconds == 120
    assert len(events(db, "task.claimed")) == 1


def test_the_fence_grows_across_releases_and_a_release_needs_the_live_claim(
    db: Database, owner: User
) -> None:
    new_task(db, owner, "One")
    first, second = agent(db, owner), agent(db, owner)
    claims.claim_task(db, first, task="CRW-1", workspace_id=None)
    refused(ErrorCode.CLAIM_LOST, claims.release_task, db, second, task="CRW-1", workspace_id=None)
    released = claims.release_task(db, first, task="CRW-1", workspace_id=None, claim_fence=1)
    assert released.claim.end is not None
    assert released.claim.end.value == "released"
    taken = claims.claim_task(db, second, task="CRW-1", workspace_id=None)
    assert taken.claim.fence == 2
    assert [e["claim"]["fence"] for e in events(db, "task.claim_released")] == [1]


def test_a_write_with_a_lost_fence_is_refused_naming_the_holder_and_changes_nothing(
    db: Database, owner: User, clock: ManualClock
) -> None:
    task = new_task(db, owner, "One")
    first, second = agent(db, owner), agent(db, owner)
    fence = claims.claim_task(db, first, task="CRW-1", workspace_id=None, lease_seconds=30)
    rename(db, first, task, fence.claim.fence, "by-holder")  # its own live claim: written
    task = dict(tasks_get(db, owner))
    clock.advance(timedelta(seconds=30))
    taken = claims.claim_next_task(db, second, project="CRW", workspace_id=None)
    assert taken is not None
    assert taken.claim.fence == 2
    error = refused(ErrorCode.CLAIM_LOST, rename, db, first, task, fence.claim.fence, "late")
    assert error.details["currentFence"] == 2
    assert error.details["holder"]["tokenId"] == second.token.id  # type: ignore[union-attr]
    assert tasks_get(db, owner)["revision"] == task["revision"]
    assert len(events(db, "task.claim_lapsed")) == 1  # recorded by the taker, once


def tasks_get(db: Database, owner: User) -> dict[str, Any]:
    with db.engine.connect() as conn:
        row = conn.exec_driver_sql("SELECT id, revision, title FROM tasks WHERE number = 1").one()
    return {"id": row[0], "revision": row[1], "title": row[2]}


def test_the_sweeper_records_a_lapse_once_and_tells_the_projects_people(
    db: Database, owner: User, clock: ManualClock
) -> None:
    new_task(db, owner, "One")
    holder = agent(db, owner)
    claims.claim_task(db, holder, task="CRW-1", workspace_id=None, lease_seconds=30)
    assert sweep_lapsed(db) == 0
    clock.advance(timedelta(seconds=29))
    claims.renew_claims(db, holder, workspace_id=None)
    clock.advance(timedelta(seconds=29))
    assert sweep_lapsed(db) == 0  # renewed: 30 s from the renewal
    clock.advance(timedelta(seconds=1))
    assert sweep_lapsed(db) == 1
    assert sweep_lapsed(db) == 0
    assert len(events(db, "task.claim_lapsed")) == 1
    assert count_rows(db, "notifications") == 1
    entries = activity.list_activity(db, person_actor(owner), project="CRW").entries
    assert [e.event.type for e in entries[:2]] == ["task.claim_lapsed", "task.claimed"]
    refused(ErrorCode.CLAIM_LOST, claims.renew_claims, db, holder, workspace_id=None, task="CRW-1")


def test_claim_next_task_takes_priority_then_age_and_skips_blocked_held_and_others_tasks(
    db: Database, owner: User
) -> None:
    blocker = new_task(db, owner, "Blocker", priority="low")
    new_task(db, owner, "Blocked", priority="high", blocked_by_task_ids=[str(blocker["id"])])
    new_task(db, owner, "Old medium", priority="medium")
    new_task(db, owner, "New high", priority="high")
    new_task(db, owner, "A person's", priority="high", assignee_id=owner.id, assignee_type="human")
    tasks.create_task(
        db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key="backlog",
        title="Not ready", priority="high",
    )  # fmt: skip
    bot = agent(db, owner)
    taken = [claims.claim_next_task(db, bot, project="CRW", workspace_id=None) for _ in range(4)]
    assert [t.title if t else None for t in taken] == ["New high", "Old medium", "Blocker", None]
    mine = claims.claim_next_task(db, person_actor(owner), project="CRW", workspace_id=None)
    assert mine is not None
    assert mine.title == "A person's"


def test_a_person_breaks_a_claim_and_a_token_may_not(db: Database, owner: User) -> None:
    new_task(db, owner, "One")
    holder = agent(db, owner)
    claims.claim_task(db, holder, task="CRW-1", workspace_id=None)
    refused(ErrorCode.PERMISSION_DENIED, claims.break_claim, db, holder, task="CRW-1")
    refused(ErrorCode.NOT_FOUND, claims.break_claim, db, person_actor(owner), task="CRW-1", fence=9)
    broken = claims.break_claim(db, person_actor(owner), task="CRW-1")
    assert broken.claim.end is not None
    assert broken.claim.end.value == "broken"
    refused(ErrorCode.CLAIM_LOST, claims.release_task, db, holder, task="CRW-1", workspace_id=None)
    assert len(events(db, "task.claim_broken")) == 1


def test_a_lease_outside_its_range_is_refused_naming_the_field(db: Database, owner: User) -> None:
    new_task(db, owner, "One")
    error = refused(
        ErrorCode.VALIDATION, claims.claim_task, db, agent(db, owner), task="CRW-1",
        workspace_id=None, lease_seconds=5,
    )  # fmt: skip
    assert error.details["field"] == "leaseSeconds"


def test_a_hand_in_from_a_broken_claim_is_refused_and_lands_no_draft(
    db: Database, owner: User
) -> None:
    task = new_task(db, owner, "One")
    holder = agent(db, owner)
    fence = claims.claim_task(db, holder, task="CRW-1", workspace_id=None).claim.fence
    claims.break_claim(db, person_actor(owner), task="CRW-1", fence=fence)
    error = refused(
        ErrorCode.CLAIM_LOST, drafts.submit_result, db, holder, project="CRW",
        workspace_id=None, task="CRW-1", idempotency_key="hand-in",
        expected_revision=int(task["revision"]), context_receipt_id=None, title="Done",
        content="The result.", claim_fence=fence, answer=hand_in_view,
    )  # fmt: skip
    assert error.details["holder"] is None
    assert count_rows(db, "drafts") == 0
    claims.claim_task(db, holder, task="CRW-1", workspace_id=None)
    landed = drafts.submit_result(
        db, holder, project="CRW", workspace_id=None, task="CRW-1", idempotency_key="again",
        expected_revision=int(task["revision"]), context_receipt_id=None, title="Done",
        content="The result.", claim_fence=fence + 1, answer=hand_in_view,
    )  # fmt: skip
    assert landed.body["taskMoved"] is True
    # The hand-in moved the task to review: the holder's claim ended with it (released), so
    # its check-ins no longer keep the task held.
    claim = claims_repo_claim(db, str(task["id"]))
    assert claim is not None
    assert (claim.end, claim.released_at is not None) == (ClaimEnd.RELEASED, True)
    assert [e["claim"]["ended"] for e in events(db, "task.claim_released")] == ["released"]


def claims_repo_claim(db: Database, task_id: str) -> Claim | None:
    return db.read(lambda uow: ClaimRepository(uow.conn).get(task_id))
