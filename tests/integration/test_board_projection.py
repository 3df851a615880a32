"""The whole board in few calls (list_tasks' board projection) and how the board looks in one
(get_board_summary), on both databases (issue 42)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import text

from crewboard.contract.board.summary import board_summary_view
from crewboard.contract.projects import present
from crewboard.contract.reply import RESPONSE_BUDGET, compact, fit_rows
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.board import summary, tasks
from crewboard.services.board.queries import MAX_BOARD_LIST
from crewboard.services.board.views import BOARD_COLUMNS, BOARD_ROW_CHARS, FIELD_COLUMNS
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import task_reads as queries
from tests.support.factories import make_project, make_user

KEYS = iter(range(1_000_000))
# Titles as the peers workload makes them: a verb, a noun, an area and the number.
TITLE = "Refactor the invoice exporter in billing {n}"


@pytest.fixture
def owner_user(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def owner(owner_user: User) -> Actor:
    return person_actor(owner_user)


def new(db: Database, actor: Actor, title: str = "A task", **fields: Any) -> dict[str, Any]:
    result = tasks.create_task(
        db,
        actor,
        project="CRW",
        workspace_id=None,
        idempotency_key=f"k{next(KEYS)}",
        title=title,
        **fields,
    )
    return dict(result.body["task"])


def many(db: Database, count: int) -> None:
    """`count` tasks at once in SQL, as a big board has them (the service takes ~3 ms each)."""
    with db.engine.begin() as conn:
        project_id, start = conn.execute(
            text("SELECT p.id, count(t.id) FROM projects p LEFT JOIN tasks t ON t.project_id = p.id "
                 "WHERE p.key = 'CRW' GROUP BY p.id")
        ).one()  # fmt: skip
        conn.execute(
            text(
                "INSERT INTO tasks (id, project_id, number, title, description, brief, type, "
                "status, priority, tags, labels, context_refs, context_item_ids, "
                "external_reference_ids, board_order, revision, coverage, created_by, "
                "updated_by, created_at, updated_at) VALUES (:id, :project_id, :number, :title, "
                "'', '', 'development', :status, 'medium', :tags, '[]', '[]', '[]', '[]', :number, "
                "1, 'complete', '{}', '{}', :at, :at)"
            ),
            [
                {
                    "id": f"tsk_bulk{start + n}",
                    "project_id": project_id,
                    "number": start + n,
                    "title": TITLE.format(n=start + n),
                    "status": ("backlog", "in_progress", "done")[n % 3],
                    "tags": json.dumps(["billing"] if n % 2 else []),
                    "at": "2026-03-01 09:00:00.000000",
                }
                for n in range(1, count + 1)
            ],
        )
        conn.execute(
            text("UPDATE project_sequences SET value = value + :n WHERE project_id = :p "
                 "AND name = 'task_count'"),
            {"n": count, "p": project_id},
        )  # fmt: skip


def read_whole_board(db: Database, actor: Actor, **filters: Any) -> tuple[list[list[Any]], int]:
    """Every row of the board projection, 500 a page through nextCursor, each answer cut to
    the budget as the doors cut it; and how many calls it took."""
    rows: list[list[Any]] = []
    calls, cursor = 0, None
    while True:
        listed = queries.list_tasks(
            db, actor, projection="board", limit=MAX_BOARD_LIST, cursor=cursor, **filters
        )
        body = listed.answer(fit_rows(listed.rows))
        calls += 1
        assert len(compact(body).encode()) <= RESPONSE_BUDGET
        assert body["columns"] == list(BOARD_COLUMNS)
        rows += body["tasks"]
        if not body["hasMore"]:
            return rows, calls
        cursor = body["nextCursor"]


# --- the board projection -----------------------------------------------------------------


def test_a_board_row_is_a_short_array_of_key_title_status_assignee_tags_priority_due(
    db: Database, owner: Actor
) -> None:
    coder = present.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")
    new(db, owner, "Plain")
    new(
        db,
        owner,
        "A title that goes on well past forty-eight characters in all",
        assignee_id=coder["id"],
        tags=["billing", "export", "urgent-customer-ask", "q3"],
        priority="high",
        due_date="2026-03-06",
    )
    new(db, owner, "Mine", assignee_id=owner.user_id, tags=["t" * 40])
    listed = queries.list_tasks(db, owner, projection="board")
    body = listed.answer(listed.rows)
    assert body["columns"] == ["key", "title", "status", "assignee", "tags", "priority", "due"]
    plain, loaded, mine = body["tasks"]
    assert plain == ["CRW-1", "Plain", "backlog", None, [], "medium", None]
    # Whole tags while they fit 16 characters, then how many more. The title takes the room
    # the rest of the row leaves of BOARD_ROW_CHARS, cut ending in "…", but keeps at least 32
    # characters: this row, with every column set, is crowded down to that.
    assert loaded == [
        "CRW-2",
        "A title that goes on well past…",
        "backlog",
        "Coder",
        ["billing", "export", "+2"],
        "high",
        "2026-03-06",
    ]
    assert len(compact(loaded)) > BOARD_ROW_CHARS
    assert mine == ["CRW-3", "Mine", "backlog", "owner", ["t" * 15 + "…"], "medium", None]
    assert len(compact(plain)) <= BOARD_ROW_CHARS
    assert len(compact(mine)) <= BOARD_ROW_CHARS


def test_a_title_takes_the_room_the_row_leaves_and_keeps_at_least_32_characters(
    db: Database, owner: Actor
) -> None:
    crowded = ["a-long-tag-name", "another-one", "and-more"]
    new(db, owner, "x" * 80, tags=crowded, due_date="2026-03-06", status="ready_for_ai")
    new(db, owner, "y" * 80)
    crowded_row, roomy_row = queries.list_tasks(db, owner, projection="board").rows
    assert crowded_row[1] == "x" * 31 + "…"
    assert roomy_row[1].endswith("…")
    assert len(compact(roomy_row)) == BOARD_ROW_CHARS


def test_a_thousand_tasks_come_in_at_most_three_calls_each_once_in_order(
    db: Database, owner: Actor
) -> None:
    many(db, 1000)
    rows, calls = read_whole_board(db, owner)
    assert calls <= 3
    assert [row[0] for row in rows] == [f"CRW-{n}" for n in range(1, 1001)]
    assert all(len(compact(row)) <= BOARD_ROW_CHARS for row in rows)
    # Filters apply as to any projection: the done column alone.
    done, _ = read_whole_board(db, owner, statuses=["done"])
    assert {row[2] for row in done} == {"done"}
    assert len(done) == 333


def test_five_thousand_tasks_come_in_at_most_twelve_calls(db: Database, owner: Actor) -> None:
    many(db, 5000)
    rows, calls = read_whole_board(db, owner)
    assert len(rows) == 5000
    assert calls <= 12


def test_only_the_board_projection_takes_pages_over_200_and_it_carries_no_text(
    db: Database, owner: Actor
) -> None:
    new(db, owner)
    for projection in ("compact", "preview", "summary"):
        with pytest.raises(ValidationFailed) as caught:
            queries.list_tasks(db, owner, projection=projection, limit=201)
        assert caught.value.details["field"] == "limit"
        assert "projection board takes up to 500" in str(caught.value)
    with pytest.raises(ValidationFailed) as caught:
        queries.list_tasks(db, owner, projection="board", limit=501)
    assert caught.value.details["field"] == "limit"
    with pytest.raises(ValidationFailed) as caught:
        queries.list_tasks(db, owner, projection="board", include_details=True)
    assert caught.value.details["field"] == "includeDetails"
    # Named columns replace the board's as they replace any projection's.
    (row,) = queries.list_tasks(db, owner, projection="board", fields=["status"]).rows
    assert row == {"key": "CRW-1", "status": "backlog"}


# --- the board summary --------------------------------------------------------------------


def test_the_summary_counts_columns_and_assignees_and_lists_the_oldest_and_the_held_up(
    db: Database, owner: Actor
) -> None:
    coder = present.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")
    blocker = new(db, owner, "Blocker", assignee_id=coder["id"], status="in_progress")
    waiting = new(db, owner, "Waits on the blocker", blocked_by_task_ids=[blocker["id"]])
    new(db, owner, "Stuck", status="blocked", assignee_id=owner.user_id)
    new(db, owner, "Late", due_date="2020-01-01", assignee_id=coder["id"])
    new(db, owner, "Finished", status="done", due_date="2020-01-01")
    with db.engine.begin() as conn:  # the waiting task was last touched long ago
        conn.execute(
            text("UPDATE tasks SET updated_at = :at WHERE id = :id"),
            {"at": "2025-01-01 00:00:00.000000", "id": waiting["id"]},
        )
    body = board_summary_view(summary.board_summary(db, owner, project="CRW"))
    assert body["project"] == "CRW"
    assert body["total"] == 5
    assert body["columns"] == {
        "backlog": 2,
        "ready_for_ai": 0,
        "in_progress": 1,
        "blocked": 1,
        "review": 0,
        "approved": 0,
        "done": 1,
    }
    assert (body["open"], body["overdue"], body["unassignedOpen"]) == (4, 1, 1)
    assert body["assignees"] == [
        {
            "id": coder["id"],
            "name": "Coder",
            "open": 2,
            "byStatus": {"backlog": 1, "in_progress": 1},
        },
        {
            "id": owner.user_id,
            "name": "owner",
            "open": 1,
            "byStatus": {"blocked": 1},
        },
    ]
    assert body["assigneesTotal"] == 2
    assert body["oldest"][0]["key"] == "CRW-2"
    assert "CRW-5" not in [t["key"] for t in body["oldest"]]  # done is not waiting
    assert [(t["key"], t["blockedBy"]) for t in body["blocked"]] == [
        ("CRW-2", ["CRW-1"]),
        ("CRW-3", []),
    ]
    assert body["blockedTotal"] == 2
    assert len(compact(body)) < 2000
    # Once the blocker is done, the task that waited on it is no longer held up.
    with db.engine.begin() as conn:
        conn.execute(text("UPDATE tasks SET status = 'done' WHERE id = :id"), {"id": blocker["id"]})
    after = board_summary_view(summary.board_summary(db, owner, project="CRW"))
    assert [(t["key"], t["blockedBy"]) for t in after["blocked"]] == [("CRW-3", [])]


def test_the_summary_of_a_big_board_stays_small(db: Database, owner: Actor) -> None:
    many(db, 1000)
    body = board_summary_view(summary.board_summary(db, owner, project="CRW"))
    assert body["total"] == 1000
    assert body["columns"]["done"] == 333
    assert body["open"] == 667
    assert len(body["oldest"]) == summary.OLDEST
    assert len(compact(body)) < 4000


def test_the_summary_of_a_project_one_cannot_see_is_not_found(db: Database, owner: Actor) -> None:
    stranger = person_actor(make_user(db, "stranger@example.com"))
    with pytest.raises(NotFound):
        summary.board_summary(db, stranger, project="CRW")


# --- rows of named fields -----------------------------------------------------------------


def test_named_columns_read_from_the_table_word_each_value_as_the_whole_task_does(
    db: Database, owner: Actor
) -> None:
    coder = present.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")
    parent = new(db, owner, "Parent")
    new(
        db,
        owner,
        "T" * 300,
        parent_task_id=parent["id"],
        assignee_id=coder["id"],
        human_owner_id=owner.user_id,
        tags=["Billing", "export"],
        labels=["q3"],
        due_date="2026-03-06",
        start_date="2026-03-02",
        priority="high",
        type="research",
        status="ready_for_ai",
    )
    for name in FIELD_COLUMNS:
        # blockedByTaskIds is no column: asking for it too reads whole tasks.
        whole = queries.list_tasks(db, owner, fields=[name, "blockedByTaskIds"]).rows
        quick = queries.list_tasks(db, owner, fields=[name]).rows
        assert quick == [
            {k: v for k, v in row.items() if k != "blockedByTaskIds"} for row in whole
        ], name
        assert set(quick[1]) <= {"key", name, f"{name}Truncated"}, name
    # A text search's page (which counts its matches in the same query) reads the same way.
    rows = queries.list_tasks(db, owner, fields=["title", "revision"], q="parent").rows
    assert rows == [{"key": "CRW-1", "title": "Parent", "revision": 1}]


def test_the_summary_lists_at_most_ten_held_up_tasks_and_twenty_assignees_counting_all(
    db: Database, owner: Actor
) -> None:
    many(db, 60)
    with db.engine.begin() as conn:  # 12 in the blocked column, 25 assignees of one task each
        conn.execute(text("UPDATE tasks SET status = 'blocked' WHERE number <= 12"))
        conn.execute(
            text(
                "UPDATE tasks SET assignee_id = 'rol_gone' || number, status = 'backlog' "
                "WHERE number BETWEEN 13 AND 37"
            )
        )
    body = board_summary_view(summary.board_summary(db, owner, project="CRW"))
    assert (len(body["blocked"]), body["blockedTotal"]) == (summary.BLOCKED, 12)
    assert [t["key"] for t in body["blocked"]] == [f"CRW-{n}" for n in range(1, 11)]
    assert (len(body["assignees"]), body["assigneesTotal"]) == (summary.ASSIGNEES, 25)
    assert body["assignees"][0]["name"] == body["assignees"][0]["id"]  # no longer on a team
