"""update_tasks and set_task_status through the services, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any, TypeVar

import pytest
from sqlalchemy import text

from crewboard.contract.projects import present
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import (
    CrewboardError,
    IdempotencyConflict,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    RevisionConflict,
    ValidationFailed,
)
from crewboard.services.board import batch as task_batch
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import grant, make_project, make_user, token_actor
from tests.support.task_reads import get_task

T = TypeVar("T")
STATUSES = ["backlog", "ready_for_ai", "in_progress", "blocked", "review", "approved", "done"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def actor(owner: User) -> Actor:
    return person_actor(owner)


def _task(db: Database, actor: Actor, title: str, **fields: Any) -> dict[str, Any]:
    made = tasks.create_task(
        db,
        actor,
        project="CRW",
        workspace_id=None,
        idempotency_key=f"create-{title}",
        title=title,
        **fields,
    )
    return dict(made.body["task"])


def _read(db: Database, actor: Actor, ref: str) -> dict[str, Any]:
    found = get_task(db, actor, task=ref, include_context_pack=False)
    assert isinstance(found, dict)
    return dict(found["task"])


def _plan(db: Database, actor: Actor, task_ids: list[str], key: str = "plan-1", **kw: Any):  # type: ignore[no-untyped-def]
    return task_batch.update_tasks(
        db,
        actor,
        project="CRW",
        workspace_id=None,
        idempotency_key=key,
        task_ids=task_ids,
        **kw,
    )


def _move(
    db: Database, actor: Actor, changes: list[dict[str, Any]], key: str = "move-1", **kw: Any
):  # type: ignore[no-untyped-def]
    return task_batch.set_task_status(
        db, actor, project="CRW", workspace_id=None, idempotency_key=key, changes=changes, **kw
    )


def _events(db: Database, type_: str = "task.updated") -> int:
    return db.read(lambda uow: uow.events.count(type_=type_))


def _lifecycle(db: Database, task_id: str, type_: str) -> list[dict[str, Any]]:
    project = db.read(lambda uow: uow.projects.get_by_key("CRW"))
    assert project is not None
    return db.read(
        lambda uow: uow.tasks.lifecycle_events(
            project_ids=[project.id], task_id=task_id, types=[type_]
        )
    )


def _ai_role(db: Database, actor: Actor, name: str = "Writer") -> str:
    return str(present.add_team_role(db, actor, project="CRW", name=name, kind="ai")["id"])


def _agent(db: Database, user: User) -> Actor:
    issued = tokens.issue_token(
        db, person_actor(user), kind="agent", scopes=["read", "tasks.manage"], project="CRW"
    )
    return tokens.authenticate_token(db, issued.secret)


# --- update_tasks ---------------------------------------------------------------------------


def test_update_tasks_applies_planning_fields_to_every_task_with_revisions_and_events(
    db: Database, actor: Actor, owner: User, clock: ManualClock
) -> None:
    one, two = _task(db, actor, "One"), _task(db, actor, "Two")
    clock.advance(timedelta(minutes=5))
    result = _plan(
        db,
        actor,
        [one["id"], "CRW-2"],
        fields={
            "priority": "high",
            "story_points": 5,
            "cycle": "Sprint 3",
            "start_date": "2026-03-02",
            "due_date": "2026-03-09",
            "assignee_id": owner.id,
            "human_owner_id": owner.id,
        },
    )
    assert result.replayed is False
    assert result.body["updated"] == 2
    assert result.body["unchanged"] == 0
    assert [row["key"] for row in result.body["tasks"]] == ["CRW-1", "CRW-2"]
    for row, made in zip(result.body["tasks"], (one, two), strict=True):
        assert row["taskId"] == made["id"]
        assert row["revision"] == 2
        assert set(row["changed"]) == {
            "priority",
            "storyPoints",
            "cycle",
            "startDate",
            "dueDate",
            "assigneeId",
            "assigneeType",
            "humanOwnerId",
        }
        task = _read(db, actor, made["id"])
        assert (task["priority"], task["storyPoints"], task["cycle"]) == ("high", 5, "Sprint 3")
        assert (task["startDate"], task["dueDate"]) == ("2026-03-02", "2026-03-09")
        assert (task["assigneeId"], task["assigneeType"]) == (owner.id, "human")
        assert task["humanOwnerId"] == owner.id
        assert task["status"] == "backlog"  # never touched
        assert task["title"] == made["title"]
        assert task["updatedBy"]["userId"] == owner.id
        assert task["updatedAt"] == clock.now().isoformat()
        assert len(_lifecycle(db, made["id"], "assignment_changed")) == 1
    assert _events(db) == 2


def test_update_tasks_omitted_fields_stay_and_null_clears(db: Database, actor: Actor) -> None:
    made = _task(db, actor, "Dated", due_date="2026-04-01", cycle="S1", story_points=3)
    _plan(db, actor, ["CRW-1"], fields={"due_date": None, "story_points": None})
    task = _read(db, actor, made["id"])
    assert (task["dueDate"], task["storyPoints"], task["cycle"]) == (None, None, "S1")
    assert task["revision"] == 2


def test_update_tasks_that_changes_nothing_keeps_the_revision(db: Database, actor: Actor) -> None:
    made = _task(db, actor, "Same", priority="high", labels=["ui"])
    result = _plan(db, actor, [made["id"]], fields={"priority": "high"}, add_labels=["UI"])
    assert result.body["tasks"][0] == {
        "taskId": made["id"],
        "key": "CRW-1",
        "changed": [],
        "revision": 1,
    }
    assert (result.body["updated"], result.body["unchanged"]) == (0, 1)
    assert _events(db) == 0


def test_update_tasks_adds_and_removes_labels_without_replacing_them(
    db: Database, actor: Actor
) -> None:
    first = _task(db, actor, "First", labels=["api", "Backend"])
    second = _task(db, actor, "Second", labels=["docs"])
    result = _plan(
        db,
        actor,
        [first["id"], second["id"]],
        add_labels=["backend", "urgent"],
        remove_labels=["API", "docs"],
    )
    assert [row["changed"] for row in result.body["tasks"]] == [["labels"], ["labels"]]
    assert _read(db, actor, first["id"])["labels"] == ["Backend", "urgent"]
    assert _read(db, actor, second["id"])["labels"] == ["backend", "urgent"]


def test_update_tasks_refuses_a_task_that_would_pass_20_labels_and_changes_nothing(
    db: Database, actor: Actor
) -> None:
    full = _task(db, actor, "Full", labels=[f"l{i}" for i in range(19)])
    light = _task(db, actor, "Light")
    with pytest.raises(LimitExceeded) as caught:
        _plan(db, actor, [light["id"], full["id"]], add_labels=["x", "y"])
    assert caught.value.details["field"] == "addLabels"
    assert caught.value.details["limit"] == 20
    assert caught.value.details["key"] == "CRW-1"
    assert _read(db, actor, light["id"])["labels"] == []
    assert _events(db) == 0


def test_one_unknown_task_fails_the_whole_call_and_changes_nothing(
    db: Database, actor: Actor, owner: User
) -> None:
    made = _task(db, actor, "Known")
    other = make_project(db, owner, "OTH")
    foreign = tasks.create_task(
        db, actor, project=other, workspace_id=None, idempotency_key="f", title="Foreign"
    ).body["task"]
    for unknown in ("CRW-99", "tsk_doesnotexist", foreign["id"], "OTH-1"):
        with pytest.raises(NotFound) as caught:
            _plan(db, actor, [made["id"], unknown], fields={"priority": "high"})
        assert caught.value.details["missing"] == [unknown]
        assert caught.value.details["field"] == "taskIds"
    assert _read(db, actor, made["id"])["revision"] == 1
    assert _read(db, actor, made["id"])["priority"] == "medium"
    assert _events(db) == 0
    assert _lifecycle(db, made["id"], "assignment_changed") == []
    # The failed call claimed no key: the same key still works once the list is right.
    assert _plan(db, actor, [made["id"]], fields={"priority": "high"}).body["updated"] == 1


def test_a_relationship_replaces_the_old_one_and_the_other_task_shows_the_inverse(
    db: Database, actor: Actor
) -> None:
    a, c = _task(db, actor, "A"), _task(db, actor, "C")
    first = _plan(
        db,
        actor,
        [a["id"]],
        key="p1",
        add_relationships=[{"type": "blocked_by", "taskId": "CRW-2"}],
    )
    assert first.body["tasks"][0]["changed"] == ["relationships"]
    assert first.body["alsoUpdated"] == [{"taskId": c["id"], "key": "CRW-2", "revision": 2}]
    assert _read(db, actor, a["id"])["relationships"] == [
        {"type": "blocked_by", "taskId": c["id"], "number": 2}
    ]
    assert _read(db, actor, c["id"])["relationships"] == [
        {"type": "blocks", "taskId": a["id"], "number": 1}
    ]
    assert [e["data"] for e in _lifecycle(db, a["id"], "blocker_changed")] == [{"from": 0, "to": 1}]
    assert _lifecycle(db, c["id"], "blocker_changed") == []

    _plan(db, actor, [a["id"]], key="p2", add_relationships=[{"type": "blocks", "taskId": c["id"]}])
    assert _read(db, actor, a["id"])["relationships"] == [
        {"type": "blocks", "taskId": c["id"], "number": 2}
    ]
    c_now = _read(db, actor, c["id"])
    assert c_now["relationships"] == [{"type": "blocked_by", "taskId": a["id"], "number": 1}]
    assert c_now["blockedByTaskIds"] == [a["id"]]
    assert c_now["revision"] == 3
    # Both ends' blocker counts moved: A lost its blocker, C gained one.
    assert [e["data"] for e in _lifecycle(db, a["id"], "blocker_changed")][-1] == {
        "from": 1,
        "to": 0,
    }
    assert [e["data"] for e in _lifecycle(db, c["id"], "blocker_changed")] == [{"from": 0, "to": 1}]
    assert _events(db) == 4

    _plan(
        db, actor, [a["id"]], key="p3", add_relationships=[{"type": "related", "taskId": "CRW-2"}]
    )
    assert _read(db, actor, c["id"])["relationships"] == [
        {"type": "related", "taskId": a["id"], "number": 1}
    ]
    _plan(db, actor, [a["id"]], key="p4", remove_relationships=["CRW-2"])
    assert _read(db, actor, a["id"])["relationships"] == []
    assert _read(db, actor, c["id"])["relationships"] == []


def test_the_same_relationship_set_again_changes_nothing(db: Database, actor: Actor) -> None:
    a, _ = _task(db, actor, "A"), _task(db, actor, "B")
    link = [{"type": "related", "taskId": "CRW-2"}]
    _plan(db, actor, [a["id"]], key="p1", add_relationships=link)
    again = _plan(db, actor, [a["id"]], key="p2", add_relationships=link)
    assert again.body["updated"] == 0
    assert again.body["alsoUpdated"] == []
    removed_twice = _plan(db, actor, [a["id"]], key="p3", remove_relationships=["CRW-2"])
    assert removed_twice.body["updated"] == 1
    assert (
        _plan(db, actor, [a["id"]], key="p4", remove_relationships=["CRW-2"]).body["updated"] == 0
    )


def test_many_tasks_blocked_by_one_task(db: Database, actor: Actor) -> None:
    for title in ("A", "B", "Gate"):
        _task(db, actor, title)
    result = _plan(
        db,
        actor,
        ["CRW-1", "CRW-2"],
        add_relationships=[{"type": "blocked_by", "taskId": "CRW-3"}],
    )
    assert result.body["updated"] == 2
    assert [row["key"] for row in result.body["alsoUpdated"]] == ["CRW-3"]
    gate = _read(db, actor, "CRW-3")
    assert [r["number"] for r in gate["relationships"]] == [1, 2]
    assert {r["type"] for r in gate["relationships"]} == {"blocks"}


@pytest.mark.parametrize(
    ("relationships", "field"),
    [
        ([{"type": "related", "taskId": "CRW-1"}], "addRelationships.0.taskId"),
        ([{"type": "related", "taskId": "CRW-99"}], "addRelationships.0.taskId"),
        (
            [{"type": "related", "taskId": "CRW-2"}, {"type": "blocks", "taskId": "CRW-2"}],
            "addRelationships.1.taskId",
        ),
    ],
    ids=["itself", "unknown", "twice"],
)
def test_update_tasks_refuses_a_bad_relationship_naming_the_field(
    db: Database, actor: Actor, relationships: list[dict[str, str]], field: str
) -> None:
    _task(db, actor, "A")
    _task(db, actor, "B")
    with pytest.raises(ValidationFailed) as caught:
        _plan(db, actor, ["CRW-1"], add_relationships=relationships)
    assert caught.value.details["field"] == field
    assert _read(db, actor, "CRW-2")["relationships"] == []


def test_update_tasks_refuses_a_link_that_is_added_and_removed(db: Database, actor: Actor) -> None:
    _task(db, actor, "A")
    _task(db, actor, "B")
    with pytest.raises(ValidationFailed) as caught:
        _plan(
            db,
            actor,
            ["CRW-1"],
            add_relationships=[{"type": "related", "taskId": "CRW-2"}],
            remove_relationships=["CRW-2"],
        )
    assert caught.value.details["field"] == "removeRelationships.0"


def test_agents_can_be_assigned_only_to_roles_that_exist(db: Database, actor: Actor) -> None:
    _task(db, actor, "A")
    _task(db, actor, "B")
    with pytest.raises(ValidationFailed) as caught:
        _plan(db, actor, ["CRW-1", "CRW-2"], fields={"assignee_id": "rol_nosuchrole"})
    assert caught.value.details["field"] == "assigneeId"
    assert caught.value.details["key"] == "CRW-1"
    assert _events(db) == 0
    role = _ai_role(db, actor)
    result = _plan(db, actor, ["CRW-1", "CRW-2"], key="p2", fields={"assignee_id": role})
    assert result.body["updated"] == 2
    task = _read(db, actor, "CRW-2")
    assert (task["assigneeId"], task["assigneeType"]) == (role, "ai")
    assert [
        e["data"]["toAssigneeId"] for e in _lifecycle(db, task["id"], "assignment_changed")
    ] == [role]


def test_reassigning_from_a_person_to_an_ai_role_takes_the_roles_kind(
    db: Database, actor: Actor, owner: User
) -> None:
    _task(db, actor, "A", assignee_id=owner.id)
    role = _ai_role(db, actor)
    _plan(db, actor, ["CRW-1"], fields={"assignee_id": role})
    assert _read(db, actor, "CRW-1")["assigneeType"] == "ai"
    _plan(db, actor, ["CRW-1"], key="p2", fields={"assignee_id": None})
    task = _read(db, actor, "CRW-1")
    assert (task["assigneeId"], task["assigneeType"]) == (None, None)


def test_a_person_outside_the_project_cannot_be_assigned(db: Database, actor: Actor) -> None:
    stranger = make_user(db, "stranger@example.com")
    _task(db, actor, "A")
    for field in ("assignee_id", "human_owner_id"):
        with pytest.raises(ValidationFailed) as caught:
            _plan(db, actor, ["CRW-1"], fields={field: stranger.id})
        assert caught.value.details["field"] in ("assigneeId", "humanOwnerId")


def test_unassigning_a_task_in_progress_is_refused(db: Database, actor: Actor, owner: User) -> None:
    _task(db, actor, "Doing", status="in_progress", assignee_id=owner.id)
    with pytest.raises(ValidationFailed) as caught:
        _plan(db, actor, ["CRW-1"], fields={"assignee_id": None})
    assert caught.value.details["field"] == "assigneeId"


# Arguments, the error, the field it names, the accepted values it lists.
Refusal = tuple[dict[str, Any], type[CrewboardError], str, list[str] | None]
PRIORITY = {"fields": {"priority": "high"}}
UPDATE_REFUSALS: list[Refusal] = [
    ({"task_ids": [], **PRIORITY}, ValidationFailed, "taskIds", None),
    ({"task_ids": [f"CRW-{i}" for i in range(201)], **PRIORITY}, LimitExceeded, "taskIds", None),
    ({"task_ids": ["  "], **PRIORITY}, ValidationFailed, "taskIds.0", None),
    ({"task_ids": ["x" * 201], **PRIORITY}, LimitExceeded, "taskIds.0", None),
    ({"fields": {}}, ValidationFailed, "arguments", None),
    ({"fields": {"priority": "urgent"}}, ValidationFailed, "priority", ["low", "medium", "high"]),
    ({"fields": {"priority": None}}, ValidationFailed, "priority", ["low", "medium", "high"]),
    ({"fields": {"assignee_type": "robot"}}, ValidationFailed, "assigneeType", ["ai", "human"]),
    ({"fields": {"assignee_id": "x" * 201}}, LimitExceeded, "assigneeId", None),
    ({"fields": {"story_points": 1001}}, ValidationFailed, "storyPoints", None),
    ({"fields": {"story_points": -1}}, ValidationFailed, "storyPoints", None),
    ({"fields": {"cycle": "c" * 65}}, LimitExceeded, "cycle", None),
    ({"fields": {"due_date": "next week"}}, ValidationFailed, "dueDate", None),
    ({"fields": {"start_date": "2026-13-01"}}, ValidationFailed, "startDate", None),
    ({"fields": {"status": "done"}}, ValidationFailed, "status", None),
    ({"fields": {"title": "New"}}, ValidationFailed, "title", None),
    ({"add_labels": ["x" * 49]}, LimitExceeded, "addLabels", None),
    ({"add_labels": [f"l{i}" for i in range(21)]}, LimitExceeded, "addLabels", None),
    ({"add_labels": [" "]}, ValidationFailed, "addLabels", None),
    ({"remove_labels": ["y" * 49]}, LimitExceeded, "removeLabels", None),
    ({"add_labels": ["ui"], "remove_labels": ["UI"]}, ValidationFailed, "removeLabels", None),
    (
        {"add_relationships": [{"type": "parent", "taskId": "CRW-2"}]},
        ValidationFailed,
        "addRelationships.0.type",
        ["blocks", "blocked_by", "related"],
    ),
    (
        {"add_relationships": [{"type": "related", "taskId": ""}]},
        ValidationFailed,
        "addRelationships.0.taskId",
        None,
    ),
    (
        {"add_relationships": [{"type": "related", "taskId": f"CRW-{i}"} for i in range(51)]},
        LimitExceeded,
        "addRelationships",
        None,
    ),
    (
        {"remove_relationships": [f"CRW-{i}" for i in range(51)]},
        LimitExceeded,
        "removeRelationships",
        None,
    ),
]


@pytest.mark.parametrize(
    "case", UPDATE_REFUSALS, ids=[f"{case[2]}-{i}" for i, case in enumerate(UPDATE_REFUSALS)]
)
def test_update_tasks_refuses_bad_arguments_naming_the_field(
    db: Database, actor: Actor, case: Refusal
) -> None:
    arguments, error, field, accepted = case
    _task(db, actor, "A")
    with pytest.raises(error) as caught:
        _plan(db, actor, **({"task_ids": ["CRW-1"]} | arguments))
    assert type(caught.value) is error
    assert caught.value.details["field"] == field
    assert field in caught.value.message
    if accepted is not None:
        assert caught.value.details["accepted"] == accepted
        assert all(value in caught.value.message for value in accepted)
    assert _read(db, actor, "CRW-1")["revision"] == 1


def test_update_tasks_needs_the_right_workspace_scope_and_role(
    db: Database, actor: Actor, owner: User
) -> None:
    _task(db, actor, "A")
    with pytest.raises(ValidationFailed) as caught:
        task_batch.update_tasks(
            db,
            actor,
            project="CRW",
            workspace_id="wsp_other",
            idempotency_key="k",
            task_ids=["CRW-1"],
            fields={"priority": "low"},
        )
    assert caught.value.details["field"] == "workspaceId"
    read_only = token_actor(db, owner, ["read"])
    with pytest.raises(PermissionDenied):
        _plan(db, read_only, ["CRW-1"], fields={"priority": "low"})
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    with pytest.raises(PermissionDenied):
        _plan(db, person_actor(reader), ["CRW-1"], fields={"priority": "low"})
    stranger = make_user(db, "stranger@example.com")
    with pytest.raises(NotFound):
        _plan(db, person_actor(stranger), ["CRW-1"], fields={"priority": "low"})
    assert _read(db, actor, "CRW-1")["revision"] == 1


def test_update_tasks_exact_retry_replays_and_other_arguments_conflict(
    db: Database, actor: Actor
) -> None:
    _task(db, actor, "A")
    first = _plan(db, actor, ["CRW-1"], fields={"priority": "high"}, add_labels=["x"])
    again = _plan(db, actor, ["CRW-1"], fields={"priority": "high"}, add_labels=["x"])
    assert again.replayed is True
    assert again.body == first.body
    assert _events(db) == 1
    assert _read(db, actor, "CRW-1")["revision"] == 2
    with pytest.raises(IdempotencyConflict) as caught:
        _plan(db, actor, ["CRW-1"], fields={"priority": "low"})
    assert caught.value.details["operation"] == "update_tasks"
    assert caught.value.details["acknowledgement"] == first.body
    assert _read(db, actor, "CRW-1")["priority"] == "high"


# --- set_task_status ------------------------------------------------------------------------


def test_set_task_status_with_one_stale_version_changes_the_others(
    db: Database, actor: Actor, owner: User, clock: ManualClock
) -> None:
    for title in ("A", "B", "C"):
        _task(db, actor, title)
    _plan(db, actor, ["CRW-2"], fields={"priority": "high"})  # CRW-2 moves on to revision 2
    result = _move(
        db,
        actor,
        [
            {"taskId": "CRW-1", "status": "ready_for_ai"},
            {"taskId": "CRW-2", "status": "ready_for_ai"},
            {"taskId": "CRW-3", "status": "review"},
        ],
        expected_versions={"CRW-1": 1, "CRW-2": 1, "CRW-3": 1},
    )
    ok_a, stale, ok_c = result.body["outcomes"]
    assert (result.body["succeeded"], result.body["failed"]) == (2, 1)
    assert ok_a == {
        "taskId": _read(db, actor, "CRW-1")["id"],
        "key": "CRW-1",
        "ok": True,
        "status": "ready_for_ai",
        "revision": 2,
        "changed": True,
    }
    assert (ok_c["ok"], ok_c["status"], ok_c["revision"]) == (True, "review", 2)
    assert stale["ok"] is False
    assert stale["key"] == "CRW-2"
    assert stale["error"]["code"] == "REVISION_CONFLICT"
    assert stale["error"]["details"]["currentRevision"] == 2
    assert stale["error"]["details"]["updatedBy"]["userId"] == owner.id
    assert stale["error"]["details"]["updatedAt"]
    assert stale["error"]["message"]
    assert _read(db, actor, "CRW-2")["status"] == "backlog"
    assert _read(db, actor, "CRW-3")["status"] == "review"
    for key, moved in (("CRW-1", True), ("CRW-2", False), ("CRW-3", True)):
        task_id = _read(db, actor, key)["id"]
        assert len(_lifecycle(db, task_id, "status_changed")) == (2 if moved else 1), key
    assert _events(db) == 1 + 2  # the planning change, then the two moves


def test_set_task_status_unknown_task_fails_only_itself(db: Database, actor: Actor) -> None:
    _task(db, actor, "A")
    result = _move(
        db,
        actor,
        [{"taskId": "CRW-42", "status": "done"}, {"taskId": "CRW-1", "status": "done"}],
    )
    missing, done = result.body["outcomes"]
    assert missing == {
        "taskId": "CRW-42",
        "ok": False,
        "error": {
            "code": "NOT_FOUND",
            "message": missing["error"]["message"],
            "details": {"resource": "task", "ref": "CRW-42"},
        },
    }
    assert done["ok"] is True
    assert _read(db, actor, "CRW-1")["status"] == "done"


def test_an_agent_token_cannot_approve_but_can_hand_in_for_review(
    db: Database, actor: Actor, owner: User
) -> None:
    _task(db, actor, "A")
    _task(db, actor, "B")
    agent = _agent(db, owner)
    result = _move(
        db,
        agent,
        [{"taskId": "CRW-1", "status": "approved"}, {"taskId": "CRW-2", "status": "review"}],
    )
    refused, handed_in = result.body["outcomes"]
    assert refused["ok"] is False
    assert refused["error"]["code"] == "PERMISSION_DENIED"
    assert refused["error"]["details"]["field"] == "status"
    assert handed_in["ok"] is True
    assert _read(db, actor, "CRW-1")["status"] == "backlog"
    approved = _move(db, actor, [{"taskId": "CRW-1", "status": "approved"}], key="person")
    assert approved.body["outcomes"][0]["ok"] is True


def test_in_progress_needs_an_assignee(db: Database, actor: Actor, owner: User) -> None:
    _task(db, actor, "Nobody")
    _task(db, actor, "Somebody", assignee_id=owner.id)
    result = _move(
        db,
        actor,
        [
            {"taskId": "CRW-1", "status": "in_progress"},
            {"taskId": "CRW-2", "status": "in_progress"},
        ],
    )
    nobody, somebody = result.body["outcomes"]
    assert nobody["error"]["code"] == "VALIDATION"
    assert nobody["error"]["details"]["field"] == "assigneeId"
    assert somebody["ok"] is True
    assert _read(db, actor, "CRW-2")["status"] == "in_progress"


def test_the_same_status_again_is_ok_and_changes_nothing(db: Database, actor: Actor) -> None:
    _task(db, actor, "A")
    result = _move(db, actor, [{"taskId": "CRW-1", "status": "backlog"}])
    assert result.body["outcomes"][0] | {"taskId": None} == {
        "taskId": None,
        "key": "CRW-1",
        "ok": True,
        "status": "backlog",
        "revision": 1,
        "changed": False,
    }
    assert _events(db) == 0


def test_one_task_named_by_id_and_by_key_moves_once(db: Database, actor: Actor) -> None:
    made = _task(db, actor, "A")
    result = _move(
        db,
        actor,
        [{"taskId": made["id"], "status": "review"}, {"taskId": "CRW-1", "status": "done"}],
    )
    first, second = result.body["outcomes"]
    assert first["ok"] is True
    assert second["error"]["code"] == "VALIDATION"
    assert _read(db, actor, "CRW-1")["status"] == "review"


def test_a_status_change_moves_the_task_to_the_end_of_its_new_column(
    db: Database, actor: Actor
) -> None:
    _task(db, actor, "Already there", status="review")
    _task(db, actor, "Mover")
    _move(db, actor, [{"taskId": "CRW-2", "status": "review"}])
    assert _read(db, actor, "CRW-2")["boardOrder"] > _read(db, actor, "CRW-1")["boardOrder"]


STATUS_REFUSALS: list[Refusal] = [
    ({"changes": []}, ValidationFailed, "changes", None),
    (
        {"changes": [{"taskId": f"CRW-{i}", "status": "done"} for i in range(201)]},
        LimitExceeded,
        "changes",
        None,
    ),
    (
        {"changes": [{"taskId": "CRW-1", "status": "finished"}]},
        ValidationFailed,
        "changes.0.status",
        STATUSES,
    ),
    ({"changes": [{"taskId": "", "status": "done"}]}, ValidationFailed, "changes.0.taskId", None),
    (
        {"changes": [{"taskId": "x" * 201, "status": "done"}]},
        LimitExceeded,
        "changes.0.taskId",
        None,
    ),
    (
        {
            "changes": [
                {"taskId": "CRW-1", "status": "done"},
                {"taskId": "CRW-1", "status": "review"},
            ]
        },
        ValidationFailed,
        "changes.1.taskId",
        None,
    ),
    ({"expected_versions": {"CRW-7": 1}}, ValidationFailed, "expectedVersions.CRW-7", None),
    ({"expected_versions": {"CRW-1": 0}}, ValidationFailed, "expectedVersions.CRW-1", None),
    ({"expected_versions": {"CRW-1": "1"}}, ValidationFailed, "expectedVersions.CRW-1", None),
    (
        {"expected_versions": {f"CRW-{i}": 1 for i in range(201)}},
        LimitExceeded,
        "expectedVersions",
        None,
    ),
]


@pytest.mark.parametrize(
    "case", STATUS_REFUSALS, ids=[f"{case[2]}-{i}" for i, case in enumerate(STATUS_REFUSALS)]
)
def test_set_task_status_refuses_bad_arguments_naming_the_field(
    db: Database, actor: Actor, case: Refusal
) -> None:
    arguments, error, field, accepted = case
    _task(db, actor, "A")
    call = {"changes": [{"taskId": "CRW-1", "status": "done"}]} | arguments
    with pytest.raises(error) as caught:
        _move(db, actor, **call)
    assert type(caught.value) is error
    assert caught.value.details["field"] == field
    assert field in caught.value.message
    if accepted is not None:
        assert caught.value.details["accepted"] == accepted
    assert _read(db, actor, "CRW-1")["status"] == "backlog"


def test_set_task_status_in_a_project_without_access_fails_the_whole_call(
    db: Database, actor: Actor, owner: User
) -> None:
    _task(db, actor, "A")
    stranger = make_user(db, "stranger@example.com")
    with pytest.raises(NotFound):
        _move(db, person_actor(stranger), [{"taskId": "CRW-1", "status": "done"}])
    with pytest.raises(PermissionDenied):
        _move(db, token_actor(db, owner, ["read"]), [{"taskId": "CRW-1", "status": "done"}])


def test_set_task_status_exact_retry_replays_and_other_arguments_conflict(
    db: Database, actor: Actor
) -> None:
    _task(db, actor, "A")
    changes = [{"taskId": "CRW-1", "status": "review"}, {"taskId": "CRW-9", "status": "done"}]
    first = _move(db, actor, changes)
    _plan(db, actor, ["CRW-1"], fields={"priority": "high"})  # the task moves on meanwhile
    again = _move(db, actor, changes)
    assert again.replayed is True
    assert again.body == first.body
    assert again.body["failed"] == 1
    assert _events(db) == 2
    with pytest.raises(IdempotencyConflict) as caught:
        _move(db, actor, [{"taskId": "CRW-1", "status": "done"}])
    assert caught.value.details["operation"] == "set_task_status"
    with pytest.raises(IdempotencyConflict):
        _plan(db, actor, ["CRW-1"], key="move-1", fields={"priority": "low"})
    assert _read(db, actor, "CRW-1")["status"] == "review"


# --- concurrency ----------------------------------------------------------------------------


def test_concurrent_update_tasks_lose_no_update(db: Database, actor: Actor) -> None:
    _task(db, actor, "A")
    _task(db, actor, "B")
    writers = 8
    start = threading.Barrier(writers)

    def label(n: int) -> str:
        start.wait(timeout=10)
        try:
            _plan(db, actor, ["CRW-1", "CRW-2"], key=f"w{n}", add_labels=[f"w{n}"])
        except RevisionConflict as refused:
            return refused.message
        return f"w{n}"

    with ThreadPoolExecutor(max_workers=writers) as pool:
        results = list(pool.map(label, range(writers)))
    applied = {name for name in results if name.startswith("w")}
    assert all("changed while this call ran" in r for r in results if r not in applied)
    assert applied  # on SQLite every writer waits its turn; on PostgreSQL some may lose a race
    for key in ("CRW-1", "CRW-2"):
        task = _read(db, actor, key)
        assert set(task["labels"]) == applied
        assert task["revision"] == 1 + len(applied)
    assert _events(db) == 2 * len(applied)


def test_a_task_changed_between_read_and_write_is_written_again_on_what_committed(
    db: Database, actor: Actor
) -> None:
    """These calls name no revision: a change committed after their read is no conflict of
    theirs, so the whole call runs again on the committed row instead of being refused."""
    if db.dialect != "postgresql":
        pytest.skip("SQLite runs one write transaction at a time: there is no race to lose")
    _task(db, actor, "A")
    _task(db, actor, "B")
    both = ["CRW-1", "CRW-2"]
    planned = _while_crw_2_changes(db, lambda: _plan(db, actor, both, fields={"priority": "high"}))
    assert [row["revision"] for row in planned.body["tasks"]] == [2, 3]
    assert _read(db, actor, "CRW-1")["priority"] == "high"
    assert _read(db, actor, "CRW-2")["priority"] == "high"
    moved = _while_crw_2_changes(
        db, lambda: _move(db, actor, [{"taskId": key, "status": "review"} for key in both])
    )
    outcomes = moved.body["outcomes"]
    assert [o["ok"] for o in outcomes] == [True, True]
    assert outcomes[1]["revision"] == 5  # the meddler's bump (4), then this move
    assert _read(db, actor, "CRW-2")["status"] == "review"


def _while_crw_2_changes(db: Database, call: Callable[[], T]) -> T:
    """Run `call` while another transaction bumps CRW-2's revision, committing it only once
    `call` has read the task and waits for the row lock to write it (bounded: 10 s)."""
    waiting = text(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + 10
    with db.engine.connect() as other, ThreadPoolExecutor(max_workers=1) as pool:
        meddling = other.begin()
        other.execute(text("UPDATE tasks SET revision = revision + 1 WHERE number = 2"))
        result = pool.submit(call)
        with db.engine.connect() as watch:
            while watch.execute(waiting).scalar_one() < 1:
                watch.rollback()
                assert time.monotonic() < deadline, "the call never reached the locked row"
        meddling.commit()
        return result.result(timeout=10)


def test_set_task_status_answer_stays_inside_the_budget_with_200_failures(
    db: Database, actor: Actor
) -> None:
    _task(db, actor, "A")
    refs = [f"tsk_{i:022d}" for i in range(199)]  # ids of the usual length, none of them real
    changes = [{"taskId": "CRW-1", "status": "done"}] + [
        {"taskId": ref, "status": "done"} for ref in refs
    ]
    body = _move(db, actor, changes).body
    assert len(json.dumps(body, separators=(",", ":")).encode()) < 48 * 1024
    assert (body["succeeded"], body["failed"]) == (1, 199)
    outcomes = body["outcomes"]
    assert outcomes[0]["ok"] is True
    assert [o["taskId"] for o in outcomes[1:]] == refs
    assert {o["error"]["code"] for o in outcomes[1:]} == {"NOT_FOUND"}
    assert outcomes[1]["error"]["details"] == {"resource": "task", "ref": refs[0]}
    assert outcomes[-1]["error"]["details"] == {}  # past the budget: the code, not the why
    assert outcomes[-1]["error"]["message"]
