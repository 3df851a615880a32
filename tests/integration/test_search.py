"""Search across a project (services/screens/search.py) on both databases: each kind found
through its text index (whole words), access, marked excerpts, limits and paging; the hand-in
and comment indexes of migration 0012 (scope, query syntax, triggers, downgrade)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, text

from crewboard.contract.board import present_notes
from crewboard.contract.review.present import hand_in_view
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.ids import new_id
from crewboard.errors import ErrorCode
from crewboard.services.board import notes
from crewboard.services.board import tasks as task_service
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.services.review import drafts
from crewboard.services.review.decisions import drafts_of
from crewboard.services.screens import search
from crewboard.storage import migrate
from crewboard.storage.board import tables as board_tables
from crewboard.storage.board.search import search_comments
from crewboard.storage.database import Database
from crewboard.storage.review.search import search_drafts
from crewboard.storage.uow import UnitOfWork
from tests.support.errors import refused
from tests.support.factories import grant, make_project, make_task, make_user
from tests.support.review import review_world

NONE_OF_THE_TEXT_KINDS = {"specs": 0, "artifacts": 0, "handoffs": 0}
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
        answer=present_notes.comment_answer,
    )  # fmt: skip
    notes.agent_update(
        db, agent, task="CRW-1", workspace_id=None, idempotency_key="u-1",
        content="Reading the REDIS client code.",
        answer=present_notes.agent_update_answer,
    )  # fmt: skip
    return {**made, "agent": agent}


def hand_in(db: Database, agent: Actor, title: str, content: str, task: str = "CRW-1") -> str:
    made = drafts.create_draft(
        db, agent, task=task, project=task.split("-", maxsplit=1)[0], workspace_id=None, title=title,
        summary="A hand-in", content=content, answer=hand_in_view,
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

    assert [g.kind for g in found.groups] == [
        *("tasks", "handins", "memory", "comments", "specs", "artifacts", "handoffs")
    ]
    tasks = group(found, "tasks")
    assert [item.ref for item in tasks.items] == ["CRW-2"]
    assert marks(tasks.items[0].title) == ["Redis"]
    handins = group(found, "handins")
    assert handins.total == 1
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
        **NONE_OF_THE_TEXT_KINDS,
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
        answer=present_notes.comment_answer,
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
        **NONE_OF_THE_TEXT_KINDS,
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
        **NONE_OF_THE_TEXT_KINDS,
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


def test_an_underscore_joins_words_and_is_no_wildcard(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    """`cache_key` is the words "cache" and "key" to both indexes (no LIKE `_` wildcard), and a
    word matches whole only: a part of one finds nothing, in any kind."""
    hand_in(db, world["agent"], "Renamed cache_key", "Use cache_key everywhere.")
    hand_in(db, world["agent"], "Renamed cacheXkey", "Use cacheXkey everywhere.")

    found = group(find(db, person_actor(owner), "cache_key"), "handins")

    assert [marks(item.title) for item in found.items] == [["cache_key"]]
    assert find(db, person_actor(owner), "redi").total == 0
    assert group(find(db, person_actor(owner), "cache"), "handins").total == 2  # and Redis's


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


def test_an_old_hand_in_and_comment_are_found_behind_thousands_of_newer_ones(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    """The text indexes reach every row: no window of the newest rows (the LIKE search read
    only the newest 2,000 of a kind)."""
    old = hand_in(db, world["agent"], "Ancient finding", "An xylophone in the logs.")
    notes.post_comment(
        db, person_actor(owner), task="CRW-1", workspace_id=None, idempotency_key="c-old",
        content="The xylophone bug again.",
        answer=present_notes.comment_answer,
    )  # fmt: skip
    newer = 2_500

    def fill(uow: UnitOfWork) -> None:  # newer hand-ins and comments, written in one go
        repo = drafts_of(uow)
        first = repo.get(old)
        assert first is not None
        comment = uow.conn.execute(
            select(board_tables.task_comments).where(
                board_tables.task_comments.c.content == "The xylophone bug again."
            )
        ).one()
        for n in range(newer):
            later = first.created_at + timedelta(seconds=n + 1)
            repo.add(
                replace(
                    first, id=new_id("drf"), title=f"Filler {n}", content="Nothing here.",
                    idempotency_key=None, created_at=later, updated_at=later,
                )
            )  # fmt: skip
        uow.conn.execute(
            board_tables.task_comments.insert(),
            [
                {
                    **comment._asdict(),
                    "id": new_id("cmt"),
                    "content": f"Filler note {n}.",
                    "created_at": comment.created_at + timedelta(seconds=n + 1),
                }
                for n in range(newer)
            ],
        )

    db.write(fill)
    found = find(db, person_actor(owner), "xylophone")
    assert group(found, "handins").total == 1
    assert [item.ref for item in group(found, "handins").items] == [old]
    assert marks(group(found, "handins").items[0].excerpt) == ["xylophone"]
    assert group(found, "comments").total == 1
    assert marks(group(found, "comments").items[0].excerpt) == ["xylophone"]
    # Exact totals and pages over the whole project, newest first.
    fillers = find(db, person_actor(owner), "filler", kind="handins", offset=2_475)
    page = fillers.groups[0]
    assert (page.total, len(page.items), page.more) == (newer, 25, False)
    assert marks(page.items[0].title) == ["Filler"]
    assert "".join(text for text, _ in page.items[-1].title) == "Filler 0"
    notes_found = group(find(db, person_actor(owner), "filler note"), "comments")
    assert notes_found.total == newer
    assert "".join(text for text, _ in notes_found.items[0].excerpt) == f"Filler note {newer - 1}."


def test_a_project_never_finds_another_projects_hand_ins_or_comments(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    """Each index holds the row's project beside its words: the same words in another project
    are neither listed nor counted, even by the member of both."""
    make_project(db, owner, "OTH")
    make_task(db, owner, "OTH", "Other work")
    as_owner = person_actor(owner)
    for n in range(3):
        hand_in(db, as_owner, f"Redis hand-in {n} of OTH", "Redis.", task="OTH-1")
        notes.post_comment(
            db, as_owner, task="OTH-1", workspace_id=None, idempotency_key=f"oth-{n}",
            content="Redis comment of OTH.",
            answer=present_notes.comment_answer,
        )  # fmt: skip

    ours = find(db, as_owner, "redis")
    assert (group(ours, "handins").total, group(ours, "comments").total) == (1, 2)
    assert not any("OTH" in str(item) for g in ours.groups for item in g.items)
    theirs = find(db, as_owner, "redis", project="OTH")
    assert (group(theirs, "handins").total, group(theirs, "comments").total) == (3, 3)
    assert {item.task_key for item in group(theirs, "handins").items} == {"OTH-1"}
    assert {item.task_key for item in group(theirs, "comments").items} == {"OTH-1"}


FTS_SYNTAX = 'Quoted "AND" star* NOT -minus colon:word NEAR(x) ^caret OR'


def test_words_with_query_syntax_are_matched_as_words(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    """Quotes, `*`, AND/OR/NOT, `-`, `:` and the like in a word are never FTS5 or tsquery
    syntax, whether from the search box or handed to storage as they are."""
    agent = world["agent"]
    hand_in(db, agent, "Query syntax", FTS_SYNTAX)
    notes.post_comment(
        db, person_actor(owner), task="CRW-1", workspace_id=None, idempotency_key="c-syntax",
        content=FTS_SYNTAX,
        answer=present_notes.comment_answer,
    )  # fmt: skip
    actor = person_actor(owner)

    for q in (FTS_SYNTAX, '"and" star*', "AND NOT OR", "-minus", "colon:word", "near(x) ^caret"):
        found = find(db, actor, q)
        assert (group(found, "handins").total, group(found, "comments").total) == (1, 1), q
    assert find(db, actor, "star* OR redis").total == 0  # OR is a word, and must appear too

    project_id = db.read(lambda uow: uow.projects.get_by_key("CRW")).id
    raw = ['"and"', "star*", "AND", "-minus", "colon:word", "near(x)", "^caret", "NOT"]
    with db.engine.connect() as conn:
        for words in [*([word] for word in raw), raw]:
            assert search_drafts(conn, project_id, words, limit=5, offset=0).total == 1, words
            assert search_comments(conn, project_id, words, limit=5, offset=0).total == 1, words
        # A column filter in a word is a word too: "content" is in neither text.
        for words in (["{content}"], ["content", "minus"], ["minus", "{title} : redis"]):
            assert search_drafts(conn, project_id, words, limit=5, offset=0).total == 0, words
            assert search_comments(conn, project_id, words, limit=5, offset=0).total == 0, words


def test_an_edited_or_deleted_hand_in_or_comment_is_searched_as_it_now_is(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    """The triggers (SQLite) and the expression index (PostgreSQL) follow every change."""
    actor = person_actor(owner)
    draft = hand_in(db, world["agent"], "Before the edit", "A walrus in the cache.")

    def edit(uow: UnitOfWork) -> None:
        repo = drafts_of(uow)
        repo.update(draft, uow.clock.now(), title="After the edit", content="A narwhal.")
        repo.update(draft, uow.clock.now(), status="rejected")  # not indexed: changes nothing
        uow.conn.execute(
            text("UPDATE task_comments SET content = 'Check the memcached timeout first.' "
                 "WHERE content = 'Check the redis timeout first.'")
        )  # fmt: skip

    db.write(edit)
    assert group(find(db, actor, "walrus"), "handins").total == 0
    narwhal = group(find(db, actor, "narwhal"), "handins")
    assert [(item.ref, item.status) for item in narwhal.items] == [(draft, "rejected")]
    assert marks(narwhal.items[0].excerpt) == ["narwhal"]
    comments = group(find(db, actor, "redis"), "comments")
    assert [item.note_kind for item in comments.items] == ["agent_update"]
    assert group(find(db, actor, "memcached timeout"), "comments").total == 1

    with db.engine.begin() as conn:
        conn.execute(text("DELETE FROM drafts WHERE id = :id"), {"id": draft})
        conn.execute(text("DELETE FROM task_comments WHERE content LIKE '%memcached%'"))
    assert group(find(db, actor, "narwhal"), "handins").total == 0
    assert group(find(db, actor, "memcached"), "comments").total == 0
    assert group(find(db, actor, "redis"), "comments").total == 1


def test_the_hand_in_and_comment_indexes_go_with_a_downgrade_and_come_back_filled(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    """Migration 0012 builds both indexes from the rows already there, and its downgrade
    drops them; on SQLite `repair_search_index` checks and rebuilds them too."""
    actor = person_actor(owner)
    migrate.downgrade(db, "0011_inbox_reads")
    assert _index_objects(db) == set()
    hand_in(db, world["agent"], "Written while unindexed", "A pelican.")
    notes.post_comment(
        db, actor, task="CRW-1", workspace_id=None, idempotency_key="c-pelican",
        content="Pelican spotted.",
        answer=present_notes.comment_answer,
    )  # fmt: skip
    migrate.upgrade(db)
    assert _index_objects(db) == (
        {"drafts_fts", "comments_fts"}
        if db.dialect == "sqlite"
        else {"ix_drafts_search", "ix_task_comments_search"}
    )
    assert migrate.schema_differences(db) == []
    found = find(db, actor, "pelican")
    assert (group(found, "handins").total, group(found, "comments").total) == (1, 1)
    found = find(db, actor, "redis")
    assert (group(found, "handins").total, group(found, "comments").total) == (1, 2)

    assert migrate.repair_search_index(db) is False
    if db.dialect == "sqlite":  # what a restore from an SQL dump can do to rowids
        with db.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE drafts SET rowid = rowid + 1000")
            conn.exec_driver_sql("UPDATE task_comments SET rowid = rowid + 1000")
        assert migrate.repair_search_index(db) is True
        assert migrate.repair_search_index(db) is False
    found = find(db, actor, "pelican")
    assert (group(found, "handins").total, group(found, "comments").total) == (1, 1)


def _index_objects(db: Database) -> set[str]:
    """The hand-in and comment text indexes present: FTS5 tables, or GIN indexes."""
    if db.dialect == "sqlite":
        query = "SELECT name FROM sqlite_master WHERE name IN ('drafts_fts', 'comments_fts')"
    else:
        query = (
            "SELECT indexname FROM pg_indexes "
            "WHERE indexname IN ('ix_drafts_search', 'ix_task_comments_search')"
        )
    with db.engine.connect() as conn:
        return set(conn.exec_driver_sql(query).scalars())


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
