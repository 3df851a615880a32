"""Data the migrations repair: task numbers move to a counter, broken board positions renumber,
each project's task count is seeded and then kept by the database."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from crewboard.contract.projects import present
from crewboard.domain.identity.records import Actor
from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage import migrate
from crewboard.storage.database import Database
from crewboard.storage.sequences import TASK_COUNT
from tests.support import task_reads as task_queries
from tests.support.factories import make_project, make_user

BEFORE_SEQUENCES = "0006_web_sessions"


def _new_task(db: Database, actor: Actor, title: str, status: str = "backlog") -> str:
    result = tasks.create_task(
        db,
        actor,
        project="CRW",
        workspace_id=None,
        idempotency_key=title,
        title=title,
        status=status,
    )
    return str(result.body["task"]["id"])


def test_upgrade_renumbers_a_column_holding_infinite_positions_and_seeds_the_task_counter(
    db: Database,
) -> None:
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    actor = person_actor(owner)
    first, second, third = (_new_task(db, actor, name) for name in ("one", "two", "three"))
    done = _new_task(db, actor, "finished", status="done")
    with db.engine.begin() as conn:
        conn.execute(
            text("UPDATE tasks SET board_order = :v WHERE id = :id"), {"v": math.inf, "id": first}
        )
        conn.execute(
            text("UPDATE tasks SET board_order = :v WHERE id = :id"), {"v": -math.inf, "id": third}
        )
        conn.execute(text("UPDATE tasks SET board_order = 5e15 WHERE id = :id"), {"id": second})
    migrate.downgrade(db, BEFORE_SEQUENCES)
    migrate.upgrade(db)

    with db.engine.connect() as conn:
        rows = conn.execute(text("SELECT id, board_order FROM tasks"))
        orders = {row.id: row.board_order for row in rows}
        counter = conn.execute(
            text("SELECT value FROM project_sequences WHERE name = 'task'")
        ).scalar_one()
    # -inf first, then the finite 5e15, then +inf; each a finite step apart.
    assert [orders[third], orders[second], orders[first]] == [1024.0, 2048.0, 3072.0]
    assert math.isfinite(orders[done])
    assert counter == 4
    fifth = _new_task(db, actor, "five")
    view = task_queries.get_task(db, actor, task=fifth, include_context_pack=False)
    assert isinstance(view, dict)
    assert view["task"]["key"] == "CRW-5"
    assert view["task"]["boardOrder"] == 4096.0


def test_the_task_search_index_is_rebuilt_scoped_and_back(db: Database) -> None:
    """0008 indexes each task's project with its words: tasks made before it (under the
    unscoped index of 0003) are found after it, scoped to their project."""
    owner = make_user(db, "owner@example.com")
    make_project(db, owner, "CRW")
    make_project(db, make_user(db, "x@example.com"), "OTH")
    actor = person_actor(owner)
    migrate.downgrade(db, "0007_project_sequences")
    _new_task(db, actor, "invoice export one")
    migrate.upgrade(db)
    _new_task(db, actor, "invoice export two")
    rows = task_queries.list_tasks(db, actor, project="CRW", q="export invoice").rows
    assert [row["title"] for row in rows] == ["invoice export one", "invoice export two"]
    assert migrate.schema_differences(db) == []


def _kept_and_counted(db: Database) -> tuple[dict[str, int], dict[str, int]]:
    """The kept task counts, and count(*) per project, for projects holding tasks."""
    with db.engine.connect() as conn:
        kept = {
            row.project_id: row.value
            for row in conn.execute(
                text("SELECT project_id, value FROM project_sequences WHERE name = :name"),
                {"name": TASK_COUNT},
            )
            if row.value
        }
        counted = {
            row.project_id: row.n
            for row in conn.execute(
                text("SELECT project_id, COUNT(*) AS n FROM tasks GROUP BY project_id")
            )
        }
    return kept, counted


def _delete_then_fail(db: Database, task_id: str) -> None:
    """A delete in a transaction that then fails: rolled back, count and all."""
    with db.engine.begin() as conn:
        conn.execute(text("DELETE FROM tasks WHERE id = :id"), {"id": task_id})
        conn.execute(text("SELECT no_such_column FROM tasks"))


def _listed_total(db: Database, actor: Actor, project: str) -> int:
    return task_queries.list_tasks(db, actor, project=project, limit=1).total


def test_task_counts_are_seeded_by_0009_then_kept_through_every_way_a_task_comes_or_goes(
    db: Database,
) -> None:
    owner = make_user(db, "owner@example.com")
    crw = make_project(db, owner, "CRW")
    other = make_project(db, owner, "OTH")
    actor = person_actor(owner)
    made = [_new_task(db, actor, f"before {n}") for n in range(3)]
    migrate.downgrade(db, "0008_task_search_scope")
    migrate.upgrade(db)
    kept, counted = _kept_and_counted(db)
    assert kept == counted == {crw: 3}

    made.append(_new_task(db, actor, "after"))
    assert _new_task(db, actor, "after") == made[-1]  # a retried create adds nothing
    with db.engine.begin() as conn:  # rows written around the services count too
        conn.execute(text("DELETE FROM tasks WHERE id = :id"), {"id": made[0]})
        conn.execute(
            text("UPDATE tasks SET project_id = :to WHERE id = :id"), {"to": other, "id": made[1]}
        )
    with pytest.raises(DBAPIError):
        _delete_then_fail(db, made[2])
    kept, counted = _kept_and_counted(db)
    assert kept == counted == {crw: 2, other: 1}
    assert _listed_total(db, actor, "CRW") == 2
    assert _listed_total(db, actor, "OTH") == 1
    assert task_queries.list_tasks(db, actor, project="CRW", statuses=["done"]).total == 0

    # A project deleted with its tasks takes its counter along; the others keep theirs.
    present.set_project_archived(db, actor, project="OTH", workspace_id=None, archived=True)
    present.delete_project(db, actor, project="OTH", workspace_id=None)
    kept, counted = _kept_and_counted(db)
    assert kept == counted == {crw: 2}
