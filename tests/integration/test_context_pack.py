"""Context packs and receipts in get_task, and what changed since a receipt, on both databases."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from crewboard.contract.projects import present
from crewboard.contract.review.present import hand_in_view
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import CrewboardError, ErrorCode
from crewboard.services.board import task_updates, tasks
from crewboard.services.board.context import (
    NO_MEMORY_REASON,
    PACK_BUDGET,
    changed_inputs,
    changed_inputs_many,
    check_receipt,
)
from crewboard.services.identity.users import person_actor
from crewboard.services.memory.edits import set_document, update_record
from crewboard.services.memory.records import file_record, remove_record
from crewboard.services.review import drafts
from crewboard.storage.database import Database
from tests.support import task_reads as task_queries
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor

HAND_IN = ["read", "tasks.manage", "drafts.create"]


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def agent(db: Database, owner: User) -> Actor:
    return token_actor(db, owner, HAND_IN)


def add_records(db: Database, owner: User, *records: dict[str, Any]) -> list[str]:
    """File accepted records in project CRW (one transaction), returning their ids."""

    def work(uow: Any) -> list[str]:
        project = uow.projects.get_with_role("CRW", owner.id)[0]
        return [
            str(
                file_record(
                    uow,
                    person_actor(owner),
                    project,
                    title=r["title"],
                    summary=r.get("summary", f"About {r['title']}."),
                    content=r.get("content", f"All about {r['title']}."),
                    collection=None,
                    document=r.get("document"),
                    source_draft_id=None,
                ).id
            )
            for r in records
        ]

    return db.write(work)


def add_task(db: Database, owner: User, title: str, **fields: Any) -> dict[str, Any]:
    result = tasks.create_task(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        idempotency_key=f"task-{title}",
        title=title,
        **fields,
    )
    return dict(result.body["task"])


def read(db: Database, actor: Actor, task_id: str, **options: Any) -> dict[str, Any]:
    found = task_queries.get_task(db, actor, task=task_id, **options)
    assert isinstance(found, dict)
    return found


def pack_size(pack: dict[str, Any]) -> int:
    return len(json.dumps(pack, separators=(",", ":"), ensure_ascii=False).encode())


def refused(code: ErrorCode, call: Any, *args: Any) -> CrewboardError:
    with pytest.raises(CrewboardError) as caught:
        call(*args)
    assert caught.value.code is code, caught.value.to_dict()
    assert caught.value.message
    return caught.value


def test_records_the_task_names_come_first_in_full_in_its_order(
    db: Database, owner: User, agent: Actor
) -> None:
    first, second, _other = add_records(
        db, owner, {"title": "Login flow"}, {"title": "Session cookies"}, {"title": "Unrelated"}
    )
    refs = [
        {
            "id": "ref-1",
            "kind": "context_pack",
            "refId": first,
            "audience": ["ai"],
            "createdAt": "2026-03-02T09:00:00+00:00",
        }
    ]
    task = add_task(
        db, owner, "Quiet task", context_item_ids=[second], context_refs=refs, brief="nothing"
    )
    pack = read(db, agent, task["id"])["contextPack"]
    assert [r["id"] for r in pack["records"]][:2] == [second, first]
    full = pack["records"][0]
    assert full["content"] == "All about Session cookies."
    assert full["summary"] == "About Session cookies."
    assert full["version"] == 1
    assert full["status"] == "approved"
    assert pack["missingContextItems"] == []


def test_records_sharing_words_with_the_task_come_in_full_after_the_named_ones(
    db: Database, owner: User, agent: Actor
) -> None:
    named, match, _ = add_records(
        db,
        owner,
        {"title": "Glossary"},
        {"title": "Invoice rounding", "content": "Invoices round half up to the cent."},
        {"title": "Colour palette", "content": "Blue and grey."},
    )
    task = add_task(
        db,
        owner,
        "Rounding of invoice totals",
        context_item_ids=[named],
        brief="Totals must be rounded",
    )
    pack = read(db, agent, task["id"])["contextPack"]
    assert [r["id"] for r in pack["records"]] == [named, match]
    assert pack["records"][1]["content"] == "Invoices round half up to the cent."
    assert [e["title"] for e in pack["memoryIndex"]] == ["Colour palette"]


def test_the_other_records_are_indexed_newest_first_with_one_short_line(
    db: Database, owner: User, agent: Actor, clock: ManualClock
) -> None:
    (older,) = add_records(db, owner, {"title": "Older", "summary": "\n  First line\nsecond"})
    clock.advance(timedelta(minutes=1))
    (newer,) = add_records(db, owner, {"title": "Newer", "summary": "", "content": "x" * 400})
    task = add_task(db, owner, "Quiet")
    pack = read(db, agent, task["id"])["contextPack"]
    assert pack["records"] == []
    assert [e["id"] for e in pack["memoryIndex"]] == [newer, older]
    assert pack["memoryIndex"][1]["line"] == "First line"
    assert len(pack["memoryIndex"][0]["line"]) == 160
    assert pack["memoryIndexTotal"] == 2
    assert pack["memoryIndexCut"] is False


def test_a_pack_stays_inside_its_budget_with_300_records_of_5_kb(
    db: Database, owner: User, agent: Actor
) -> None:
    body = "budget " + "lorem ipsum dolor sit amet " * 190  # about 5 KB
    ids = add_records(
        db, owner, *({"title": f"Budget note {n}", "content": body} for n in range(300))
    )
    set_document(
        db, person_actor(owner), "CRW", "decisions", "We decided. " * 2000, expected_version=0
    )
    present.update_project_state(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        content="s" * 5000,
        expected_revision=0,
    )
    task = add_task(db, owner, "Budget work", context_item_ids=ids[:12], brief="b" * 20_000)
    pack = read(db, agent, task["id"])["contextPack"]
    assert pack_size(pack) <= PACK_BUDGET
    assert pack["records"], "some named records fit in full"
    assert [r["id"] for r in pack["records"]] == ids[: len(pack["records"])]
    indexed = {e["id"] for e in pack["memoryIndex"]}
    assert ids[len(pack["records"])] in indexed, "a named record that did not fit is indexed"
    assert pack["memoryIndexTotal"] == 300 - len(pack["records"])
    assert pack["memoryIndexCut"] is True
    assert pack["briefTruncated"] is True
    assert pack["documents"][0]["contentTruncated"] is True


def test_named_ids_of_another_project_are_missing_and_their_text_is_not_handed_out(
    db: Database, owner: User, agent: Actor
) -> None:
    make_project(db, owner, "OTH")

    def work(uow: Any) -> str:
        other = uow.projects.get_with_role("OTH", owner.id)[0]
        made = file_record(
            uow,
            person_actor(owner),
            other,
            title="Secret",
            summary="secret summary",
            content="secret text",
            collection=None,
            document=None,
            source_draft_id=None,
        )
        return str(made.id)

    foreign = db.write(work)
    add_records(db, owner, {"title": "Local"})
    task = add_task(db, owner, "Secret Local", context_item_ids=[foreign, "mem_nope"])
    found = read(db, agent, task["id"])
    pack = found["contextPack"]
    assert pack["missingContextItems"] == [foreign, "mem_nope"]
    assert "secret text" not in json.dumps(found)
    assert foreign not in {e["id"] for e in pack["memoryIndex"]}


def test_a_token_that_can_hand_in_gets_a_receipt_of_what_it_was_handed(
    db: Database, owner: User, agent: Actor
) -> None:
    (named,) = add_records(db, owner, {"title": "Named"})
    set_document(db, person_actor(owner), "CRW", "context", "Some context.", expected_version=0)
    task = add_task(db, owner, "Quiet", context_item_ids=[named])
    found = read(db, agent, task["id"])
    assert found["contextReceiptId"].startswith("rcp_")
    assert "contextReceiptUnavailable" not in found
    assert found["contextPack"]["documents"] == [
        {"name": "context", "version": 1, "content": "Some context."}
    ]
    assert changed_inputs_of(db, found["contextReceiptId"]) == []
    assert count_rows(db, "context_receipts") == 1


def test_people_read_only_tokens_and_reads_without_a_pack_get_no_receipt(
    db: Database, owner: User, agent: Actor
) -> None:
    add_records(db, owner, {"title": "Named"})
    task = add_task(db, owner, "Quiet")
    reader = token_actor(db, owner, ["read"])
    member = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", member, Role.READ)
    capped = token_actor(db, member, HAND_IN)
    for actor in (person_actor(owner), reader, capped):
        found = read(db, actor, task["id"])
        assert "contextPack" in found
        assert "contextReceiptId" not in found
        assert "contextReceiptUnavailable" not in found
    alone = read(db, agent, task["id"], include_context_pack=False)
    assert "contextPack" not in alone
    assert "contextReceiptId" not in alone
    assert "contextReceiptUnavailable" not in alone
    assert count_rows(db, "context_receipts") == 0


def test_a_project_without_accepted_memory_gives_the_reason_instead_of_a_receipt(
    db: Database, owner: User, agent: Actor
) -> None:
    task = add_task(db, owner, "Quiet")
    found = read(db, agent, task["id"])
    assert found["contextReceiptUnavailable"] == {"reason": NO_MEMORY_REASON}
    assert "contextReceiptId" not in found
    assert count_rows(db, "context_receipts") == 0


def test_check_receipt_refuses_unknown_receipts_other_tokens_and_other_tasks(
    db: Database, owner: User, agent: Actor
) -> None:
    add_records(db, owner, {"title": "Named"})
    task = add_task(db, owner, "Quiet")
    other_task = add_task(db, owner, "Other")
    receipt = read(db, agent, task["id"])["contextReceiptId"]
    other_token = token_actor(db, owner, HAND_IN)

    def check(actor: Actor, receipt_id: str, task_id: str) -> str:
        return db.read(lambda uow: check_receipt(uow, actor, receipt_id, uow.tasks.get(task_id)))

    assert check(agent, receipt, task["id"]) == receipt
    for actor, receipt_id, task_id in (
        (agent, "rcp_unknown", task["id"]),
        (other_token, receipt, task["id"]),
        (person_actor(owner), receipt, task["id"]),
        (agent, receipt, other_task["id"]),
    ):
        error = refused(ErrorCode.VALIDATION, check, actor, receipt_id, task_id)
        assert error.details["field"] == "contextReceiptId"


def changed_inputs_of(db: Database, receipt_id: str | None) -> list[dict[str, Any]]:
    return db.read(lambda uow: changed_inputs(uow, receipt_id))


def test_changed_inputs_names_an_edited_record_with_both_versions(
    db: Database, owner: User, agent: Actor
) -> None:
    (named,) = add_records(db, owner, {"title": "Named"})
    task = add_task(db, owner, "Quiet", context_item_ids=[named])
    receipt = read(db, agent, task["id"])["contextReceiptId"]
    update_record(db, person_actor(owner), named, expected_version=1, title="Renamed")
    assert changed_inputs_of(db, receipt) == [
        {
            "kind": "record",
            "id": named,
            "title": "Renamed",
            "versionThen": 1,
            "versionNow": 2,
            "removed": False,
        }
    ]


def test_changed_inputs_names_a_removed_record_as_removed(
    db: Database, owner: User, agent: Actor
) -> None:
    named, _ = add_records(db, owner, {"title": "Named"}, {"title": "Kept"})
    task = add_task(db, owner, "Quiet", context_item_ids=[named])
    receipt = read(db, agent, task["id"])["contextReceiptId"]

    def remove(uow: Any) -> None:
        project = uow.projects.get_with_role("CRW", owner.id)[0]
        remove_record(uow, person_actor(owner), project, named)

    db.write(remove)
    (change,) = changed_inputs_of(db, receipt)
    assert change["removed"] is True
    assert change["versionNow"] is None
    assert change["title"] == "Named"


def test_changed_inputs_names_a_saved_state_page_and_document(
    db: Database, owner: User, agent: Actor
) -> None:
    add_records(db, owner, {"title": "Named"})
    set_document(db, person_actor(owner), "CRW", "decisions", "We use UTC.", expected_version=0)
    task = add_task(db, owner, "Quiet")
    receipt = read(db, agent, task["id"])["contextReceiptId"]
    person = person_actor(owner)
    present.update_project_state(
        db, person, project="CRW", workspace_id=None, content="Now", expected_revision=0
    )
    set_document(db, person, "CRW", "decisions", "We use UTC everywhere.", expected_version=1)
    set_document(db, person, "CRW", "notes", "Not handed out.", expected_version=0)
    changes = {c["kind"]: c for c in changed_inputs_of(db, receipt)}
    assert set(changes) == {"projectState", "document"}
    assert changes["projectState"]["versionThen"] == 0
    assert changes["projectState"]["versionNow"] == 1
    assert changes["document"]["id"] == "decisions"
    assert (changes["document"]["versionThen"], changes["document"]["versionNow"]) == (1, 2)


def test_changed_inputs_names_a_changed_brief_and_batches_many_receipts(
    db: Database, owner: User, agent: Actor
) -> None:
    add_records(db, owner, {"title": "Named"})
    task = add_task(db, owner, "Quiet", brief="first brief")
    first = read(db, agent, task["id"])["contextReceiptId"]
    second = read(db, agent, task["id"])["contextReceiptId"]
    task_updates.update_task(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        idempotency_key="brief-edit",
        task_id=task["id"],
        expected_revision=task["revision"],
        patch={"brief": "second brief"},
    )
    many = db.read(lambda uow: changed_inputs_many(uow, [first, second, "rcp_gone"]))
    assert many["rcp_gone"] == []
    for receipt in (first, second):
        (change,) = many[receipt]
        assert change["kind"] == "brief"
        assert change["id"] == task["id"]
        assert change["removed"] is False
        assert change["versionThen"] != change["versionNow"]
    assert changed_inputs_of(db, None) == []


def test_agent_brief_names_the_records_the_task_names_and_writes_no_receipt(
    db: Database, owner: User, agent: Actor
) -> None:
    (named,) = add_records(
        db, owner, {"title": "Deploy steps", "summary": "Run make deploy.\nThen check."}
    )
    add_records(db, owner, {"title": "Not named"})
    task = add_task(db, owner, "Ship it", context_item_ids=[named], brief="Ship the build")
    text = task_queries.get_task(db, agent, task=task["id"], format="agent_brief")
    assert isinstance(text, str)
    assert len(text) <= 3000
    assert "Deploy steps" in text
    assert "Run make deploy." in text
    assert "Not named" not in text
    assert count_rows(db, "context_receipts") == 0


def test_old_receipts_no_hand_in_names_are_let_go_and_named_ones_kept(
    db: Database, owner: User, agent: Actor, clock: ManualClock
) -> None:
    add_records(db, owner, {"title": "Retention"})
    task = add_task(db, owner, "Keep the receipts table small")
    kept = read(db, agent, task["id"])["contextReceiptId"]
    dropped = read(db, agent, task["id"])["contextReceiptId"]
    drafts.create_draft(
        db,
        agent,
        task=task["id"],
        context_receipt_id=kept,
        title="Done",
        content="Done.",
        answer=hand_in_view,
    )
    clock.advance(timedelta(days=31))
    fresh = read(db, agent, task["id"])["contextReceiptId"]
    with db.engine.connect() as conn:
        left = set(conn.exec_driver_sql("SELECT id FROM context_receipts").scalars())
    assert left == {kept, fresh}
    assert dropped not in left
