"""Finding work on both databases: list projections, bounded rows, cursor paging,
list_assignee_tasks and assign_task (issue 12)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text

from crewboard.contract.projects import present
from crewboard.contract.reply import RESPONSE_BUDGET, compact, fit_rows
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import IdempotencyConflict, RevisionConflict, ValidationFailed
from crewboard.services.board import task_updates, tasks, week
from crewboard.services.board.views import LIST_FIELDS
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import task_reads as queries
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
    return str(present.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")["id"])


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
    result = task_updates.assign_task(
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
    """Each row's task: its id, or its key in a row of named columns (which has no id)."""
    return [row["id"] if "id" in row else row["key"] for row in rows]


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
    # Named columns are all a row carries: the coverage is the projections' (and get_task's).
    rows = queries.list_tasks(db, owner, fields=["number"]).rows
    assert rows == [{"key": f"CRW-{n}", "number": n} for n in (1, 2, 3)]


def test_fields_replace_the_projection_columns_and_summary_refuses_text_columns(
    db: Database, owner: Actor
) -> None:
    new(db, owner, "Plain")
    (row,) = queries.list_tasks(db, owner, projection="summary", fields=["status"]).rows
    assert row == {"key": "CRW-1", "status": "backlog"}  # the named columns and the key
    (row,) = queries.list_tasks(db, owner, fields=["brief", "startDate"]).rows
    assert row == {"key": "CRW-1", "brief": "", "startDate": None}  # no flag: nothing was cut
    for text_field in ("brief", "description"):
        with pytest.raises(ValidationFailed) as caught:
            queries.list_tasks(db, owner, projection="summary", fields=["title", text_field])
        assert caught.value.details["field"] == "fields"
        assert text_field not in caught.value.details["accepted"]
    with pytest.raises(ValidationFailed) as caught:
        queries.list_tasks(db, owner, projection="full")
    assert caught.value.details["field"] == "projection"
    assert caught.value.details["accepted"] == ["compact", "preview", "summary", "board"]


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
    for lean, preview in zip(
        queries.list_tasks(db, owner, projection="compact").rows,
        queries.list_tasks(
            db, owner, fields=["key", "title", "status", "priority", "revision"]
        ).rows,
        strict=True,
    ):
        assert all(preview[name] == value for name, value in lean.items() if name in preview)


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


# --- bounded rows -------------------------------------------------------------------------


def test_titles_are_cut_to_240_and_briefs_and_descriptions_to_500_in_rows(
    db: Database, owner: Actor
) -> None:
    long = new(db, owner, "t" * 300, brief="b" * 501, description="d" * 500)
    short = new(db, owner, "t" * 240, brief="b" * 500)
    rows = queries.list_tasks(db, owner, fields=["title", "brief", "description"]).rows
    assert [len(row["title"]) for row in rows] == [240, 240]
    # Rows of named columns flag a text only when it was cut.
    assert [row.get("titleTruncated") for row in rows] == [True, None]
    assert [len(row["brief"]) for row in rows] == [500, 500]
    assert [row.get("briefTruncated") for row in rows] == [True, None]
    assert [row.get("descriptionTruncated") for row in rows] == [None, None]
    assert [row["key"] for row in rows] == [long["key"], short["key"]]
    preview = queries.list_tasks(db, owner, projection="preview").rows
    assert [row["descriptionTruncated"] for row in preview] == [False, False]
    summary = queries.list_tasks(db, owner, projection="summary").rows
    assert [row["titleTruncated"] for row in summary] == [True, False]


def test_a_200000_character_brief_is_cut_in_rows_so_the_page_fits_the_budget(
    db: Database, owner: Actor
) -> None:
    new(db, owner, "Huge", brief="é" * 200_000, description="ü" * 200_000)
    page = queries.list_tasks(db, owner, fields=list(LIST_FIELDS))
    body = page.answer(fit_rows(page.rows))
    (row,) = body["tasks"]
    assert (len(row["brief"]), row["briefTruncated"]) == (500, True)
    assert (len(row["description"]), row["descriptionTruncated"]) == (500, True)
    assert len(compact(body).encode()) <= RESPONSE_BUDGET


def test_a_page_cut_by_the_budget_continues_at_the_first_row_it_left_out(
    db: Database, owner: Actor
) -> None:
    for n in range(45):
        new(db, owner, f"{n:03d} " + "t" * 290, brief="é" * 600, description="ü" * 600)
    columns = ["title", "brief", "description"]
    page = queries.list_tasks(db, owner, fields=columns, limit=200)
    first = page.answer(fit_rows(page.rows))
    shown = len(first["tasks"])
    assert 0 < shown < 45
    assert len(compact(first).encode()) <= RESPONSE_BUDGET
    assert (first["hasMore"], first["nextOffset"], first["total"]) == (True, shown, 45)
    after = queries.list_tasks(db, owner, fields=columns, limit=200, cursor=first["nextCursor"])
    assert after.rows[0]["key"] == page.rows[shown]["key"]
    assert walk(db, owner, fields=columns, limit=200) == ids(
        queries.list_tasks(db, owner, limit=200, fields=["number"]).rows
    )


# --- cursors ------------------------------------------------------------------------------


def test_cursor_pages_over_several_projects_equal_the_offset_listing(
    db: Database, owner_user: User, owner: Actor
) -> None:
    make_project(db, owner_user, "OTH")
    for n in range(7):
        new(db, owner, f"Ours {n}", status="ready_for_ai" if n % 3 else "backlog")
        if n < 5:  # numbers 1-5 exist in both projects: ties the order must still settle
            new(db, owner, f"Theirs {n}", project="OTH", status="ready_for_ai")
    for filters in (
        {},
        {"order": "desc"},
        {"statuses": ["ready_for_ai"]},
        {"q": "ours"},
        {"project": "OTH", "order": "desc"},
    ):
        whole = queries.list_tasks(db, owner, limit=200, **filters)
        by_offset = ids(whole.rows)
        assert len(by_offset) == whole.total
        assert walk(db, owner, limit=2, **filters) == by_offset, filters
        offsets: list[str] = []
        for start in range(0, whole.total, 3):
            offsets += ids(queries.list_tasks(db, owner, limit=3, offset=start, **filters).rows)
        assert offsets == by_offset, filters


def test_each_cursor_page_reports_the_total_and_the_next_offset(db: Database, owner: Actor) -> None:
    for n in range(5):
        new(db, owner, f"Redirect {n}")
    for filters in ({}, {"q": "redirect"}):
        first = queries.list_tasks(db, owner, limit=2, **filters)
        body = first.answer(first.rows)
        assert (body["total"], body["nextOffset"], body["hasMore"]) == (5, 2, True)
        second = queries.list_tasks(db, owner, limit=2, cursor=body["nextCursor"], **filters)
        body = second.answer(second.rows)
        assert (body["total"], body["nextOffset"], body["hasMore"]) == (5, 4, True)
        last = queries.list_tasks(db, owner, limit=2, cursor=body["nextCursor"], **filters)
        body = last.answer(last.rows)
        assert (body["total"], body["nextOffset"], body["nextCursor"]) == (5, None, None)
        assert body["hasMore"] is False


def test_a_cursor_is_refused_with_other_filters_another_caller_or_an_offset(
    db: Database, owner_user: User, owner: Actor, coder: str
) -> None:
    reader = make_user(db, "reader@example.com")
    grant(db, owner_user, "CRW", reader, Role.READ)
    for n in range(4):
        new(db, owner, f"Task {n}", assignee_id=coder, tags=["api"])
    base = {"project": "CRW", "tag": "API", "statuses": ["backlog"]}
    page = queries.list_tasks(db, owner, limit=1, **base)
    cursor = page.answer(page.rows)["nextCursor"]
    # The same filters, normalised, go on; so do another page size, projection and columns.
    same = {"project": "CRW", "tag": "api", "statuses": ["backlog", "backlog"]}
    for more in ({}, {"limit": 3, "projection": "summary"}, {"fields": ["title"]}):
        assert queries.list_tasks(db, owner, cursor=cursor, **same, **more).rows
    refusals: list[tuple[Actor, dict[str, Any]]] = [
        (owner, {**base, "tag": "web"}),
        (owner, {**base, "statuses": ["review"]}),
        (owner, {**base, "order": "desc"}),
        (owner, {**base, "q": "task"}),
        (owner, {**base, "assignee": coder}),
        (owner, {**base, "updated_since": datetime(2026, 1, 1, tzinfo=UTC)}),
        (owner, {"tag": "API", "statuses": ["backlog"]}),
        (person_actor(reader), base),
    ]
    for actor, filters in refusals:
        with pytest.raises(ValidationFailed) as caught:
            queries.list_tasks(db, actor, cursor=cursor, **filters)
        assert caught.value.details["field"] == "cursor", filters
    with pytest.raises(ValidationFailed) as caught:
        queries.list_tasks(db, owner, cursor=cursor, offset=1, **base)
    assert caught.value.details["field"] == "offset"


def test_garbage_edited_and_older_cursors_are_refused_naming_the_cursor(
    db: Database, owner: Actor
) -> None:
    for n in range(3):
        new(db, owner, f"Task {n}")
    page = queries.list_tasks(db, owner, limit=1)
    cursor = page.answer(page.rows)["nextCursor"]
    kind, number, project_id, offset, digest = json.loads(_decode(cursor))
    edited = [
        [kind, number + 1, project_id, offset, digest],  # skipping ahead by hand
        ["tasks.0", number, project_id, offset, digest],  # a format no longer read
        [kind, "1", project_id, offset, digest],
        [kind, number, project_id, digest],
        {"kind": kind},
    ]
    event_page = week.list_task_events(db, owner, project="CRW", task="CRW-1")
    from_events = event_page.cursor_after(1)
    for garbage in ("nonsense", "", "!!!", cursor[:-3], from_events, *map(_encode, edited)):
        with pytest.raises(ValidationFailed) as caught:
            queries.list_tasks(db, owner, limit=1, cursor=garbage)
        assert caught.value.details["field"] == "cursor", garbage


def _decode(cursor: str) -> str:
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()


def _encode(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


# --- list_assignee_tasks ------------------------------------------------------------------


def test_list_assignee_tasks_lists_only_that_assignees_tasks(
    db: Database, owner: Actor, coder: str
) -> None:
    mine = new(db, owner, "Mine", assignee_id=owner.user_id)
    coded = [new(db, owner, f"Code {n}", assignee_id=coder) for n in range(3)]
    new(db, owner, "Nobody's")
    page = queries.list_assignee_tasks(db, owner, assignee=coder, projection="summary")
    assert ids(page.rows) == ids(coded)
    assert {row["assigneeId"] for row in page.rows} == {coder}
    assert ids(queries.list_assignee_tasks(db, owner, assignee="me").rows) == [mine["id"]]
    assert ids(queries.list_assignee_tasks(db, owner, assignee=owner.user_id).rows) == [mine["id"]]
    first = queries.list_assignee_tasks(db, owner, assignee=coder, limit=2, order="desc")
    cursor = first.answer(first.rows)["nextCursor"]
    rest = queries.list_assignee_tasks(db, owner, assignee=coder, order="desc", cursor=cursor)
    assert ids(first.rows) + ids(rest.rows) == ids(coded)[::-1]
    narrowed = queries.list_assignee_tasks(db, owner, assignee=coder, statuses=["review"])
    assert narrowed.rows == []


@pytest.mark.parametrize("assignee", ["none", "bob", "", "ROL_x"])
def test_list_assignee_tasks_refuses_anything_but_a_role_a_user_or_me(
    db: Database, owner: Actor, assignee: str
) -> None:
    with pytest.raises(ValidationFailed) as caught:
        queries.list_assignee_tasks(db, owner, assignee=assignee)
    assert caught.value.details["field"] == "assigneeId"


# --- assign_task --------------------------------------------------------------------------


def test_assign_task_keeps_the_assignee_and_the_human_owner_apart(
    db: Database, owner: Actor, coder: str
) -> None:
    task = new(db, owner, "Build it")
    given = assign(db, owner, task, 1, assignee_id=coder)
    assert (given["assigneeId"], given["assigneeType"], given["humanOwnerId"]) == (
        coder,
        "ai",
        None,
    )
    owned = assign(db, owner, task, 2, human_owner_id=owner.user_id)
    assert (owned["assigneeId"], owned["humanOwnerId"], owned["revision"]) == (
        coder,
        owner.user_id,
        3,
    )
    cleared = assign(db, owner, task, 3, assignee_id=None)
    assert (cleared["assigneeId"], cleared["assigneeType"]) == (None, None)
    assert cleared["humanOwnerId"] == owner.user_id
    unowned = assign(db, owner, task, 4, human_owner_id=None)
    assert unowned["humanOwnerId"] is None
    events = week.list_task_events(db, owner, task=task["id"], event_types=["assignment_changed"])
    assert [(e["data"]["toAssigneeId"], e["data"]["toHumanOwnerId"]) for e in events.events] == [
        (coder, None),
        (coder, owner.user_id),
        (None, owner.user_id),
        (None, None),
    ]


def test_assign_task_refuses_a_stale_revision_naming_the_current_one(
    db: Database, owner: Actor, coder: str
) -> None:
    task = new(db, owner)
    assign(db, owner, task, 1, assignee_id=coder)
    with pytest.raises(RevisionConflict) as caught:
        assign(db, owner, task, 1, assignee_id=None)
    assert caught.value.details["currentRevision"] == 2


def test_assign_task_checks_the_assignment_as_update_task_does(
    db: Database, owner: Actor, coder: str
) -> None:
    task = new(db, owner)
    for assignment, field in (
        ({}, "assigneeId"),
        ({"assignee_id": "rol_nope"}, "assigneeId"),
        ({"assignee_id": owner.user_id, "assignee_type": "ai"}, "assigneeType"),
        ({"assignee_id": coder, "assignee_type": "human"}, "assigneeType"),
        ({"human_owner_id": "usr_stranger"}, "humanOwnerId"),
        ({"status": "done"}, "status"),
    ):
        with pytest.raises(ValidationFailed) as caught:
            assign(db, owner, task, 1, **assignment)
        assert caught.value.details["field"] == field, assignment


def test_assign_task_replays_an_exact_retry_and_keys_its_own_calls(
    db: Database, owner: Actor, coder: str
) -> None:
    task = new(db, owner)
    call = {
        "workspace_id": None,
        "idempotency_key": "assign-1",
        "task_id": task["id"],
        "expected_revision": 1,
    }
    first = task_updates.assign_task(db, owner, **call, assignment={"assignee_id": coder})
    again = task_updates.assign_task(db, owner, **call, assignment={"assignee_id": coder})
    assert (again.replayed, again.body) == (True, first.body)
    with pytest.raises(IdempotencyConflict):
        task_updates.assign_task(db, owner, **call, assignment={"assignee_id": None})
    with pytest.raises(IdempotencyConflict):  # the same key on update_task is another write
        task_updates.update_task(db, owner, project=None, patch={"assignee_id": coder}, **call)
