"""A person's decisions about hand-ins, acceptance rules and team xp, on both databases."""

from __future__ import annotations

from typing import Any

import pytest

from crewboard.contract.projects import present
from crewboard.contract.review.present import decided_view, draft_read_view, hand_in_view
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.review import XP_PER_ACCEPTED_TASK, XP_PER_LEVEL
from crewboard.errors import ErrorCode
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import decisions as review
from crewboard.services.review import drafts, rules
from crewboard.storage.database import Database
from tests.integration.test_drafts import (
    HAND_IN_SCOPES,
    events,
    hand_in,
    read,
    refused,
    task_status,
    world,
)
from tests.support.factories import count_rows, grant, make_project, make_user

__all__ = ["world"]  # the fixture, shared with test_drafts


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW", collections=["general", "architecture"])
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


def seat_xp(db: Database, me: Actor, seat: str) -> tuple[int, int]:
    roles = present.list_team(db, me, project="CRW")[0]["roles"]
    found = next(r for r in roles if r["id"] == seat)
    return found["xp"], found["level"]


def submitted(db: Database, world: dict[str, Any], key: str = "h-1", **extra: Any) -> str:
    return str(hand_in(db, world["agent"], idempotency_key=key, **extra).body["draft"]["id"])


def test_approve_moves_the_task_to_approved_and_gives_the_seat_xp(
    db: Database, owner: User, me: Actor, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    done = decided_view(review.approve(db, me, draft_id, comment="Nice."))
    assert done["draft"]["status"] == "approved"
    assert done["draft"]["memoryRecordId"] is None
    assert done["draft"]["decidedBy"]["userId"] == owner.id
    assert done["task"]["status"] == "approved"
    assert task_status(db, owner) == ("approved", 3)
    assert seat_xp(db, me, world["seat"]) == (XP_PER_ACCEPTED_TASK, 1)
    [event] = events(db, "draft.approved")
    payload = event["payload"]
    assert (payload["draftId"], payload["handInTokenId"]) == (draft_id, world["agent"].token.id)
    assert (event["token_id"], event["task_id"]) == (world["agent"].token.id, world["task"])
    assert "content" not in payload
    assert "summary" not in payload
    assert count_rows(db, "memory_records") == 1  # only the world's own record


def test_save_to_memory_files_a_record_where_the_reviewer_chose(
    db: Database, me: Actor, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    done = decided_view(review.approve(db, me, draft_id, save_to_memory=True, collection="general"))
    assert done["draft"]["status"] == "saved_to_memory"
    record = done["memoryRecordId"]
    assert record == done["draft"]["memoryRecordId"]
    added = events(db, "memory.record_added")[-1]["payload"]
    assert count_rows(db, "memory_records") == 2
    [decided] = events(db, "draft.saved_to_memory")
    assert (decided["payload"]["collection"], decided["payload"]["document"]) == (
        "general", "decisions",
    )  # fmt: skip
    assert "content" not in str(decided["payload"])
    assert record in str(added)
    refused(
        ErrorCode.VALIDATION, review.approve, db, me, submitted(db, world, "h-2"),
        save_to_memory=True, collection="nope",
    )  # fmt: skip


def test_reject_puts_the_task_back_where_the_hand_in_found_it(
    db: Database, owner: User, me: Actor, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    done = decided_view(review.reject(db, me, draft_id, comment="Not this way."))
    assert (done["draft"]["status"], done["draft"]["reviewComment"]) == (
        "rejected",
        "Not this way.",
    )
    assert task_status(db, owner) == ("ready_for_ai", 3)
    [event] = events(db, "draft.rejected")
    assert event["payload"]["commentPreview"] == "Not this way."
    assert seat_xp(db, me, world["seat"]) == (0, 1)


def test_request_revision_creates_a_follow_up_task_for_the_same_seat(
    db: Database, owner: User, me: Actor, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    done = decided_view(
        review.request_revision(db, me, draft_id, comment="Also cover expired tokens. " * 20)
    )
    follow = done["followUpTaskId"]
    assert done["draft"]["status"] == "revision_requested"
    assert done["draft"]["followUpTaskId"] == follow
    assert task_status(db, owner) == ("ready_for_ai", 3)
    task = read(db, me, follow)["task"]
    assert task["title"] == "Revise: Fix the login redirect"
    assert task["parentTaskId"] == world["task"]
    assert task["assigneeId"] == world["seat"]
    assert task["status"] == "ready_for_ai"
    assert "Also cover expired tokens." in task["brief"]
    assert draft_id in task["brief"]
    [event] = events(db, "draft.revision_requested")
    assert event["payload"]["followUpTaskId"] == follow
    assert len(event["payload"]["commentPreview"]) <= 200
    refused(ErrorCode.VALIDATION, review.request_revision, db, me, draft_id, comment="again")
    blank = submitted(db, world, "h-2")
    assert refused(ErrorCode.VALIDATION, review.request_revision, db, me, blank, comment=" ")
    long = "x" * 20_001
    refused(ErrorCode.LIMIT_EXCEEDED, review.request_revision, db, me, blank, comment=long)


def test_a_revised_hand_in_supersedes_the_older_drafts_of_the_chain_when_approved(
    db: Database, owner: User, me: Actor, world: dict[str, Any]
) -> None:
    first = submitted(db, world)
    follow = decided_view(review.request_revision(db, me, first, comment="More tests."))[
        "followUpTaskId"
    ]
    second = submitted(db, world, "h-2", task=follow, expected_revision=1)
    shown = draft_read_view(drafts.get_draft(db, me, second))
    assert shown["rootTaskId"] == world["task"]
    assert [v["id"] for v in shown["versions"]] == [first, second]
    review.approve(db, me, second)
    assert draft_read_view(drafts.get_draft(db, me, first))["status"] == "superseded"
    [event] = events(db, "draft.superseded")
    assert (event["payload"]["draftId"], event["payload"]["supersededBy"]) == (first, second)
    assert task_status(db, owner, follow)[0] == "approved"
    assert task_status(db, owner)[0] == "approved"  # the chain's first task too


def test_xp_raises_the_level_every_fifty_points(
    db: Database, me: Actor, world: dict[str, Any]
) -> None:
    rounds = XP_PER_LEVEL // XP_PER_ACCEPTED_TASK
    for i in range(rounds):
        review.approve(db, me, submitted(db, world, f"h-{i}", expected_revision=99))
    assert seat_xp(db, me, world["seat"]) == (XP_PER_LEVEL, 2)


def test_a_decision_on_a_draft_in_the_wrong_state_names_its_status(
    db: Database, me: Actor, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    review.reject(db, me, draft_id)
    for decide in (review.approve, review.reject):
        error = refused(ErrorCode.VALIDATION, decide, db, me, draft_id)
        assert error.details["status"] == "rejected"
        assert error.details["accepted"] == ["pending", "returned_to_review"]
    undo = refused(ErrorCode.VALIDATION, review.undo_rule_acceptance, db, me, draft_id)
    assert undo.details["accepted"] == ["accepted_by_rule"]


def test_any_token_is_refused_every_decision(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    personal = tokens.authenticate_token(
        db,
        tokens.issue_token(db, person_actor(owner), kind="personal", scopes=["read", "tasks.manage",
                           "drafts.create", "projects.admin"]).secret,
    )  # fmt: skip
    for actor in (world["agent"], personal):
        for decide, extra in (
            (review.approve, {}),
            (review.reject, {}),
            (review.request_revision, {"comment": "x"}),
            (review.undo_rule_acceptance, {}),
        ):
            refused(ErrorCode.PERMISSION_DENIED, decide, db, actor, draft_id, **extra)
        refused(ErrorCode.PERMISSION_DENIED, rules.add_rule, db, actor, "CRW", match="all")
    assert (
        draft_read_view(drafts.get_draft(db, person_actor(owner), draft_id))["status"] == "pending"
    )


def test_a_reader_cannot_decide_and_a_stranger_sees_no_draft(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    draft_id = submitted(db, world)
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    refused(ErrorCode.PERMISSION_DENIED, review.approve, db, person_actor(reader), draft_id)
    stranger = person_actor(make_user(db, "stranger@example.com"))
    refused(ErrorCode.NOT_FOUND, review.approve, db, stranger, draft_id)


def test_a_rule_accepts_a_hand_in_into_memory_and_a_person_can_undo_it(
    db: Database, owner: User, me: Actor, world: dict[str, Any]
) -> None:
    rule = rules.add_rule(db, me, "CRW", match="all", collection="general")
    body = hand_in(db, world["agent"]).body
    draft = body["draft"]
    assert draft["status"] == "accepted_by_rule"
    assert (draft["ruleId"], body["acceptedByRule"]) == (rule.id, rule.id)
    assert draft["decidedBy"]["kind"] == "rule"
    record = draft["memoryRecordId"]
    assert record is not None
    assert task_status(db, owner)[0] == "approved"
    assert seat_xp(db, me, world["seat"]) == (XP_PER_ACCEPTED_TASK, 1)
    [ruled] = events(db, "draft.accepted_by_rule")
    assert ruled["payload"]["collection"] == "general"
    assert ruled["payload"]["document"] == "decisions"

    undone = decided_view(review.undo_rule_acceptance(db, me, draft["id"]))
    assert undone["draft"]["status"] == "returned_to_review"
    assert undone["removedMemoryRecordId"] == record
    assert count_rows(db, "memory_records") == 1
    assert task_status(db, owner)[0] == "review"
    assert seat_xp(db, me, world["seat"]) == (0, 1)
    again = decided_view(review.approve(db, me, draft["id"]))
    assert again["draft"]["status"] == "approved"


def test_rules_match_by_task_type_or_ai_role_and_are_listed_and_removed(
    db: Database, owner: User, me: Actor, world: dict[str, Any]
) -> None:
    by_type = rules.add_rule(db, me, "CRW", match="task_type", value="writing")
    assert hand_in(db, world["agent"]).body["draft"]["status"] == "pending"
    by_role = rules.add_rule(db, me, "CRW", match="ai_role", value=world["seat"])
    assert [r.id for r in rules.list_rules(db, me, "CRW")] == [by_type.id, by_role.id]
    ruled = hand_in(db, world["agent"], idempotency_key="h-2", expected_revision=2).body
    assert ruled["draft"]["ruleId"] == by_role.id
    rules.remove_rule(db, me, by_role.id)
    assert [r.id for r in rules.list_rules(db, me, "CRW")] == [by_type.id]
    later = hand_in(db, world["agent"], idempotency_key="h-3", expected_revision=99).body
    assert later["draft"]["status"] == "pending"
    assert [e["type"] for e in events(db, "acceptance_rule.removed")] == ["acceptance_rule.removed"]


def test_create_draft_is_taken_by_a_rule_too(
    db: Database, owner: User, me: Actor, world: dict[str, Any]
) -> None:
    rules.add_rule(db, me, "CRW", match="all")
    made = drafts.create_draft(
        db, world["agent"], task="CRW-1", title="t", content="c", answer=hand_in_view
    )
    assert made.body["draft"]["status"] == "accepted_by_rule"
    assert task_status(db, owner)[0] == "approved"


def test_bad_rules_are_refused_naming_the_field(
    db: Database, owner: User, me: Actor, world: dict[str, Any]
) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"match": "some"}, "match"),
        ({"match": "all", "value": "x"}, "value"),
        ({"match": "task_type", "value": "poetry"}, "value"),
        ({"match": "task_type"}, "value"),
        ({"match": "ai_role", "value": "rol_unknown"}, "value"),
        ({"match": "all", "collection": "nope"}, "collection"),
        ({"match": "all", "document": "wiki"}, "document"),
    ]
    for arguments, field in cases:
        error = refused(ErrorCode.VALIDATION, rules.add_rule, db, me, "CRW", **arguments)
        assert error.details["field"] == field, arguments
    rules.add_rule(db, me, "CRW", match="all")
    refused(ErrorCode.ALREADY_EXISTS, rules.add_rule, db, me, "CRW", match="all")
    writer = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer, Role.WRITE)
    refused(
        ErrorCode.PERMISSION_DENIED, rules.add_rule, db, person_actor(writer), "CRW", match="all"
    )
    refused(ErrorCode.NOT_FOUND, rules.remove_rule, db, me, "rul_unknown")


def test_a_second_project_keeps_its_own_rules(
    db: Database, owner: User, me: Actor, world: dict[str, Any]
) -> None:
    make_project(db, owner, "OTH")
    rules.add_rule(db, me, "OTH", match="all")
    assert hand_in(db, world["agent"]).body["draft"]["status"] == "pending"
    assert HAND_IN_SCOPES
