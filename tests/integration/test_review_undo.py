"""Taking a decision back, the versions of a hand-in and the follow-up a revision request
makes, on both databases."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from crewboard.contract.review.present import decided_view, draft_read_view
from crewboard.contract.review.present_inbox import inbox_view
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.review import XP_PER_ACCEPTED_TASK
from crewboard.errors import ErrorCode
from crewboard.services.board import task_updates, tasks
from crewboard.services.identity.users import person_actor
from crewboard.services.review import decisions as review
from crewboard.services.review import drafts
from crewboard.services.review.inbox import inbox
from crewboard.services.review.undo import UNDO_WINDOW, undo_decision
from crewboard.storage.database import Database
from tests.integration.test_drafts import events, hand_in, read, task_status, world
from tests.integration.test_review import me, owner, seat_xp
from tests.support.errors import refused
from tests.support.factories import count_rows, grant, make_user

__all__ = ["me", "owner", "world"]  # the fixtures, shared with test_review and test_drafts

MINUTE = timedelta(minutes=1)


def submitted(db: Database, world: dict[str, Any], key: str = "h-1", **extra: Any) -> str:
    return str(hand_in(db, world["agent"], idempotency_key=key, **extra).body["draft"]["id"])


def draft_of(db: Database, me: Actor, draft_id: str) -> dict[str, Any]:
    return draft_read_view(drafts.get_draft(db, me, draft_id))


def dated_task(db: Database, me: Actor, world: dict[str, Any]) -> str:
    """CRW-2, due on a day, with tags and a priority, for the seat: its key."""
    made = tasks.create_task(
        db, me, project="CRW", workspace_id=None, idempotency_key="t-2",
        title="Write the release notes", status="ready_for_ai", assignee_id=world["seat"],
        assignee_type="ai", due_date="2026-12-24", tags=["docs", "release"], priority="high",
    )  # fmt: skip
    return str(made.body["task"]["key"])


# --- undo ------------------------------------------------------------------------------------------


def test_an_approval_is_undone_by_its_person_and_everything_goes_back(
    db: Database, clock: ManualClock, me: Actor, owner: User, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    clock.advance(MINUTE)
    review.approve(db, me, draft_id)
    assert task_status(db, owner)[0] == "approved"
    assert seat_xp(db, me, world["seat"]) == (XP_PER_ACCEPTED_TASK, 1)
    clock.advance(MINUTE)
    done = decided_view(undo_decision(db, me, draft_id))
    assert done["draft"]["status"] == "pending"
    assert done["draft"]["decidedBy"] is None
    assert done["draft"]["decidedAt"] is None
    assert task_status(db, owner)[0] == "review"
    assert seat_xp(db, me, world["seat"]) == (0, 1)
    [event] = events(db, "draft.decision_undone")
    assert event["payload"]["undone"] == "approved"
    assert event["payload"]["status"] == "pending"
    # It waits again: it can be decided afresh, and shows in the inbox.
    listed = inbox_view(inbox(db, me, project="CRW"))
    assert [i["id"] for i in listed["items"] if i["kind"] == "hand_in"] == [draft_id]
    assert decided_view(review.reject(db, me, draft_id, comment="No"))["draft"]["status"] == (
        "rejected"
    )


def test_a_revision_request_is_undone_and_its_untouched_follow_up_goes(
    db: Database, clock: ManualClock, me: Actor, owner: User, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    decided = decided_view(review.request_revision(db, me, draft_id, comment="Add tests."))
    follow_up = decided["followUpTaskId"]
    assert task_status(db, owner)[0] == "ready_for_ai"
    clock.advance(MINUTE)
    undo_decision(db, me, draft_id)
    shown = draft_of(db, me, draft_id)
    assert (shown["status"], shown["followUpTaskId"], shown["reviewComment"]) == (
        "pending",
        None,
        None,
    )
    assert task_status(db, owner)[0] == "review"
    refused(ErrorCode.NOT_FOUND, read, db, me, follow_up)
    [deleted] = events(db, "task.deleted")
    assert deleted["payload"]["taskId"] == follow_up


def test_a_rejection_is_undone_and_the_task_waits_in_review_again(
    db: Database, clock: ManualClock, me: Actor, owner: User, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    review.reject(db, me, draft_id, comment="Wrong file.")
    assert task_status(db, owner)[0] == "ready_for_ai"
    clock.advance(MINUTE)
    undo_decision(db, me, draft_id)
    assert draft_of(db, me, draft_id)["status"] == "pending"
    assert task_status(db, owner)[0] == "review"


def test_a_save_to_memory_is_undone_and_its_record_goes(
    db: Database, clock: ManualClock, me: Actor, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    before = count_rows(db, "memory_records")
    review.approve(db, me, draft_id, save_to_memory=True, collection="general")
    assert count_rows(db, "memory_records") == before + 1
    clock.advance(MINUTE)
    done = decided_view(undo_decision(db, me, draft_id))
    assert done["removedMemoryRecordId"] is not None
    assert count_rows(db, "memory_records") == before
    assert done["draft"]["memoryRecordId"] is None


def test_only_the_person_who_decided_undoes_and_only_within_the_window(
    db: Database, clock: ManualClock, me: Actor, owner: User, world: dict[str, Any]
) -> None:
    other = make_user(db, "other@example.com")
    grant(db, owner, "CRW", other, Role.WRITE)
    draft_id = submitted(db, world)
    review.approve(db, me, draft_id)
    refused(ErrorCode.VALIDATION, undo_decision, db, person_actor(other), draft_id)
    refused(ErrorCode.PERMISSION_DENIED, undo_decision, db, world["agent"], draft_id)
    clock.advance(UNDO_WINDOW + MINUTE)
    error = refused(ErrorCode.VALIDATION, undo_decision, db, me, draft_id)
    assert error.details["field"] == "decision"
    assert draft_of(db, me, draft_id)["status"] == "approved"
    assert events(db, "draft.decision_undone") == []


def test_the_author_hears_that_a_decision_was_undone(
    db: Database, clock: ManualClock, owner: User, world: dict[str, Any]
) -> None:
    other = make_user(db, "reviewer@example.com")
    grant(db, owner, "CRW", other, Role.WRITE)
    reviewer = person_actor(other)
    draft_id = submitted(db, world)  # by the owner's agent token: the owner is its author
    review.reject(db, reviewer, draft_id, comment="No.")
    told = count_rows(db, "notifications")
    clock.advance(MINUTE)
    undo_decision(db, reviewer, draft_id)
    assert count_rows(db, "notifications") == told + 1


def test_a_decision_something_acted_on_is_not_undone(
    db: Database, clock: ManualClock, me: Actor, owner: User, world: dict[str, Any]
) -> None:
    # The task moved on after the approval: the approval stays.
    draft_id = submitted(db, world)
    review.approve(db, me, draft_id)
    clock.advance(MINUTE)
    task = read(db, me)["task"]
    task_updates.update_task(
        db, me, project="CRW", workspace_id=None, task_id="CRW-1", idempotency_key="u-1",
        expected_revision=task["revision"], patch={"status": "done"},
    )  # fmt: skip
    error = refused(ErrorCode.VALIDATION, undo_decision, db, me, draft_id)
    assert error.details["taskId"] == world["task"]
    assert task_status(db, owner)[0] == "done"


def test_a_revision_whose_follow_up_was_picked_up_is_not_undone(
    db: Database, clock: ManualClock, me: Actor, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    decided = decided_view(review.request_revision(db, me, draft_id, comment="Add tests."))
    clock.advance(MINUTE)
    # The agent hands in the revised result on the follow-up: a newer version landed.
    follow_key = read(db, me, decided["followUpTaskId"])["task"]["key"]
    submitted(db, world, "h-2", task=follow_key)
    error = refused(ErrorCode.VALIDATION, undo_decision, db, me, draft_id)
    assert error.details["draftId"] == draft_id
    assert draft_of(db, me, draft_id)["status"] == "revision_requested"


# --- the follow-up task --------------------------------------------------------------------------


def test_the_follow_up_keeps_the_due_date_tags_and_priority_of_the_original(
    db: Database, me: Actor, world: dict[str, Any]
) -> None:
    key = dated_task(db, me, world)
    draft_id = submitted(db, world, task=key)
    decided = decided_view(review.request_revision(db, me, draft_id, comment="Shorter."))
    follow = read(db, me, decided["followUpTaskId"])["task"]
    assert follow["dueDate"] == "2026-12-24"
    assert follow["tags"] == ["docs", "release"]
    assert follow["priority"] == "high"
    assert follow["title"] == "Revise: Write the release notes"
    assert follow["assigneeId"] == world["seat"]


# --- versions -------------------------------------------------------------------------------------


def test_a_resubmission_is_one_inbox_card_linked_to_the_version_before(
    db: Database, clock: ManualClock, me: Actor, owner: User, world: dict[str, Any]
) -> None:
    first = submitted(db, world)
    decided = decided_view(review.request_revision(db, me, first, comment="Add tests."))
    clock.advance(MINUTE)
    follow_key = read(db, me, decided["followUpTaskId"])["task"]["key"]
    second = submitted(db, world, "h-2", task=follow_key, content="# Fixed\nWith tests.")
    clock.advance(MINUTE)
    third = submitted(db, world, "h-3", task=follow_key, content="# Fixed\nWith more tests.")
    listed = inbox_view(inbox(db, me, project="CRW"))
    cards = [i for i in listed["items"] if i["kind"] == "hand_in"]
    assert [c["id"] for c in cards] == [third]
    assert listed["counts"]["hand_in"] == 1
    assert cards[0]["version"] == 3
    assert [v["id"] for v in cards[0]["earlierVersions"]] == [first, second]
    assert cards[0]["earlierVersions"][0]["reviewComment"] == "Add tests."
    assert draft_of(db, me, third)["earlierVersions"][-1]["id"] == second
    # Approving the newest closes the older ones; undoing it brings them back as they were.
    review.approve(db, me, third)
    assert draft_of(db, me, first)["status"] == "superseded"
    assert draft_of(db, me, second)["status"] == "superseded"
    clock.advance(MINUTE)
    undo_decision(db, me, third)
    restored = draft_of(db, me, first)
    assert (restored["status"], restored["reviewComment"]) == ("revision_requested", "Add tests.")
    assert restored["decidedBy"]["userId"] == owner.id
    assert draft_of(db, me, second)["status"] == "pending"
    assert task_status(db, owner)[0] == "ready_for_ai"  # CRW-1 waits on its follow-up again


def test_hand_ins_of_other_hands_on_one_task_stay_apart(
    db: Database, me: Actor, owner: User, world: dict[str, Any]
) -> None:
    from tests.integration.test_drafts import HAND_IN_SCOPES  # noqa: PLC0415 - one test's
    from tests.support.factories import token_actor  # noqa: PLC0415 - one test's

    submitted(db, world)
    drafts.create_draft(
        db, token_actor(db, owner, HAND_IN_SCOPES), task="CRW-1", title="Mine", content="x",
        answer=lambda made: {"id": made.row.draft.id},
    )  # fmt: skip
    listed = inbox_view(inbox(db, me, project="CRW"))
    assert listed["counts"]["hand_in"] == 2
    assert all(i.get("version") == 1 for i in listed["items"] if i["kind"] == "hand_in")


@pytest.mark.parametrize("comment", ["Add tests."])
def test_the_decision_event_names_no_undo_bookkeeping(
    db: Database, me: Actor, world: dict[str, Any], comment: str
) -> None:
    draft_id = submitted(db, world)
    review.request_revision(db, me, draft_id, comment=comment)
    [event] = events(db, "draft.revision_requested")
    assert "undo" not in event["payload"]["decidedBy"]
    assert "undo" not in draft_of(db, me, draft_id)["decidedBy"]
