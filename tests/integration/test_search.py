"""Search across a project (services/screens/search.py) on both databases: each kind found
through its index or its bounded LIKE, access, marked excerpts, limits and paging."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from crewboard.domain.identity.access import Role
from crewboard.domain.ids import new_id
from crewboard.domain.models import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.board import notes
from crewboard.services.board import tasks as task_service
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.services.review import drafts
from crewboard.services.review.decisions import drafts_of
from crewboard.services.screens import search
from crewboard.storage.database import Database
from crewboard.storage.like import SCAN_LIMIT
from crewboard.storage.uow import UnitOfWork
from tests.support.errors import refused
from tests.support.factories import grant, make_project, make_task, make_user
from tests.support.review import review_world

XSS = '<script>window.__xss = 1</script> <img src=x onerror="alert(1)"> payload'


@pytest.fixture
def owner(db: Database) -> User:
    return make_user(db, "owner@example.com")


@pytest.fixture
def world(db: Database, owner: User) -> dict[str, Any]:
    """CRW (review_world: a record "Sessions live in Redis", task CRW-1, an agent token) with a
    hand-in, a comment and an agent update that mention Redis."""
    made = review_world(db, owner)
    agent = tokens.authenticate_token(db, made["secret"])
    hand_in(db, agent, "Cache warmed", "The **Redis** cache is warmed at start-up.")
    notes.post_comment(
        db, person_actor(owner), task="CRW-1", workspace_id=None, idempotency_key="c-1",
        content="Check the redis timeout first.",
    )  # fmt: skip
    notes.agent_update(
        db, agent, task="CRW-1", workspace_id=None, idempotency_key="u-1",
        content="Reading the REDIS client code.",
    )  # fmt: skip
    return {**made, "agent": agent}


def hand_in(db: Database, agent: Actor, title: str, content: str, task: str = "CRW-1") -> str:
    made = drafts.create_draft(
        db, agent, task=task, project=task.split("-", maxsplit=1)[0], workspace_id=None, title=title,
        summary="A hand-in", content=content,
    )  # fmt: skip
    return str(made.body["draft"]["id"])


def find(db: Database, actor: Actor, q: str, **options: Any) -> search.SearchResults:
    return search.search_project(db, actor, project=options.pop("project", "CRW"), q=q, **options)


def group(results: search.SearchResults, kind: str) -> search.Group:
    return next(g for g in results.groups if g.kind == kind)


def marks(parts: list[tuple[str, bool]]) -> list[str]:
    return [text for text, hit in parts if hit]


def test_one_search_finds_each_kind_with_the_words_marked(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    make_task(db, owner, "CRW", "Move sessions to Redis cluster")

    found = find(db, person_actor(owner), "redis")

    assert [g.kind for g in found.groups] == ["tasks", "handins", "memory", "comments"]
    tasks = group(found, "tasks")
    assert [item.ref for item in tasks.items] == ["CRW-2"]
    assert marks(tasks.items[0].title) == ["Redis"]
    handins = group(found, "handins")
    assert handins.total == 1
    assert not handins.cut
    assert marks(handins.items[0].excerpt) == ["Redis"]
    assert handins.items[0].task_key == "CRW-1"
    assert handins.items[0].status == "pending"
    records = group(found, "memory")
    assert [item.ref for item in records.items] == [world["record"]]
    assert marks(records.items[0].title) == ["Redis"]
    assert marks(records.items[0].excerpt) == ["Redis"]
    comments = group(found, "comments")
    assert comments.total == 2
    assert {item.note_kind for item in comments.items} == {"comment", "agent_update"}
    assert {item.task_key for item in comments.items} == {"CRW-1"}
    assert sorted(m for item in comments.items for m in marks(item.excerpt)) == ["REDIS", "redis"]
    assert found.total == 5


def test_every_word_must_match_in_each_kind(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    found = find(db, person_actor(owner), "redis timeout")
    assert {g.kind: g.total for g in found.groups} == {
        "tasks": 0,
        "handins": 0,
        "memory": 0,
        "comments": 1,
    }
    # The task's brief says "login page loops": both words, in the index behind the board's q.
    by_brief = group(find(db, person_actor(owner), "loops LOGIN"), "tasks")
    assert [item.ref for item in by_brief.items] == ["CRW-1"]
    assert sorted(marks(by_brief.items[0].excerpt)) == ["login", "loops"]


def test_a_person_without_access_to_a_project_finds_nothing_from_it(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    other = make_user(db, "other@example.com")
    make_project(db, other, "OTH")
    make_task(db, other, "OTH", "Redis in the other project")
    as_other = person_actor(other)
    hand_in(db, as_other, "Redis hand-in of OTH", "Redis.", task="OTH-1")
    notes.post_comment(
        db, as_other, task="OTH-1", workspace_id=None, idempotency_key="oth-c",
        content="Redis comment of OTH.",
    )  # fmt: skip
    db.write(
        lambda uow: memory.file_record(
            uow, as_other, uow.projects.get_by_key("OTH"), title="Redis record of OTH",
            summary="", content="Redis.", collection=None, document=None, source_draft_id=None,
        )
    )  # fmt: skip
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)

    # A member of OTH only: CRW does not exist for them.
    refused(ErrorCode.NOT_FOUND, find, db, person_actor(other), "redis")
    # A reader of CRW finds CRW's rows, and never OTH's, which they cannot open.
    seen = find(db, person_actor(reader), "redis")
    assert {g.kind: g.total for g in seen.groups} == {
        "tasks": 0,
        "handins": 1,
        "memory": 1,
        "comments": 2,
    }
    assert not any("OTH" in str(item) for g in seen.groups for item in g.items)
    refused(ErrorCode.NOT_FOUND, find, db, person_actor(reader), "redis", project="OTH")
    # And a search of OTH by its member holds OTH's task only.
    theirs = find(db, as_other, "redis", project="OTH")
    assert {g.kind: g.total for g in theirs.groups} == {
        "tasks": 1,
        "handins": 1,
        "memory": 1,
        "comments": 1,
    }
    assert [item.ref for item in group(theirs, "tasks").items] == ["OTH-1"]


def test_agent_text_stays_plain_text_and_only_the_searched_word_is_marked(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    hand_in(db, world["agent"], XSS, XSS)

    found = group(find(db, person_actor(owner), "payload"), "handins")

    item = found.items[0]
    assert marks(item.title) == ["payload"]
    # The markup is one unmarked run of text: the template escapes it as any text.
    assert item.title[0] == (
        '<script>window.__xss = 1</script> <img src=x onerror="alert(1)"> ',
        False,
    )
    assert "".join(text for text, _ in item.excerpt).endswith(XSS)


def test_limits_are_refused_naming_the_field_and_an_empty_query_finds_nothing(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    actor = person_actor(owner)
    too_long = refused(ErrorCode.VALIDATION, find, db, actor, "redis " * 40)
    assert too_long.details["field"] == "q"
    assert "200" in too_long.message
    kind = refused(ErrorCode.VALIDATION, find, db, actor, "redis", kind="files")
    assert kind.details == {"field": "kind", "accepted": list(search.KINDS)}
    offset = refused(ErrorCode.VALIDATION, find, db, actor, "redis", kind="tasks", offset=-1)
    assert offset.details["field"] == "offset"

    for blank in ("", "   ", "!!! ---", "_ __"):
        empty = find(db, actor, blank)
        assert (empty.words, empty.groups, empty.total) == ([], [], 0)
    assert find(db, actor, "x" * 200).groups  # exactly the limit is fine


def test_like_wildcards_in_a_word_match_only_themselves(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    hand_in(db, world["agent"], "Renamed cache_key", "Use cache_key everywhere.")
    hand_in(db, world["agent"], "Renamed cacheXkey", "Use cacheXkey everywhere.")

    found = group(find(db, person_actor(owner), "cache_key"), "handins")

    assert [marks(item.title) for item in found.items] == [["cache_key"]]


def test_ten_of_each_kind_then_more_by_kind_page(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    for number in range(12):
        make_task(db, owner, "CRW", f"Widget part {number}")
    actor = person_actor(owner)

    overview = group(find(db, actor, "widget"), "tasks")
    assert (len(overview.items), overview.total, overview.more) == (10, 12, True)
    assert overview.items[0].ref == "CRW-13"  # newest first

    rest = find(db, actor, "widget", kind="tasks", offset=10)
    assert [g.kind for g in rest.groups] == ["tasks"]
    page = rest.groups[0]
    assert [item.ref for item in page.items] == ["CRW-3", "CRW-2"]
    assert (page.total, page.more) == (12, False)


def test_a_hand_in_search_reads_only_the_newest_hand_ins_and_says_so(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    old = hand_in(db, world["agent"], "Ancient finding", "An xylophone in the logs.")

    def fill(uow: UnitOfWork) -> None:  # SCAN_LIMIT newer hand-ins, written in one go
        repo = drafts_of(uow)
        first = repo.get(old)
        assert first is not None
        for n in range(SCAN_LIMIT):
            later = first.created_at + timedelta(seconds=n + 1)
            repo.add(
                replace(
                    first, id=new_id("drf"), title=f"Filler {n}", content="Nothing here.",
                    idempotency_key=None, created_at=later, updated_at=later,
                )
            )  # fmt: skip

    db.write(fill)
    found = group(find(db, person_actor(owner), "xylophone"), "handins")
    assert (found.total, found.cut) == (0, True)
    fillers = group(find(db, person_actor(owner), "filler 1999"), "handins")
    assert fillers.total == 1


def test_a_token_that_cannot_open_the_project_finds_nothing(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    make_project(db, owner, "TWO")
    issued = tokens.issue_token(
        db, person_actor(owner), kind="agent", project="TWO", scopes=["read"]
    )
    capped = tokens.authenticate_token(db, issued.secret)
    refused(ErrorCode.NOT_FOUND, find, db, capped, "redis")
    task_service.create_task(
        db, person_actor(owner), project="TWO", workspace_id=None, idempotency_key="two-1",
        title="Redis in TWO",
    )  # fmt: skip
    assert find(db, capped, "redis", project="TWO").total == 1
