"""The board's core use cases on both databases: create, update, read, list, search."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from crewboard.contract.projects import present
from crewboard.contract.projects.present import create_project, set_project_member
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor
from crewboard.errors import (
    IdempotencyConflict,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    RevisionConflict,
    ValidationFailed,
)
from crewboard.services.board import task_updates, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import task_reads as task_queries
from tests.support.factories import count_rows, make_project, make_task, make_user

KEYS = iter(range(1_000_000))


@pytest.fixture
def owner(db: Database) -> Actor:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return person_actor(user)


def new(db: Database, actor: Actor, title: str = "A task", **fields: object) -> dict:  # type: ignore[type-arg]
    result = tasks.create_task(
        db,
        actor,
        project="CRW",
        workspace_id=None,
        idempotency_key=f"k{next(KEYS)}",
        title=title,
        **fields,
    )
    return result.body["task"]  # type: ignore[no-any-return]


def listed(db: Database, actor: Actor, **filters: object) -> tuple[list, int]:  # type: ignore[type-arg]
    """list_tasks' rows and total."""
    page = task_queries.list_tasks(db, actor, **filters)  # type: ignore[arg-type]
    return page.rows, page.total


def patch(db: Database, actor: Actor, task: dict, revision: int, **changes: object) -> dict:  # type: ignore[type-arg]
    result = task_updates.update_task(
        db,
        actor,
        project="CRW",
        workspace_id=None,
        idempotency_key=f"k{next(KEYS)}",
        task_id=task["id"],
        expected_revision=revision,
        patch=changes,
    )
    return result.body["task"]  # type: ignore[no-any-return]


def test_tasks_get_project_local_numbers_and_keys(db: Database, owner: Actor) -> None:
    first, second = new(db, owner), new(db, owner)
    assert (first["number"], first["key"], first["revision"]) == (1, "CRW-1", 1)
    assert (second["number"], second["key"]) == (2, "CRW-2")
    found = task_queries.get_task(db, owner, task="CRW-2")
    assert isinstance(found, dict)
    assert found["task"]["id"] == second["id"]
    by_number = task_queries.get_task(db, owner, number=1, project="CRW")
    assert isinstance(by_number, dict)
    assert by_number["task"]["id"] == first["id"]


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("status", "finished", ValidationFailed),
        ("priority", "urgent", ValidationFailed),
        ("type", "cooking", ValidationFailed),
        ("assignee_type", "robot", ValidationFailed),
        ("tags", [f"t{i}" for i in range(21)], LimitExceeded),
        ("tags", ["x" * 49], LimitExceeded),
        ("description", "x" * 200_001, LimitExceeded),
        ("due_date", "next tuesday", ValidationFailed),
        ("story_points", 1001, ValidationFailed),
        ("blocked_by_task_ids", [f"tsk_{i}" for i in range(201)], LimitExceeded),
        ("output_destination", "x" * 201, LimitExceeded),
    ],
)
def test_bad_fields_are_refused_naming_the_field(
    db: Database, owner: Actor, field: str, value: object, error: type[Exception]
) -> None:
    with pytest.raises(error) as caught:
        new(db, owner, **{field: value})
    details = caught.value.details  # type: ignore[attr-defined]
    camel = field.split("_", maxsplit=1)[0] + "".join(p.title() for p in field.split("_")[1:])
    assert details["field"] == camel
    if error is ValidationFailed and field in ("status", "priority", "type", "assignee_type"):
        assert details["accepted"]
    assert count_rows(db, "tasks") == 0


def test_a_title_over_300_characters_is_refused(db: Database, owner: Actor) -> None:
    with pytest.raises(LimitExceeded):
        new(db, owner, title="t" * 301)
    assert new(db, owner, title="t" * 300)["title"] == "t" * 300


def test_ai_tasks_name_an_ai_role_and_in_progress_names_someone(db: Database, owner: Actor) -> None:
    with pytest.raises(ValidationFailed) as ai:
        new(db, owner, assignee_type="ai")
    assert ai.value.details["field"] == "assigneeId"
    with pytest.raises(ValidationFailed) as doing:
        new(db, owner, status="in_progress")
    assert doing.value.details["field"] == "assigneeId"
    coder = present.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")
    task = new(db, owner, status="in_progress", assignee_id=coder["id"])
    assert (task["assigneeType"], task["assigneeId"]) == ("ai", coder["id"])
    mine = new(db, owner, assignee_id=owner.user_id)
    assert mine["assigneeType"] == "human"
    with pytest.raises(ValidationFailed):
        new(db, owner, assignee_id="rol_nope")
    with pytest.raises(ValidationFailed):
        new(db, owner, assignee_id=owner.user_id, assignee_type="ai")


def test_get_task_names_the_model_effort_and_rank_its_assigned_role_asks_for(
    db: Database, owner: Actor
) -> None:
    coder = present.add_team_role(
        db, owner, project="CRW", name="Coder", kind="ai", model="gpt-5", effort="high", rank=2
    )
    task = new(db, owner, assignee_id=coder["id"])
    found = task_queries.get_task(db, owner, task=task["id"])
    assert isinstance(found, dict)
    assert found["assigneeRole"] == {
        "id": coder["id"],
        "name": "Coder",
        "kind": "ai",
        "model": "gpt-5",
        "effort": "high",
        "rank": 2,
    }
    brief = task_queries.get_task(db, owner, task=task["id"], format="agent_brief")
    assert isinstance(brief, str)
    assert "Assigned to: Coder (ai role); run it on gpt-5 at high effort, rank 2" in brief
    plain = task_queries.get_task(db, owner, task=new(db, owner, title="Nobody's")["id"])
    assert isinstance(plain, dict)
    assert plain["assigneeRole"] is None


def test_an_agent_token_cannot_approve(db: Database, owner: Actor) -> None:
    coder = present.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")
    user = make_user(db, "robot-owner@example.com")
    set_project_member(db, owner, project="CRW", email=user.email, role="write")
    issued = tokens.issue_token(
        db, person_actor(user), kind="agent", scopes=["read", "tasks.manage"], project="CRW"
    )
    agent = tokens.authenticate_token(db, issued.secret)
    task = new(db, agent, assignee_id=coder["id"])
    with pytest.raises(PermissionDenied) as caught:
        patch(db, agent, task, 1, status="approved")
    assert caught.value.details["status"] == "approved"
    with pytest.raises(PermissionDenied):
        new(db, agent, status="approved")
    assert patch(db, owner, task, 1, status="approved")["status"] == "approved"


def test_a_stale_revision_names_the_current_one_who_and_when(
    db: Database, owner: Actor, clock: ManualClock
) -> None:
    task = new(db, owner)
    clock.advance(timedelta(minutes=5))
    patch(db, owner, task, 1, title="Renamed")
    with pytest.raises(RevisionConflict) as caught:
        patch(db, owner, task, 1, title="Mine")
    details = caught.value.details
    assert details["currentRevision"] == 2
    assert details["updatedBy"]["userId"] == owner.user_id
    assert details["updatedAt"] == clock.now().isoformat()


def test_update_changes_only_the_patch_and_null_clears(db: Database, owner: Actor) -> None:
    task = new(db, owner, due_date="2026-03-04", tags=["ux"], brief="do it")
    changed = patch(db, owner, task, 1, due_date=None, priority="high")
    assert (changed["dueDate"], changed["priority"], changed["tags"], changed["brief"]) == (
        None,
        "high",
        ["ux"],
        "do it",
    )
    assert changed["revision"] == 2
    with pytest.raises(ValidationFailed) as unknown:
        patch(db, owner, changed, 2, colour="red")
    assert unknown.value.details["field"] == "patch.colour"
    with pytest.raises(ValidationFailed):
        patch(db, owner, changed, 2, title=None)


def test_keyed_writes_replay_and_conflict(db: Database, owner: Actor) -> None:
    args = {"project": "CRW", "workspace_id": None, "idempotency_key": "once", "title": "Once"}
    first = tasks.create_task(db, owner, **args)  # type: ignore[arg-type]
    again = tasks.create_task(db, owner, **args)  # type: ignore[arg-type]
    assert again.replayed
    assert again.body == first.body
    with pytest.raises(IdempotencyConflict) as caught:
        tasks.create_task(db, owner, **{**args, "title": "Twice"})  # type: ignore[arg-type]
    assert caught.value.details["resourceId"] == first.body["task"]["id"]
    assert count_rows(db, "tasks") == 1


def test_relationships_show_the_inverse_on_the_other_task(db: Database, owner: Actor) -> None:
    blocker = new(db, owner, title="Blocker")
    blocked = new(db, owner, title="Blocked", blocked_by_task_ids=[blocker["id"]])
    assert blocked["blockedByNumbers"] == [1]
    other = task_queries.get_task(db, owner, task=blocker["id"])
    assert isinstance(other, dict)
    assert other["relationships"] == [{"type": "blocks", "taskId": blocked["id"], "number": 2}]
    cleared = patch(db, owner, blocked, 1, blocked_by_task_ids=[])
    assert cleared["relationships"] == []
    with pytest.raises(ValidationFailed):
        new(db, owner, blocked_by_task_ids=["tsk_unknown"])


def test_keys_name_parents_and_blockers_wherever_ids_do(db: Database, owner: Actor) -> None:
    parent = new(db, owner, title="Parent")
    blocker = new(db, owner, title="Blocker")
    child = new(db, owner, title="Child", parent_task_id="CRW-1", blocked_by_task_ids=["crw-2"])
    assert child["parentTaskId"] == parent["id"]
    assert child["blockedByTaskIds"] == [blocker["id"]]
    # A key and the id of the same task are one blocker, not two.
    twice = new(db, owner, title="Twice", blocked_by_task_ids=["CRW-2", blocker["id"]])
    assert twice["blockedByTaskIds"] == [blocker["id"]]
    moved = patch(db, owner, twice, 1, parent_task_id="CRW-3", blocked_by_task_ids=["CRW-1"])
    assert (moved["parentTaskId"], moved["blockedByTaskIds"]) == (child["id"], [parent["id"]])
    rows, total = listed(db, owner, parent_task_id="CRW-1")
    assert (total, [r["id"] for r in rows]) == (1, [child["id"]])
    rows, total = listed(db, owner, parent_task_id=parent["id"])
    assert (total, [r["id"] for r in rows]) == (1, [child["id"]])


def test_a_key_that_names_no_task_of_the_project_is_refused_naming_the_field(
    db: Database, owner: Actor
) -> None:
    other = make_user(db, "other@example.com")
    make_project(db, other, "OTH")
    make_task(db, other, "OTH", "Theirs")
    for fields, field in (
        ({"parent_task_id": "CRW-9"}, "parentTaskId"),
        ({"parent_task_id": "OTH-1"}, "parentTaskId"),
        ({"blocked_by_task_ids": ["CRW-9"]}, "blockedByTaskIds"),
        ({"blocked_by_task_ids": ["OTH-1"]}, "blockedByTaskIds"),
        ({"parent_task_id": "\u00b2"}, "parentTaskId"),
    ):
        with pytest.raises(ValidationFailed) as caught:
            new(db, owner, **fields)
        assert caught.value.details["field"] == field
    assert count_rows(db, "tasks") == 1
    rows, total = listed(db, owner, parent_task_id="OTH-1")
    assert (rows, total) == ([], 0)


def test_readiness_counts_blockers_subtasks_and_checklist(db: Database, owner: Actor) -> None:
    blocker = new(db, owner, title="Blocker")
    parent = new(
        db,
        owner,
        title="Parent",
        description="- [x] one\n- [ ] two",
        blocked_by_task_ids=[blocker["id"]],
    )
    new(db, owner, title="Child", parent_task_id=parent["id"])
    found = task_queries.get_task(db, owner, task=parent["id"])
    assert isinstance(found, dict)
    assert found["readiness"]["ready"] is False
    assert (found["readiness"]["openSubtasks"], found["readiness"]["openChecklistItems"]) == (1, 1)
    assert found["readiness"]["openBlockerIds"] == [blocker["id"]]
    assert [i["state"] for i in found["checklist"]] == ["done", "open"]
    assert found["lifecycle"]["coverage"] == "complete"
    assert found["lifecycle"]["eventCount"] == 2  # status set, blocker added
    assert found["contextPack"]["blockers"][0]["id"] == blocker["id"]


def test_agent_brief_is_plain_text_within_3000_characters(db: Database, owner: Actor) -> None:
    task = new(db, owner, title="Long", brief="word " * 2000)
    text = task_queries.get_task(db, owner, task=task["id"], format="agent_brief")
    assert isinstance(text, str)
    assert len(text) <= 3000
    assert text.startswith("Task CRW-1: Long")


def test_q_finds_tasks_containing_every_word_in_any_order_any_case(
    db: Database, owner: Actor
) -> None:
    new(db, owner, title="Fix the login redirect")
    new(db, owner, title="Redirect rules", brief="After LOGIN go home")
    new(db, owner, title="Login page styles")
    new(db, owner, title="Unrelated", description="nothing to see")
    rows, total = listed(db, owner, q="redirect login")
    assert total == 2
    assert [r["number"] for r in rows] == [1, 2]
    # Search syntax in the query is read as plain words, never as operators.
    rows, total = listed(db, owner, q='login* -page "')
    assert [r["number"] for r in rows] == [3]


def test_q_in_one_project_matches_inside_the_index_and_counts_there(
    db: Database, owner: Actor
) -> None:
    """A search names its project inside the text index: another project's tasks with the
    same words are neither listed nor counted, paging by cursor or offset goes on in number
    order, and a search over both projects finds both."""
    other = create_project(db, owner, workspace_id=None, key="OTH", name="Other").body["project"]
    for n in range(7):
        new(db, owner, title=f"Invoice export {n}" if n % 2 == 0 else f"Unrelated {n}")
        tasks.create_task(
            db,
            owner,
            project="OTH",
            workspace_id=None,
            idempotency_key=f"o{n}",
            title=f"Invoice export elsewhere {n}",
        )
    first = task_queries.list_tasks(db, owner, project="CRW", q="export invoice", limit=2)
    assert ([r["number"] for r in first.rows], first.total) == ([1, 3], 4)
    assert {r["projectId"] for r in first.rows} != {other["id"]}
    following = task_queries.list_tasks(
        db,
        owner,
        project="CRW",
        q="export invoice",
        limit=2,
        cursor=first.answer(first.rows)["nextCursor"],
    )
    assert ([r["number"] for r in following.rows], following.total) == ([5, 7], 4)
    by_offset = task_queries.list_tasks(db, owner, project="CRW", q="invoice", limit=2, offset=2)
    assert [r["number"] for r in by_offset.rows] == [5, 7]
    newest = task_queries.list_tasks(db, owner, project="CRW", q="invoice", order="desc", limit=1)
    assert [r["number"] for r in newest.rows] == [7]
    both = task_queries.list_tasks(db, owner, q="invoice export", limit=200)
    assert both.total == 11
    assert len({r["projectId"] for r in both.rows}) == 2
    # A word that is a project's scope token in the index is not a word of any task.
    scope = str(other["id"]).replace("_", "")
    assert listed(db, owner, q=scope) == ([], 0)
    assert task_queries.list_tasks(db, owner, project="OTH", q=scope).total == 0


def test_a_task_naming_another_projects_id_is_not_found_in_that_project(
    db: Database, owner: Actor
) -> None:
    """The project's lexeme in the index keeps a search to its project (PostgreSQL leaves out
    `project_id IN` for it): a task's text that spells the id cannot stand in for it."""
    other = create_project(db, owner, workspace_id=None, key="OTH", name="Other").body["project"]
    crw = db.read(lambda uow: uow.projects.get_by_key("CRW")).id  # type: ignore[union-attr]
    spellings = [crw, crw.replace("_", ""), f"'{crw}'", f'"{crw}"', f"{crw}:*", crw.upper()]
    tasks.create_task(
        db,
        owner,
        project="OTH",
        workspace_id=None,
        idempotency_key="naming",
        title="Invoice export",
        description=" ".join(spellings),
    )
    new(db, owner, title="Invoice export here")
    found = task_queries.list_tasks(db, owner, project="CRW", q="invoice export")
    assert ([r["key"] for r in found.rows], found.total) == (["CRW-1"], 1)
    in_other = task_queries.list_tasks(db, owner, project="OTH", q="invoice")
    assert ([r["key"] for r in in_other.rows], in_other.total) == (["OTH-1"], 1)
    assert other["key"] == "OTH"


def test_the_text_index_holds_each_tasks_project(db: Database, owner: Actor) -> None:
    new(db, owner, title="Invoice export")
    project_id = db.read(lambda uow: uow.projects.get_by_key("CRW")).id  # type: ignore[union-attr]
    with db.engine.connect() as conn:
        if db.dialect == "sqlite":
            held = conn.execute(
                text("SELECT count(*) FROM tasks_fts WHERE tasks_fts MATCH :q"),
                {"q": f'scope : "{project_id.replace("_", "")}" AND invoice'},
            ).scalar_one()
            assert held == 1
        else:
            conn.execute(text("SET LOCAL enable_seqscan = off"))  # a tiny table: ask for the index
            plan = "\n".join(
                row[0]
                for row in conn.execute(
                    text(
                        "EXPLAIN SELECT id FROM tasks WHERE (to_tsvector('simple', tasks.title"
                        " || ' ' || tasks.brief || ' ' || tasks.description) || array_to_tsvector("
                        "ARRAY[tasks.project_id::text])) @@ (plainto_tsquery('simple', 'invoice')"
                        " && CAST(:scope AS tsquery))"
                    ),
                    {"scope": f"'{project_id}'"},
                )
            )
            assert "ix_tasks_search" in plan, plan
            assert project_id in plan, plan


def test_list_filters_and_paging(db: Database, owner: Actor) -> None:
    for i in range(5):
        new(
            db,
            owner,
            title=f"Task {i}",
            tags=["Backend"] if i % 2 == 0 else [],
            status="ready_for_ai" if i < 2 else "backlog",
        )
    rows, total = listed(db, owner, tag="backend")
    assert [r["number"] for r in rows] == [1, 3, 5]
    rows, total = listed(db, owner, statuses=["ready_for_ai"], order="desc")
    assert [r["number"] for r in rows] == [2, 1]
    rows, total = listed(db, owner, limit=2, offset=2, fields=["title"])
    assert total == 5
    # `fields` names the columns: a row is the key and those, nothing else.
    assert rows == [{"key": "CRW-3", "title": "Task 2"}, {"key": "CRW-4", "title": "Task 3"}]
    with pytest.raises(ValidationFailed) as bad_field:
        task_queries.list_tasks(db, owner, fields=["colour"])
    assert "title" in bad_field.value.details["accepted"]
    with pytest.raises(ValidationFailed) as bad_status:
        task_queries.list_tasks(db, owner, statuses=["finished"])
    assert bad_status.value.details["field"] == "status"
    with pytest.raises(ValidationFailed):
        task_queries.list_tasks(db, owner, limit=201)


def test_description_preview_is_500_characters(db: Database, owner: Actor) -> None:
    new(db, owner, description="d" * 600)
    (row,), _ = listed(db, owner)
    assert len(row["description"]) == 500
    assert row["descriptionTruncated"] is True


def test_tasks_of_a_project_without_a_role_are_not_found(db: Database, owner: Actor) -> None:
    task = new(db, owner)
    stranger = person_actor(make_user(db, "stranger@example.com"))
    with pytest.raises(NotFound):
        task_queries.get_task(db, stranger, task=task["id"])
    with pytest.raises(NotFound):
        task_queries.get_task(db, stranger, task="CRW-1")
    assert listed(db, stranger) == ([], 0)
    with pytest.raises(NotFound):
        patch(db, stranger, task, 1, title="Mine")


def test_reassigning_to_an_ai_role_takes_the_roles_kind(db: Database, owner: Actor) -> None:
    coder = present.add_team_role(db, owner, project="CRW", name="Coder", kind="ai")
    task = new(db, owner, assignee_id=owner.user_id)
    assert task["assigneeType"] == "human"
    moved = patch(db, owner, task, 1, assignee_id=coder["id"])
    assert (moved["assigneeId"], moved["assigneeType"]) == (coder["id"], "ai")


def test_turning_a_relationship_around_updates_the_other_task_too(
    db: Database, owner: Actor
) -> None:
    a = new(db, owner, title="A")
    c = new(db, owner, title="C", blocked_by_task_ids=[a["id"]])
    assert c["blockedByTaskIds"] == [a["id"]]
    a_now = task_queries.get_task(db, owner, task=a["id"])
    assert isinstance(a_now, dict)
    assert a_now["task"]["revision"] == 2  # its relationships changed: it now blocks C
    patch(db, owner, a, 2, blocked_by_task_ids=[c["id"]])  # now C blocks A: a pair has one link
    after = task_queries.get_task(db, owner, task=c["id"])
    assert isinstance(after, dict)
    assert after["task"]["blockedByTaskIds"] == []
    assert after["task"]["revision"] == 2
    events = db.read(
        lambda uow: uow.tasks.lifecycle_events(project_ids=[c["projectId"]], task_id=c["id"])
    )
    assert [(e["type"], e["data"]) for e in events][-1] == ("blocker_changed", {"from": 1, "to": 0})


def test_nul_characters_are_refused_before_the_database_sees_them(
    db: Database, owner: Actor
) -> None:
    with pytest.raises(ValidationFailed) as caught:
        new(db, owner, title="a\x00b")
    assert caught.value.details["field"] == "title"
    with pytest.raises(NotFound):
        task_queries.get_task(db, owner, task="tsk_\x00")
    with pytest.raises(NotFound):
        task_queries.list_tasks(db, owner, project="CR\x00W")
