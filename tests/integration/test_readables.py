"""What a caller can read, walked in pages from any position (the MCP resource list)."""

from __future__ import annotations

from typing import Any

import pytest

from crewboard.contract import memory_present as memory_edits
from crewboard.contract.projects import present
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ValidationFailed
from crewboard.services.board.readables import Position, Readable, list_readables
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_task, make_user, token_actor


def _file(db: Database, user: User, project: str, title: str) -> str:
    def work(uow: Any) -> dict[str, Any]:
        found = uow.projects.get_with_role(project, user.id)
        return memory.file_record(
            uow,
            person_actor(user),
            found[0],
            title=title,
            summary="",
            content="text",
            collection=None,
            document=None,
            source_draft_id=None,
        )

    return str(db.write(work).id)


@pytest.fixture
def owner(db: Database) -> User:
    """Two projects, AAA and BBB, each with a document, tasks and records."""
    user = make_user(db, "owner@example.com")
    for key in ("AAA", "BBB"):
        make_project(db, user, key)
        memory_edits.set_document(
            db, person_actor(user), key, "overview", f"{key} overview", expected_version=0
        )
        for n in range(3):
            make_task(db, user, key, f"{key} task {n}")
        for n in range(2):
            _file(db, user, key, f"{key} record {n}")
    return user


def _walk(db: Database, actor: Actor, limit: int, **options: Any) -> list[Readable]:
    rows: list[Readable] = []
    start: Position | None = Position()
    while start is not None:
        page, start = list_readables(db, actor, start=start, limit=limit, **options)
        assert len(page) <= limit
        rows += page
    return rows


def test_the_walk_goes_project_by_project_state_documents_tasks_then_records(
    db: Database, owner: User
) -> None:
    rows, following = list_readables(db, person_actor(owner), limit=500)
    assert following is None
    assert [(r.project_key, r.kind, r.ref) for r in rows if r.kind != "record"] == [
        ("AAA", "state", ""),
        ("AAA", "document", "overview"),
        ("AAA", "task", "AAA-1"),
        ("AAA", "task", "AAA-2"),
        ("AAA", "task", "AAA-3"),
        ("BBB", "state", ""),
        ("BBB", "document", "overview"),
        ("BBB", "task", "BBB-1"),
        ("BBB", "task", "BBB-2"),
        ("BBB", "task", "BBB-3"),
    ]
    assert [r.title for r in rows if r.kind == "record"] == [
        "AAA record 1",
        "AAA record 0",
        "BBB record 1",
        "BBB record 0",
    ]
    assert rows[2].detail == "backlog, medium priority"


@pytest.mark.parametrize("limit", [1, 2, 3, 5])
def test_pages_of_any_size_join_into_the_whole_walk(db: Database, owner: User, limit: int) -> None:
    actor = person_actor(owner)
    whole, _ = list_readables(db, actor, limit=500)
    assert _walk(db, actor, limit) == whole


def test_a_page_can_start_at_any_rows_position(db: Database, owner: User) -> None:
    actor = person_actor(owner)
    whole, _ = list_readables(db, actor, limit=500)
    for n, row in enumerate(whole):
        page, _ = list_readables(db, actor, start=row.position, limit=500)
        assert page == whole[n:]


def test_parts_leave_out_what_the_caller_may_not_read(db: Database, owner: User) -> None:
    actor = person_actor(owner)
    tasks_only = _walk(db, actor, 2, parts=frozenset({"tasks"}))
    assert {r.kind for r in tasks_only} == {"task"}
    assert len(tasks_only) == 6
    no_memory = _walk(db, actor, 2, parts=frozenset({"state", "tasks"}))
    assert {r.kind for r in no_memory} == {"state", "task"}
    assert list_readables(db, actor, parts=frozenset()) == ([], None)


def test_only_open_unarchived_projects_of_the_caller_are_walked(db: Database, owner: User) -> None:
    other = make_user(db, "other@example.com")
    make_project(db, other, "CCC")
    present.set_project_archived(
        db, person_actor(owner), project="BBB", workspace_id=None, archived=True
    )
    rows, _ = list_readables(db, person_actor(owner), limit=500)
    assert {r.project_key for r in rows} == {"AAA"}


def test_a_token_limited_to_one_project_walks_only_that_one(db: Database, owner: User) -> None:
    limited = token_actor(db, owner, ["read"], project="BBB")
    rows, _ = list_readables(db, limited, limit=500)
    assert {r.project_key for r in rows} == {"BBB"}
    assert rows[0].position == Position(0, 0, 0)


@pytest.mark.parametrize("limit", [0, 501])
def test_a_limit_outside_1_to_500_is_refused(db: Database, owner: User, limit: int) -> None:
    with pytest.raises(ValidationFailed) as refused:
        list_readables(db, person_actor(owner), limit=limit)
    assert refused.value.details["field"] == "limit"
