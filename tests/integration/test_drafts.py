"""Hand-ins through the services: submit_result and create_draft, on both databases."""

from __future__ import annotations

from typing import Any

import pytest

from crewboard.contract.projects import present
from crewboard.contract.review.present import (
    draft_page_view,
    draft_read_view,
    draft_view,
    hand_in_view,
)
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.board import task_updates, tasks
from crewboard.services.idempotency import KeyedResult
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.services.review import drafts
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from tests.support import task_reads as task_queries
from tests.support.errors import refused
from tests.support.factories import count_rows, make_project, make_user

HAND_IN_SCOPES = ["read", "tasks.manage", "drafts.create"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW", collections=["general", "architecture"])
    return user


@pytest.fixture
def world(db: Database, owner: User) -> dict[str, Any]:
    """An AI seat, an accepted record, a task for the seat, an agent token that hands in."""
    actor = person_actor(owner)
    seat = present.add_team_role(db, actor, project="CRW", name="Coder", kind="ai")

    def file(uow: UnitOfWork) -> dict[str, Any]:
        project = uow.projects.get_by_key("CRW")
        assert project is not None
        return memory.file_record(
            uow, actor, project, title="Sessions live in Redis", summary="Where sessions are",
            content="Sessions are kept in Redis.", collection="architecture", document=None,
            source_draft_id=None,
        )  # fmt: skip

    record = db.write(file)
    made = tasks.create_task(
        db, actor, project="CRW", workspace_id=None, idempotency_key="t-1",
        title="Fix the login redirect", status="ready_for_ai", assignee_id=seat["id"],
        assignee_type="ai", context_item_ids=[record.id],
    )  # fmt: skip
    issued = tokens.issue_token(db, actor, kind="agent", scopes=HAND_IN_SCOPES, project="CRW")
    return {
        "seat": seat["id"],
        "record": record.id,
        "task": made.body["task"]["id"],
        "agent": tokens.authenticate_token(db, issued.secret),
    }


def read(db: Database, actor: Actor, task: str = "CRW-1") -> dict[str, Any]:
    found = task_queries.get_task(db, actor, task=task)
    assert isinstance(found, dict)
    return found


def hand_in(db: Database, actor: Actor, **overrides: Any) -> KeyedResult:
    arguments: dict[str, Any] = {
        "project": "CRW",
        "workspace_id": None,
        "task": "CRW-1",
        "idempotency_key": "h-1",
        "expected_revision": 1,
        "context_receipt_id": None,
        "title": "Redirect fixed",
        "summary": "One line",
        "content": "# Fixed\nThe loop is gone.",
        "collection": "architecture",
        "document": "decisions",
        "references": [{"kind": "commit", "value": "a1b2c3d"}],
    }
    return drafts.submit_result(db, actor, **(arguments | overrides), answer=hand_in_view)


def events(db: Database, kind: str) -> list[dict[str, Any]]:
    rows = db.read(lambda uow: uow.events.list_after(project_id=None, limit=1000))
    return [r for r in rows if r["type"] == kind]


def task_status(db: Database, owner: User, ref: str = "CRW-1") -> tuple[str, int]:
    task = read(db, person_actor(owner), ref)["task"]
    return task["status"], task["revision"]


def test_submit_result_lands_a_draft_and_moves_the_task_to_review_in_one_write(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    agent = world["agent"]
    receipt = read(db, agent)["contextReceiptId"]
    body = hand_in(db, agent, context_receipt_id=receipt).body
    assert body["taskMoved"] is True
    assert body["taskNotMovedReason"] is None
    assert body["task"]["status"] == "review"
    assert body["inputsChanged"] == []
    draft = body["draft"]
    assert "content" not in draft
    assert (draft["status"], draft["roleId"], draft["contextReceiptId"]) == (
        "pending", world["seat"], receipt,
    )  # fmt: skip
    assert draft["references"] == [{"kind": "commit", "value": "a1b2c3d"}]
    assert task_status(db, owner) == ("review", 2)
    submitted = events(db, "draft.submitted")
    assert [e["payload"]["draftId"] for e in submitted] == [draft["id"]]
    assert "content" not in submitted[0]["payload"]
    assert "summary" not in submitted[0]["payload"]
    moves = events(db, "task.updated")
    assert moves[-1]["payload"]["task"]["status"] == "review"
    full = draft_read_view(drafts.get_draft(db, person_actor(owner), draft["id"]))
    assert full["content"] == "# Fixed\nThe loop is gone."


@pytest.mark.parametrize("status", ["backlog", "in_progress"])
def test_submit_result_moves_a_task_from_each_open_starting_status(
    db: Database, owner: User, world: dict[str, Any], status: str
) -> None:
    task_updates.update_task(
        db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key="u",
        task_id="CRW-1", expected_revision=1, patch={"status": status},
    )  # fmt: skip
    body = hand_in(db, world["agent"], expected_revision=2).body
    assert body["taskMoved"] is True
    assert body["draft"]["taskStatusBefore"] == status


def test_a_stale_revision_keeps_the_task_where_it_is_but_the_draft_lands(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    body = hand_in(db, world["agent"], expected_revision=7).body
    assert body["taskMoved"] is False
    reason = body["taskNotMovedReason"]
    assert (reason["code"], reason["currentRevision"], reason["status"]) == (
        "REVISION_CONFLICT", 1, "ready_for_ai",
    )  # fmt: skip
    assert reason["message"]
    assert task_status(db, owner) == ("ready_for_ai", 1)
    assert count_rows(db, "drafts") == 1


def test_a_task_in_another_status_stays_and_the_ack_says_status(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    task_updates.update_task(
        db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key="u",
        task_id="CRW-1", expected_revision=1, patch={"status": "blocked"},
    )  # fmt: skip
    body = hand_in(db, world["agent"], expected_revision=2).body
    assert (body["taskMoved"], body["taskNotMovedReason"]["code"]) == (False, "STATUS")
    assert task_status(db, owner) == ("blocked", 2)
    assert body["draft"]["taskMoved"] is False


def test_an_exact_retry_replays_and_a_changed_retry_is_refused_naming_the_draft(
    db: Database, world: dict[str, Any]
) -> None:
    first = hand_in(db, world["agent"])
    again = hand_in(db, world["agent"])
    assert again.replayed is True
    assert again.body == first.body
    clash = refused(ErrorCode.IDEMPOTENCY_CONFLICT, hand_in, db, world["agent"], title="Other")
    assert clash.details["resourceId"] == first.body["draft"]["id"]
    assert count_rows(db, "drafts") == 1


def test_submit_result_requires_a_key_and_both_scopes(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    refused(ErrorCode.VALIDATION, hand_in, db, world["agent"], idempotency_key=None)
    for scopes in (["read", "tasks.manage"], ["read", "drafts.create"]):
        issued = tokens.issue_token(
            db, person_actor(owner), kind="agent", scopes=scopes, project="CRW"
        )
        narrow = tokens.authenticate_token(db, issued.secret)
        refused(ErrorCode.PERMISSION_DENIED, hand_in, db, narrow)
    wrong = refused(ErrorCode.VALIDATION, hand_in, db, world["agent"], workspace_id="wsp_x")
    assert wrong.details["field"] == "workspaceId"
    assert count_rows(db, "drafts") == 0


@pytest.mark.parametrize(
    ("references", "code", "field"),
    [
        ([{"kind": "link", "value": "CI", "url": "http://ci.example.com/1"}], "VALIDATION", "references[0].url"),
        ([{"kind": "link", "value": "CI", "url": "ftp://ci.example.com/1"}], "VALIDATION", "references[0].url"),
        ([{"kind": "commit", "value": "abc12"}], "VALIDATION", "references[0].value"),
        ([{"kind": "commit", "value": "xyz1234"}], "VALIDATION", "references[0].value"),
        ([{"kind": "tests", "value": "ok"}, {"kind": "diff", "value": "x"}], "VALIDATION", "references[1].kind"),
        ([{"kind": "branch", "value": "b" * 301}], "LIMIT_EXCEEDED", "references[0].value"),
        ([{"kind": "tests", "value": "ok", "label": "l" * 121}], "LIMIT_EXCEEDED", "references[0].label"),
        ([{"kind": "tests", "value": "ok"}] * 21, "LIMIT_EXCEEDED", "references"),
    ],
)  # fmt: skip
def test_bad_references_are_refused_naming_the_item(
    db: Database, world: dict[str, Any], references: list[dict[str, Any]], code: str, field: str
) -> None:
    error = refused(ErrorCode(code), hand_in, db, world["agent"], references=references)
    assert error.details["field"] == field
    assert count_rows(db, "drafts") == 0


def test_references_are_stored_as_reported(db: Database, world: dict[str, Any]) -> None:
    references = [
        {"kind": "commit", "value": "A1B2C3D4E5F6", "label": "fix redirect"},
        {"kind": "pull_request", "value": "#42", "url": "https://github.com/a/b/pull/42"},
        {"kind": "tests", "value": "212 pass, 0 fail", "label": "after"},
    ]
    body = hand_in(db, world["agent"], references=references).body
    assert body["draft"]["references"] == references


def test_collection_and_document_are_checked(db: Database, world: dict[str, Any]) -> None:
    unknown = refused(ErrorCode.VALIDATION, hand_in, db, world["agent"], collection="nope")
    assert unknown.details["field"] == "collection"
    assert "architecture" in unknown.message
    bad = refused(ErrorCode.VALIDATION, hand_in, db, world["agent"], document="wiki")
    assert bad.details["field"] == "document"
    body = hand_in(db, world["agent"], collection="ARCHITECTURE").body
    assert body["draft"]["collection"] == "architecture"


def test_a_receipt_of_another_token_or_task_is_refused(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    agent = world["agent"]
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=HAND_IN_SCOPES, project="CRW"
    )
    other = tokens.authenticate_token(db, issued.secret)
    theirs = read(db, other)["contextReceiptId"]
    error = refused(ErrorCode.VALIDATION, hand_in, db, agent, context_receipt_id=theirs)
    assert error.details["field"] == "contextReceiptId"
    tasks.create_task(
        db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key="t-2",
        title="Another redirect", context_item_ids=[world["record"]],
    )  # fmt: skip
    elsewhere = read(db, agent, "CRW-2")["contextReceiptId"]
    refused(ErrorCode.VALIDATION, hand_in, db, agent, context_receipt_id=elsewhere)
    refused(ErrorCode.VALIDATION, hand_in, db, agent, context_receipt_id="rcp_unknown")
    assert count_rows(db, "drafts") == 0


def test_create_draft_leaves_the_task_as_it_is(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    made = drafts.create_draft(
        db, world["agent"], task="CRW-1", title="An idea", content="Try a cookie.",
        idempotency_key="d-1", answer=hand_in_view,
    )  # fmt: skip
    assert made.body["taskMoved"] is False
    assert made.body["draft"]["status"] == "pending"
    assert task_status(db, owner) == ("ready_for_ai", 1)
    again = drafts.create_draft(
        db, world["agent"], task="CRW-1", title="An idea", content="Try a cookie.",
        idempotency_key="d-1", answer=hand_in_view,
    )  # fmt: skip
    assert again.replayed is True
    submitted = events(db, "draft.submitted")
    assert [e["payload"]["kind"] for e in submitted] == ["draft"]


def test_create_draft_needs_the_drafts_scope(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", scopes=["read", "tasks.manage"], project="CRW"
    )
    narrow = tokens.authenticate_token(db, issued.secret)
    refused(
        ErrorCode.PERMISSION_DENIED, drafts.create_draft, db, narrow, task="CRW-1", title="x",
        content="y", answer=hand_in_view,
    )  # fmt: skip


def test_list_drafts_pages_newest_first_and_filters_by_status(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    ids = [
        hand_in(db, world["agent"], idempotency_key=f"h-{i}").body["draft"]["id"] for i in range(3)
    ]
    page = draft_page_view(drafts.list_drafts(db, person_actor(owner), project="CRW", limit=2))
    assert [d["id"] for d in page["drafts"]] == ids[::-1][:2]
    assert (page["total"], page["nextOffset"]) == (3, 2)
    assert all("content" not in d for d in page["drafts"])
    none = draft_page_view(
        drafts.list_drafts(db, person_actor(owner), project="CRW", statuses=["approved"])
    )
    assert none["total"] == 0
    refused(ErrorCode.VALIDATION, drafts.list_drafts, db, person_actor(owner), statuses=["done"])


def test_waiting_drafts_flags_changed_inputs(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    receipt = read(db, world["agent"])["contextReceiptId"]
    draft_id = hand_in(db, world["agent"], context_receipt_id=receipt).body["draft"]["id"]

    def waiting(uow: UnitOfWork) -> list[dict[str, Any]]:
        project = uow.projects.get_by_key("CRW")
        assert project is not None
        return [draft_view(row) for row in drafts.waiting_drafts(uow, [project.id])]

    before = db.read(waiting)
    assert [(d["id"], d["inputsChanged"]) for d in before] == [(draft_id, [])]
    task_updates.update_task(
        db, person_actor(owner), project="CRW", workspace_id=None, idempotency_key="u",
        task_id="CRW-1", expected_revision=2, patch={"brief": "A new brief."},
    )  # fmt: skip
    after = db.read(waiting)
    assert [c["kind"] for c in after[0]["inputsChanged"]] == ["brief"]
    shown = draft_read_view(drafts.get_draft(db, person_actor(owner), draft_id))
    assert shown["inputsChanged"] == after[0]["inputsChanged"]


def test_drafts_of_a_project_not_open_to_the_reader_do_not_exist(
    db: Database, world: dict[str, Any]
) -> None:
    draft_id = hand_in(db, world["agent"]).body["draft"]["id"]
    stranger = person_actor(make_user(db, "stranger@example.com"))
    refused(ErrorCode.NOT_FOUND, drafts.get_draft, db, stranger, draft_id)
    refused(ErrorCode.NOT_FOUND, hand_in, db, stranger)
