"""Project memory through the services: filing, reading, person-only edits, documents."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from crewboard.contract import memory_present
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.projects import Project
from crewboard.errors import ErrorCode
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from tests.support.errors import refused
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW", collections=["Architecture", "Runbooks"])
    return user


def project_of(uow: UnitOfWork, key: str) -> Project:
    found = uow.projects.get_with_role(key, "")
    assert found is not None
    return found[0]


def file(db: Database, actor: Actor, key: str = "CRW", **fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "title": "Login flow",
        "summary": "How sign-in works",
        "content": "Sessions are cookies.",
        "collection": None,
        "document": None,
        "source_draft_id": None,
        **fields,
    }
    return memory_present.record_view(
        db.write(lambda uow: memory.file_record(uow, actor, project_of(uow, key), **values))
    )


def test_file_record_stores_version_one_with_the_collection_spelled_as_the_project_does(
    db: Database, owner: User
) -> None:
    view = file(db, person_actor(owner), collection="architecture", document="decisions")

    assert view["version"] == 1
    assert view["collection"] == "Architecture"
    assert view["document"] == "decisions"
    assert view["status"] == "approved"
    assert view["id"].startswith("mem_")
    assert count_rows(db, "memory_record_versions") == 1
    events = db.read(lambda uow: uow.events.list_after(project_id=None, limit=100))
    added = [e for e in events if e["type"] == "memory.record_added"]
    assert len(added) == 1
    assert "content" not in added[0]["payload"]["record"]


def test_file_record_with_an_unknown_collection_is_refused_listing_the_collections(
    db: Database, owner: User
) -> None:
    error = refused(ErrorCode.VALIDATION, file, db, person_actor(owner), collection="Nope")

    assert error.details["field"] == "collection"
    assert error.details["accepted"] == ["Architecture", "Runbooks"]


def test_remove_record_deletes_it_with_its_versions_and_a_second_removal_is_not_found(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    view = file(db, actor)

    db.write(lambda uow: memory.remove_record(uow, actor, project_of(uow, "CRW"), view["id"]))

    assert count_rows(db, "memory_records") == 0
    assert count_rows(db, "memory_record_versions") == 0
    refused(
        ErrorCode.NOT_FOUND,
        db.write,
        lambda uow: memory.remove_record(uow, actor, project_of(uow, "CRW"), view["id"]),
    )


# --- get_project_memory ------------------------------------------------------------------------


def read(db: Database, actor: Actor, **kwargs: Any) -> dict[str, Any]:
    return memory_present.get_project_memory(db, actor, **kwargs)


def set_doc(db: Database, user: User, name: str, text: str, version: int = 0) -> dict[str, Any]:
    return memory_present.set_document(
        db, person_actor(user), "CRW", name, text, expected_version=version
    )


def test_get_project_memory_lists_records_newest_changed_first_with_written_documents(
    db: Database, owner: User, clock: ManualClock
) -> None:
    actor = person_actor(owner)
    first = file(db, actor, title="First")
    clock.advance(timedelta(minutes=1))
    second = file(db, actor, title="Second", document="decisions")
    set_doc(db, owner, "overview", "We build a board.")

    answer = read(db, actor, project="CRW")

    assert [r["id"] for r in answer["records"]] == [second["id"], first["id"]]
    assert answer["records"][0]["content"] == "Sessions are cookies."
    assert (answer["total"], answer["nextOffset"]) == (2, None)
    assert [(d["name"], d["title"], d["version"]) for d in answer["documents"]] == [
        ("overview", "Overview", 1)
    ]
    assert answer["documents"][0]["content"] == "We build a board."


def test_get_project_memory_for_a_document_gives_its_text_even_unwritten_and_its_records(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    legal = file(db, actor, title="Font licence", document="legal")
    file(db, actor, title="Elsewhere", document="notes")
    set_doc(db, owner, "overview", "Not asked for.")

    answer = read(db, actor, project="CRW", document="legal")

    assert [r["id"] for r in answer["records"]] == [legal["id"]]
    assert [(d["name"], d["title"], d["version"], d["content"]) for d in answer["documents"]] == [
        ("legal", "Asset rights", 0, "")
    ]


def test_get_project_memory_with_an_unknown_document_names_the_five(
    db: Database, owner: User
) -> None:
    error = refused(ErrorCode.VALIDATION, read, db, person_actor(owner), document="legalese")

    assert error.details["field"] == "document"
    assert error.details["accepted"] == ["overview", "context", "decisions", "notes", "legal"]


def test_get_project_memory_by_collection_matches_any_case_and_leaves_documents_out(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    runbook = file(db, actor, title="Restart", collection="Runbooks")
    file(db, actor, title="Layers", collection="Architecture")
    set_doc(db, owner, "notes", "Some notes.")

    answer = read(db, actor, project="CRW", collection="RUNBOOKS")

    assert [r["id"] for r in answer["records"]] == [runbook["id"]]
    assert answer["documents"] == []


def test_get_project_memory_with_an_unknown_collection_lists_the_collections(
    db: Database, owner: User
) -> None:
    error = refused(
        ErrorCode.VALIDATION, read, db, person_actor(owner), project="CRW", collection="Lore"
    )

    assert error.details["field"] == "collection"
    assert error.details["accepted"] == ["Architecture", "Runbooks"]


def test_get_project_memory_by_collection_across_projects_reads_each_that_has_it(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    make_project(db, owner, "OPS", collections=["runbooks", "Incidents"])
    here = file(db, actor, title="Restart", collection="Runbooks")
    there = file(db, actor, "OPS", title="Failover", collection="runbooks")
    file(db, actor, "OPS", title="Outage", collection="Incidents")

    answer = read(db, actor, collection="Runbooks")

    assert {r["id"] for r in answer["records"]} == {here["id"], there["id"]}
    error = refused(ErrorCode.VALIDATION, read, db, actor, collection="Lore")
    assert error.details["accepted"] == ["Architecture", "Incidents", "Runbooks", "runbooks"]


def test_get_project_memory_by_ids_returns_only_those_without_documents_nor_leaks(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    wanted = file(db, actor, title="Wanted")
    file(db, actor, title="Other")
    set_doc(db, owner, "overview", "Text.")
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "SEC")
    secret = file(db, person_actor(stranger), "SEC", title="Secret")

    answer = read(db, actor, ids=[wanted["id"], secret["id"], "mem_unknown"])

    assert [r["id"] for r in answer["records"]] == [wanted["id"]]
    assert answer["documents"] == []
    assert answer["total"] == 1


def test_get_project_memory_with_more_than_fifty_ids_is_refused_naming_ids(
    db: Database, owner: User
) -> None:
    ids = [f"mem_{n}" for n in range(51)]

    error = refused(ErrorCode.LIMIT_EXCEEDED, read, db, person_actor(owner), ids=ids)

    assert error.details["field"] == "ids"
    assert error.details["limit"] == 50


def test_get_project_memory_without_content_gives_lengths_instead(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    file(db, actor, content="x" * 120)
    set_doc(db, owner, "context", "y" * 40)

    answer = read(db, actor, project="CRW", include_content=False)

    (record,) = answer["records"]
    assert "content" not in record
    assert record["contentLength"] == 120
    assert record["summary"] == "How sign-in works"
    (document,) = answer["documents"]
    assert "content" not in document
    assert document["length"] == 40


@pytest.mark.parametrize(
    ("field", "value"), [("limit", 0), ("limit", 201), ("offset", -1)], ids=str
)
def test_get_project_memory_refuses_limits_out_of_range_naming_the_field(
    db: Database, owner: User, field: str, value: int
) -> None:
    error = refused(ErrorCode.VALIDATION, read, db, person_actor(owner), **{field: value})

    assert error.details["field"] == field


def test_get_project_memory_pages_with_total_and_next_offset_and_documents_on_page_one(
    db: Database, owner: User, clock: ManualClock
) -> None:
    actor = person_actor(owner)
    made = []
    for n in range(5):
        made.append(file(db, actor, title=f"R{n}")["id"])
        clock.advance(timedelta(seconds=1))
    set_doc(db, owner, "notes", "Notes.")
    newest_first = made[::-1]

    first = read(db, actor, project="CRW", limit=2)
    last = read(db, actor, project="CRW", limit=2, offset=4)

    assert [r["id"] for r in first["records"]] == newest_first[:2]
    assert (first["total"], first["nextOffset"]) == (5, 2)
    assert len(first["documents"]) == 1
    assert [r["id"] for r in last["records"]] == newest_first[4:]
    assert (last["total"], last["nextOffset"], last["documents"]) == (5, None, [])


def test_get_project_memory_keeps_a_page_inside_the_budget_and_cuts_an_oversized_text(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    for n in range(6):
        file(db, actor, title=f"Big {n}", content="z" * 15_000)
    huge = file(db, actor, title="Huge", content="é" * memory.MAX_CONTENT)
    set_doc(db, owner, "decisions", "d" * memory.MAX_CONTENT)

    page = read(db, actor, project="CRW")
    alone = read(db, actor, ids=[huge["id"]])

    assert size_of(page) <= memory_present.MEMORY_BUDGET
    assert page["documents"][0]["contentTruncated"] is True
    assert page["documents"][0]["length"] == memory.MAX_CONTENT
    assert 1 <= len(page["records"]) < 7
    assert page["nextOffset"] == len(page["records"])
    assert size_of(alone) <= memory_present.MEMORY_BUDGET
    (record,) = alone["records"]
    assert record["contentTruncated"] is True
    assert record["contentLength"] == memory.MAX_CONTENT
    assert 0 < len(record["content"]) < memory.MAX_CONTENT


def size_of(body: dict[str, Any]) -> int:
    return len(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())


def test_get_project_memory_through_a_project_token_reads_only_that_project(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    make_project(db, owner, "OPS")
    mine = file(db, actor, title="Here")
    file(db, actor, "OPS", title="There")
    agent = token_actor(db, owner, ["read"], project="CRW")

    answer = read(db, agent)

    assert [r["id"] for r in answer["records"]] == [mine["id"]]
    refused(ErrorCode.NOT_FOUND, read, db, agent, project="OPS")


# --- person edits of records -----------------------------------------------------------------


def test_update_record_saves_the_next_version_and_keeps_every_version(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    made = file(db, actor, collection="Runbooks")

    changed = memory_present.update_record(
        db,
        actor,
        made["id"],
        expected_version=1,
        content="Sessions are signed cookies.",
        status="canon",
        collection="",
        document="context",
    )

    assert (changed["version"], changed["status"], changed["collection"]) == (2, "canon", None)
    assert changed["document"] == "context"
    assert changed["title"] == made["title"]
    history = memory_present.record_versions(db, actor, made["id"])
    assert [(v["version"], v["content"]) for v in history] == [
        (2, "Sessions are signed cookies."),
        (1, "Sessions are cookies."),
    ]
    events = db.read(lambda uow: uow.events.list_after(project_id=None, limit=100))
    assert [
        e["payload"]["record"]["version"] for e in events if e["type"] == "memory.record_updated"
    ] == [2]


def test_update_record_at_a_stale_version_is_a_conflict_naming_the_current_one(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    made = file(db, actor)
    memory_present.update_record(db, actor, made["id"], expected_version=1, title="New")

    error = refused(
        ErrorCode.REVISION_CONFLICT,
        memory_present.update_record,
        db,
        actor,
        made["id"],
        expected_version=1,
        title="Newer",
    )

    assert (error.details["currentVersion"], error.details["expectedVersion"]) == (2, 1)
    assert memory_present.get_record(db, actor, made["id"])["title"] == "New"


@pytest.mark.parametrize("kind", ["personal", "agent"])
def test_update_record_through_any_token_is_refused_even_with_every_scope(
    db: Database, owner: User, kind: str
) -> None:
    made = file(db, person_actor(owner))
    issued = tokens.issue_token(
        db,
        person_actor(owner),
        kind=kind,
        scopes=[s.value for s in Scope],
        project="CRW" if kind == "agent" else None,
    )
    holder = tokens.authenticate_token(db, issued.secret)

    refused(
        ErrorCode.PERMISSION_DENIED,
        memory_present.update_record,
        db,
        holder,
        made["id"],
        expected_version=1,
        title="Sneaky",
    )
    assert memory_present.get_record(db, person_actor(owner), made["id"])["version"] == 1


def test_update_record_needs_the_write_role_and_hides_records_of_closed_projects(
    db: Database, owner: User
) -> None:
    made = file(db, person_actor(owner))
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    outsider = make_user(db, "outsider@example.com")

    refused(
        ErrorCode.PERMISSION_DENIED,
        memory_present.update_record,
        db,
        person_actor(reader),
        made["id"],
        expected_version=1,
        title="No",
    )
    refused(ErrorCode.NOT_FOUND, memory_present.get_record, db, person_actor(outsider), made["id"])
    refused(
        ErrorCode.NOT_FOUND,
        memory_present.update_record,
        db,
        person_actor(owner),
        "mem_missing",
        expected_version=1,
    )


def test_update_record_refuses_an_unknown_collection_and_an_overlong_content(
    db: Database, owner: User
) -> None:
    actor = person_actor(owner)
    made = file(db, actor)

    bad = refused(
        ErrorCode.VALIDATION,
        memory_present.update_record,
        db,
        actor,
        made["id"],
        expected_version=1,
        collection="Lore",
    )
    long = refused(
        ErrorCode.LIMIT_EXCEEDED,
        memory_present.update_record,
        db,
        actor,
        made["id"],
        expected_version=1,
        content="x" * (memory.MAX_CONTENT + 1),
    )

    assert bad.details["accepted"] == ["Architecture", "Runbooks"]
    assert long.details["field"] == "content"


# --- project documents -------------------------------------------------------------------------


def test_set_document_saves_versions_and_every_version_is_kept(db: Database, owner: User) -> None:
    actor = person_actor(owner)
    assert memory_present.get_document(db, actor, "CRW", "decisions")["version"] == 0

    set_doc(db, owner, "decisions", "Use SQLite.")
    second = set_doc(db, owner, "decisions", "Use SQLite and PostgreSQL.", version=1)

    assert (second["version"], second["content"]) == (2, "Use SQLite and PostgreSQL.")
    history = memory_present.document_versions(db, actor, "CRW", "decisions")
    assert [(v["version"], v["content"]) for v in history] == [
        (2, "Use SQLite and PostgreSQL."),
        (1, "Use SQLite."),
    ]
    assert memory_present.get_document(db, actor, "CRW", "decisions")["version"] == 2


@pytest.mark.parametrize("stale", [0, 2])
def test_set_document_at_another_version_is_a_conflict(
    db: Database, owner: User, stale: int
) -> None:
    set_doc(db, owner, "notes", "One.")

    error = refused(ErrorCode.REVISION_CONFLICT, set_doc, db, owner, "notes", "Two.", stale)

    assert error.details["currentVersion"] == 1
    assert memory_present.get_document(db, person_actor(owner), "CRW", "notes")["content"] == "One."


def test_set_document_refuses_tokens_bad_names_and_overlong_text(db: Database, owner: User) -> None:
    holder = token_actor(db, owner, [s.value for s in Scope])

    refused(
        ErrorCode.PERMISSION_DENIED,
        memory_present.set_document,
        db,
        holder,
        "CRW",
        "notes",
        "x",
        expected_version=0,
    )
    name = refused(ErrorCode.VALIDATION, set_doc, db, owner, "todo", "x")
    refused(ErrorCode.LIMIT_EXCEEDED, set_doc, db, owner, "notes", "x" * (memory.MAX_CONTENT + 1))

    assert name.details["field"] == "name"
    assert count_rows(db, "project_documents") == 0
