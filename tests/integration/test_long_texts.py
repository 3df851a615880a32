"""Long texts in the answers agents read: get_task, the context pack and get_project_memory cut
them to fit 48 KiB (flagged, with their length) and read them in windows; the web reads whole."""

from __future__ import annotations

from typing import Any

import pytest

from crewboard.contract import memory_present
from crewboard.contract.board.present import get_task_view
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import CrewboardError, ErrorCode
from crewboard.services.board import tasks
from crewboard.services.board.context import PACK_BUDGET
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.services.screens.board import task_page
from crewboard.services.text_windows import ANSWER_BUDGET, WINDOW_LIMIT, json_size
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from tests.support import task_reads as queries
from tests.support.factories import count_rows, make_project, make_user, token_actor

UNIT = 'Words 漢字かな 🙂🚀 \u0001 "quoted" \\slash\n'


def long_text(length: int, seed: str = "") -> str:
    return ("T" + seed + UNIT * (length // len(UNIT) + 1))[: length - 1] + "."


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def agent(db: Database, owner: User) -> Actor:
    return token_actor(db, owner, ["read", "tasks.manage", "drafts.create"])


def add_task(db: Database, owner: User, key: str = "t", **fields: Any) -> dict[str, Any]:
    result = tasks.create_task(
        db,
        person_actor(owner),
        project="CRW",
        workspace_id=None,
        idempotency_key=key,
        title=fields.pop("title", "A long task"),
        **fields,
    )
    return dict(result.body["task"])


def read(db: Database, actor: Actor, **options: Any) -> dict[str, Any]:
    found = queries.get_task(db, actor, task="CRW-1", **options)
    assert isinstance(found, dict)
    return found


def refused(call: Any, **options: Any) -> CrewboardError:
    with pytest.raises(CrewboardError) as caught:
        call(**options)
    return caught.value


def file(db: Database, owner: User, content: str, title: str = "Huge") -> str:
    def work(uow: UnitOfWork) -> str:
        project = uow.projects.get_with_role("CRW", owner.id)[0]
        made = memory.file_record(
            uow,
            person_actor(owner),
            project,
            title=title,
            summary="",
            content=content,
            collection=None,
            document=None,
            source_draft_id=None,
        )
        return str(made.id)

    return db.write(work)


# --- get_task --------------------------------------------------------------------------------


def test_get_task_cuts_a_huge_brief_and_description_to_fit_with_flags_and_lengths(
    db: Database, owner: User, agent: Actor
) -> None:
    brief, description = long_text(200_000, "b"), long_text(200_000, "d")
    add_task(db, owner, brief=brief, description=description)

    found = read(db, agent)

    task = found["task"]
    assert json_size(found) <= ANSWER_BUDGET
    assert (task["briefTruncated"], task["briefLength"]) == (True, 200_000)
    assert (task["descriptionTruncated"], task["descriptionLength"]) == (True, 200_000)
    assert brief.startswith(task["brief"])
    assert description.startswith(task["description"])
    assert len(task["brief"]) > 1000
    assert found["contextPack"]["briefLength"] == 200_000


def test_a_task_that_fits_comes_whole_without_flags(
    db: Database, owner: User, agent: Actor
) -> None:
    add_task(db, owner, brief=long_text(5000), description=long_text(3000))

    task = read(db, agent)["task"]

    assert len(task["brief"]) == 5000
    assert len(task["description"]) == 3000
    assert not [key for key in task if key.endswith(("Truncated", "Length"))]


def test_windows_of_the_brief_reassemble_it_and_name_the_task(
    db: Database, owner: User, agent: Actor
) -> None:
    brief = long_text(150_000)
    made = add_task(db, owner, brief=brief)
    parts, offset = [], 0
    while offset is not None:
        window = read(db, agent, text_field="brief", text_offset=offset)
        assert json_size(window) <= ANSWER_BUDGET
        assert len(window["text"]) <= WINDOW_LIMIT
        parts.append(window["text"])
        offset = window["nextOffset"]

    assert "".join(parts) == brief
    head = {k: window[k] for k in ("taskId", "key", "revision", "field", "length")}
    assert head == {
        "taskId": made["id"],
        "key": "CRW-1",
        "revision": made["revision"],
        "field": "brief",
        "length": 150_000,
    }


def test_a_window_keeps_to_text_limit_and_ends_with_no_next_offset(
    db: Database, owner: User, agent: Actor
) -> None:
    add_task(db, owner, description="abcdefghij")

    first = read(db, agent, text_field="description", text_limit=4)
    last = read(db, agent, text_field="description", text_offset=8, text_limit=4)
    empty = read(db, agent, text_field="brief")

    assert (first["text"], first["offset"], first["nextOffset"]) == ("abcd", 0, 4)
    assert (last["text"], last["nextOffset"], last["length"]) == ("ij", None, 10)
    assert (empty["text"], empty["length"], empty["nextOffset"]) == ("", 0, None)


def test_a_window_read_hands_out_no_context_and_writes_no_receipt(
    db: Database, owner: User, agent: Actor
) -> None:
    add_task(db, owner, brief="Short brief naming sessions.")
    file(db, owner, "Sessions live in Redis.", title="Sessions")

    window = read(db, agent, text_field="brief")

    assert "contextPack" not in window
    assert count_rows(db, "context_receipts") == 0


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"text_offset": 5}, "textField"),
        ({"text_limit": 5}, "textField"),
        ({"text_field": "title"}, "textField"),
        ({"text_field": "brief", "format": "agent_brief"}, "format"),
        ({"text_field": "brief", "text_offset": 11}, "textOffset"),
        ({"text_field": "brief", "text_offset": -1}, "textOffset"),
        ({"text_field": "brief", "text_limit": 0}, "textLimit"),
        ({"text_field": "brief", "text_limit": WINDOW_LIMIT + 1}, "textLimit"),
    ],
)
def test_bad_window_arguments_are_refused_naming_the_field(
    db: Database, owner: User, agent: Actor, options: dict[str, Any], field: str
) -> None:
    add_task(db, owner, brief="0123456789")

    error = refused(queries.get_task, db=db, actor=agent, task="CRW-1", **options)

    assert error.code is ErrorCode.VALIDATION
    assert error.details["field"] == field


def test_the_task_page_reads_the_whole_text(db: Database, owner: User) -> None:
    brief = long_text(200_000)
    add_task(db, owner, brief=brief, description=brief)

    page = task_page(db, person_actor(owner), project="CRW", ref="CRW-1")
    task = get_task_view(page["read"], None)["task"]  # as the page words it

    assert task["brief"] == brief
    assert task["description"] == brief
    assert "briefTruncated" not in task


def test_a_long_checklist_is_bounded_and_still_counted_in_readiness(
    db: Database, owner: User, agent: Actor
) -> None:
    items = "\n".join(f"- [ ] step {n} " + "漢" * 300 for n in range(500))
    add_task(db, owner, brief=items)

    found = read(db, agent)

    assert json_size(found) <= ANSWER_BUDGET
    assert 0 < len(found["checklist"]) < 500
    assert found["checklistTotal"] == 500
    assert found["readiness"]["openChecklistItems"] == 500


def test_a_task_with_its_lists_at_their_limits_still_fits(
    db: Database, owner: User, agent: Actor
) -> None:
    refs = [
        {
            "id": f"ref-{n}",
            "kind": "external",
            "refId": long_text(200, str(n)),
            "audience": ["ai"],
            "note": long_text(2000, str(n)),
            "createdAt": "2026-03-01T09:00:00+00:00",
        }
        for n in range(200)
    ]
    add_task(
        db,
        owner,
        brief=long_text(200_000),
        context_refs=refs,
        external_reference_ids=[long_text(200, str(n)) for n in range(200)],
    )

    found = read(db, agent)

    task = found["task"]
    assert json_size(found) <= ANSWER_BUDGET
    assert task["contextRefsTotal"] == 200
    assert len(task["contextRefs"]) < 200
    kept = len(task["contextRefs"])
    assert [ref["id"] for ref in task["contextRefs"]] == [f"ref-{n}" for n in range(kept)]
    assert task["briefTruncated"] is True
    assert len(task["brief"]) > 1000, "the brief keeps its reserved room"


def test_many_subtasks_with_long_titles_are_bounded_and_counted(
    db: Database, owner: User, agent: Actor
) -> None:
    parent = add_task(db, owner, brief=long_text(200_000))
    for n in range(60):
        add_task(db, owner, f"sub-{n}", title="漢" * 300, parent_task_id=parent["id"])

    found = read(db, agent)

    assert json_size(found) <= ANSWER_BUDGET
    assert 0 < len(found["subtasks"]) < 60
    assert found["subtasksTotal"] == 60
    assert found["readiness"]["openSubtasks"] == 60


# --- the context pack ------------------------------------------------------------------------


def test_a_pack_bounds_many_long_missing_context_items(
    db: Database, owner: User, agent: Actor
) -> None:
    add_task(db, owner, context_item_ids=[f"missing-{n:03d}-" + "x" * 180 for n in range(200)])

    pack = read(db, agent)["contextPack"]

    assert json_size(pack) <= PACK_BUDGET
    assert 0 < len(pack["missingContextItems"]) < 200
    assert pack["missingContextItemsTotal"] == 200


def test_a_huge_named_record_is_cut_in_the_pack_and_marked(
    db: Database, owner: User, agent: Actor
) -> None:
    content = long_text(memory.MAX_CONTENT)
    record = file(db, owner, content)
    add_task(db, owner, brief="Read the huge record.", context_item_ids=[record])

    found = read(db, agent)

    pack = found["contextPack"]
    (handed,) = pack["records"]
    assert json_size(pack) <= PACK_BUDGET
    assert json_size(found) <= ANSWER_BUDGET
    assert handed["id"] == record
    assert (handed["contentTruncated"], handed["contentLength"]) == (True, memory.MAX_CONTENT)
    assert content.startswith(handed["content"])
    assert len(handed["content"]) > 1000


# --- get_project_memory ----------------------------------------------------------------------


def memory_read(db: Database, actor: Actor, **options: Any) -> dict[str, Any]:
    return memory_present.get_project_memory(db, actor, **options)


def test_a_record_reads_back_whole_in_windows(db: Database, owner: User) -> None:
    content = long_text(memory.MAX_CONTENT)
    record = file(db, owner, content)
    actor = person_actor(owner)
    parts, offset = [], 0
    while offset is not None:
        window = memory_read(db, actor, ids=[record], content_offset=offset)
        assert json_size(window) <= ANSWER_BUDGET
        parts.append(window["text"])
        offset = window["nextOffset"]

    assert "".join(parts) == content
    assert (window["recordId"], window["version"], window["length"]) == (
        record,
        1,
        memory.MAX_CONTENT,
    )


def test_a_document_reads_back_whole_in_windows(db: Database, owner: User) -> None:
    text = long_text(memory.MAX_CONTENT, "doc")
    actor = person_actor(owner)
    memory_present.set_document(db, actor, "CRW", "decisions", text, expected_version=0)
    page = memory_read(db, actor, project="CRW", document="decisions")
    (cut,) = page["documents"]
    parts = [cut["content"]]
    offset = len(cut["content"])
    while offset is not None:
        window = memory_read(db, actor, project="CRW", document="decisions", content_offset=offset)
        parts.append(window["text"])
        offset = window["nextOffset"]

    assert (cut["contentTruncated"], cut["contentLength"]) == (True, memory.MAX_CONTENT)
    assert "".join(parts) == text
    assert (window["document"], window["version"]) == ("decisions", 1)


def test_a_memory_window_keeps_to_its_limit(db: Database, owner: User) -> None:
    record = file(db, owner, "abcdefghij")

    window = memory_read(db, person_actor(owner), ids=[record], content_limit=3)

    assert (window["text"], window["offset"], window["nextOffset"]) == ("abc", 0, 3)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"ids": ["a", "b"], "content_offset": 0}, "ids"),
        ({"ids": ["RECORD"], "document": "decisions", "content_offset": 0}, "document"),
        ({"project": "CRW", "content_offset": 0}, "contentOffset"),
        ({"document": "decisions", "content_limit": 10}, "projectId"),
        ({"ids": ["RECORD"], "content_offset": 11}, "contentOffset"),
        ({"ids": ["RECORD"], "content_limit": WINDOW_LIMIT + 1}, "contentLimit"),
    ],
)
def test_bad_memory_windows_are_refused_naming_the_field(
    db: Database, owner: User, options: dict[str, Any], field: str
) -> None:
    record = file(db, owner, "abcdefghij")
    make_project(db, owner, "TWO")  # a document window needs one project
    options = {k: [record if i == "RECORD" else i for i in v] if k == "ids" else v
               for k, v in options.items()}  # fmt: skip

    error = refused(memory_present.get_project_memory, db=db, actor=person_actor(owner), **options)

    assert error.code is ErrorCode.VALIDATION
    assert error.details["field"] == field


def test_a_window_of_a_record_you_cannot_read_is_not_found(db: Database, owner: User) -> None:
    record = file(db, owner, "secret")
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "OWN")

    error = refused(
        memory_present.get_project_memory, db=db, actor=person_actor(stranger), ids=[record],
        content_offset=0,
    )  # fmt: skip

    assert error.code is ErrorCode.NOT_FOUND
