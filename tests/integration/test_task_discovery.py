"""Finding work on both databases: list projections, bounded rows, cursor paging,
list_assignee_tasks and assign_task (issue 12)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text

from crewboard.domain.identity.access import Role
from crewboard.domain.models import Actor, User
from crewboard.errors import IdempotencyConflict, RevisionConflict, ValidationFailed
from crewboard.mcp.render import RESPONSE_BUDGET, compact, fit_rows
from crewboard.services.board import queries, tasks, week
from crewboard.services.board.views import LIST_FIELDS
from crewboard.services.identity.users import person_actor
from crewboard.services.projects import team
from crewboard.storage.database import Database
from tests.support.factories import grant, make_project, make_user

KEYS = iter(range(1_000_000))
ALWAYS = {"id", "projectId", "workspaceId", "historyCoverage"}


@pytest.fixture
def owner_user(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def owner(owner_user: User) -> Actor:
    return person_actor(owner_user)


@pytest.fixture
def coder(db: Database, owner: Actor) -> str:
    return str(team.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")["id"])


def new(db: Database, actor: Actor, title: str = "A task", **fields: Any) -> dict[str, Any]:
    result = tasks.create_task(
        db,
        actor,
        project=fields.pop("project", "CRW"),
        workspace_id=None,
        idempotency_key=f"k{next(KEYS)}",
        title=title,
        **fields,
    )
    return dict(result.body["task"])


def assign(
    db: Database, actor: Actor, task: dict[str, Any], revision: int, **assignment: Any
) -> dict[str, Any]:
    result = tasks.assign_task(
        db,
        actor,
        workspace_id=None,
        idempotency_key=f"k{next(KEYS)}",
        task_id=task["id"],
        expected_revision=revision,
        assignment=assignment,
    )
    return dict(result.body["task"])


def ids(rows: list[dict[str, Any]]) -> list[str]:
    return [row["id"] for row in rows]


def walk(db: Database, actor: Actor, **filters: Any) -> list[str]:
    """Every row of a listing, page by page through nextCursor, each page cut to the budget."""
    seen: list[str] = []
    cursor = None
    while True:
        page = queries.list_tasks(db, actor, cursor=cursor, **filters)
        body = page.answer(fit_rows(page.rows))
        seen += ids(body["tasks"])
        if not body["hasMore"]:
            assert body["nextCursor"] is None
            return seen
        cursor = body["nextCursor"]


# --- projections --------------------------------------------------------------------------


def test_summary_rows_leave_text_out_and_preview_rows_keep_a_description_preview(
    db: Database, owner: Actor
) -> None:
    new(db, owner, "Write the guide", description="d" * 600, brief="b" * 50, due_date="2026-03-06")
    (summary,) = queries.list_tasks(db, owner, projection="summary").rows
    assert set(summary) == ALWAYS | {
        "number",
        "key",
        "title",
        "titleTruncated",
        "status",
        "priority",
        "assigneeId",
        "assigneeType",
        "humanOwnerId",
        "dueDate",
        "startDate",
        "createdAt",
        "updatedAt",
    }
    assert (summary["key"], summary["dueDate"]) == ("CRW-1", "2026-03-06")
    (preview,) = queries.list_tasks(db, owner).rows
    assert "brief" not in preview
    assert (len(preview["description"]), preview["descriptionTruncated"]) == (500, True)
    assert preview["historyCoverage"] == "complete"


def test_rows_show_each_tasks_history_coverage_in_both_projections(
    db: Database, owner: Actor
) -> None:
    made = [new(db, owner, f"Task {n}") for n in range(3)]
    with db.engine.begin() as conn:  # as an import of older history leaves them
        for task, coverage in zip(made[1:], ("partial", "unavailable"), strict=True):
            conn.execute(
                text("UPDATE tasks SET coverage = :c WHERE id = :id"),
                {"c": coverage, "id": task["id"]},
            )
    wanted = ["complete", "partial", "unavailable"]
    for projection in ("preview", "summary"):
        rows = queries.list_tasks(db, owner, projection=projection).rows
        assert [row["historyCoverage"] for row in rows] == wanted
    rows = queries.list_tasks(db, owner, fields=["number"]).rows
    assert [row["historyCoverage"] for row in rows] == wanted


def test_fields_replace_the_projection_columns_and_summary_refuses_text_columns(
    db: Database, owner: Actor
) -> None:
    new(db, owner, "Plain")
    (row,) = queries.list_tasks(db, owner, projection="summary", fields=["status"]).rows
    assert set(row) == ALWAYS | {"status"}
    (row,) = queries.list_tasks(db, owner, fields=["brief", "startDate"]).rows
    assert set(row) == ALWAYS | {"brief", "briefTruncated", "startDate"}
    for text_field in ("brief", "description"):
        with pytest.raises(ValidationFailed) as caught:
            queries.list_tasks(db, owner, projection="summary", fields=["title", text_field])
        assert caught.value.details["field"] == "fields"
        assert text_field not in caught.value.details["accepted"]
    with pytest.raises(ValidationFailed) as caught:
        queries.list_tasks(db, owner, projection="full")
    assert caught.value.details["field"] == "projection"
    assert caught.value.details["accepted"] == ["compact", "preview", "summary"]


def test_compact_rows_carry_what_choosing_a_task_takes_and_leave_empty_columns_out(
    db: Database, owner: Actor
) -> None:
    new(db, owner, "Plain one")
    new(db, owner, "T" * 300, due_date="2026-03-06", priority="high")
    plain, long = queries.list_tasks(db, owner, projection="compact").rows
    assert plain == {
        "key": "CRW-1",
        "title": "Plain one",
        "status": "backlog",
        "priority": "medium",
        "revision": 1,
    }
    assert long == {
        "key": "CRW-2",
        "title": "T" * 240,
        "titleTruncated": True,
        "status": "backlog",
        "priority": "high",
        "dueDate": "2026-03-06",
        "revision": 1,
    }
    with db.engine.begin() as conn:  # as an import of older history leaves it
        conn.execute(text("UPDATE tasks SET coverage = 'partial' WHERE number = 1"))
    first = queries.list_tasks(db, owner, projection="compact").rows[0]
    assert first["historyCoverage"] == "partial"
    # A compact row is a projection of the preview row: the same values under the same names.
    for compact, preview in zip(
        queries.list_tasks(db, owner, projection="compact").rows,
        queries.list_tasks(db, owner, fields=["key", "title", "status", "priority", "revision"]).rows,
        strict=True,
    ):
        assert all(preview[name] == value for name, value in compact.items() if name in preview)


def test_a_compact_row_of_a_typical_task_is_under_150_characters(
    db: Database, owner: Actor
) -> None:
    """The budget behind "a board of 1,000 tasks in five pages" (200 rows a page): a
    40-character title fits 150 characters; an assignee and a due date, the two columns
    shown only when set, add 60 at most."""
    title = "Wire the export button to the job queue!"
    new(db, owner, title)
    new(db, owner, title, status="in_progress", assignee_id=owner.user_id, due_date="2026-03-06")
    plain, loaded = queries.list_tasks(db, owner, projection="compact").rows
    assert len(json.dumps(plain, separators=(",", ":"))) <= 150, plain
    assert len(json.dumps(loaded, separators=(",", ":"))) <= 210, loaded
