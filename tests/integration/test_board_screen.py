"""The web board's reads and writes on both databases: each card's signals (overdue, blocked,
a hand-in waiting, who holds it) in a bounded number of statements, sort and grouping, the bulk
bar's change (each card saved or refused on its own) and a person's saved views."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event

from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import (
    HumanIdentityRequired,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    ValidationFailed,
)
from crewboard.services.board import claims, saved_views, task_updates, tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.screens.board import BoardFilters, board_columns
from crewboard.services.screens.board_bulk import BulkChange, bulk_change
from crewboard.storage.database import Database
from tests.integration.test_drafts import hand_in, owner, world
from tests.support import task_reads
from tests.support.factories import count_rows, grant, make_user

__all__ = ["owner", "world"]  # fixtures shared with test_drafts

KEYS = iter(range(1_000_000))


def new(db: Database, actor: Actor, title: str, **fields: Any) -> dict[str, Any]:
    made = tasks.create_task(
        db, actor, project="CRW", workspace_id=None, idempotency_key=f"b{next(KEYS)}",
        title=title, **fields,
    )  # fmt: skip
    return made.body["task"]  # type: ignore[no-any-return]


def task_of(db: Database, actor: Actor, ref: str) -> dict[str, Any]:
    found = task_reads.get_task(db, actor, task=ref, include_context_pack=False)
    assert isinstance(found, dict)
    return found["task"]  # type: ignore[no-any-return]


def tiles(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tile["key"]: tile for col in view["columns"] for tile in col["tasks"]}


@contextmanager
def statements(db: Database) -> Iterator[list[str]]:
    """The SQL statements run inside the block."""
    seen: list[str] = []

    def note(*args: Any) -> None:
        seen.append(str(args[2]))

    event.listen(db.engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", note)


def test_cards_carry_their_signals_read_in_the_same_statements_for_few_and_many(
    db: Database, owner: User, world: dict[str, Any], clock: ManualClock
) -> None:
    me = person_actor(owner)
    hand_in(db, world["agent"], idempotency_key="h-1")  # CRW-1 waits in review
    blocker = new(db, me, "Blocker")  # CRW-2
    new(db, me, "Blocked", blocked_by_task_ids=[blocker["id"]])  # CRW-3
    yesterday = (clock.now() - timedelta(days=1)).date().isoformat()
    new(db, me, "Late", due_date=yesterday)  # CRW-4
    new(db, me, "Late but done", due_date=yesterday, status="done")  # CRW-5
    agent = tokens.authenticate_token(
        db,
        tokens.issue_token(
            db, me, kind="agent", scopes=["read", "tasks.manage"], project="CRW", name="Night"
        ).secret,
    )
    held = claims.claim_task(db, agent, task="CRW-4", workspace_id=None, lease_seconds=600)

    with statements(db) as few:
        shown = tiles(board_columns(db, me, project="CRW", filters=BoardFilters()))
    assert shown["CRW-1"]["handInWaiting"] is True
    assert shown["CRW-3"]["blockers"] == 1
    assert shown["CRW-2"]["blockers"] == 0  # the blocker is not blocked itself
    assert shown["CRW-4"]["overdue"] is True
    assert shown["CRW-5"]["overdue"] is False  # settled work is not late
    assert shown["CRW-4"]["claim"] == {
        "by": "Coder",
        "until": held.claim.expires_at.isoformat(),
    }  # fmt: skip  (the token acts as the project's only AI seat)
    assert not any(shown[key]["handInWaiting"] for key in ("CRW-2", "CRW-3", "CRW-4"))
    assert "claim" not in shown["CRW-3"]

    # Forty more tasks, some blocked, overdue and held: the same number of statements.
    for n in range(40):
        new(db, me, f"More {n}", due_date=yesterday, blocked_by_task_ids=[blocker["id"]])
        if n % 10 == 0:
            claims.claim_task(db, agent, task=f"CRW-{6 + n}", workspace_id=None)
    with statements(db) as many:
        again = tiles(board_columns(db, me, project="CRW", filters=BoardFilters()))
    more = [tile for tile in again.values() if tile["title"].startswith("More")]
    assert len(more) > 15
    assert all(tile["blockers"] == 1 and tile["overdue"] for tile in more)
    assert sum(1 for tile in more if "claim" in tile) >= 1
    assert len(many) == len(few)

    # Finishing the blocker clears the mark.
    task_reads_now = task_of(db, me, "CRW-2")
    tasks_done = task_updates.update_task(
        db, me, project="CRW", workspace_id=None, idempotency_key=None, task_id="CRW-2",
        expected_revision=task_reads_now["revision"], patch={"status": "done"},
    )  # fmt: skip
    assert tasks_done.body["task"]["status"] == "done"
    assert (
        tiles(board_columns(db, me, project="CRW", filters=BoardFilters()))["CRW-3"]["blockers"]
        == 0
    )


def test_columns_sort_and_group_as_asked_and_refuse_unknown_orders(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    me = person_actor(owner)
    new(db, me, "banana", priority="low")
    new(db, me, "Apple", priority="high", assignee_id=owner.id)
    new(db, me, "cherry", priority="medium", tags=["ui"])

    def backlog(**filters: Any) -> dict[str, Any]:
        view = board_columns(db, me, project="CRW", filters=BoardFilters(**filters))
        return next(col for col in view["columns"] if col["status"] == "backlog")

    titles = [tile["title"] for tile in backlog(sort="title")["tasks"]]
    assert titles == ["Apple", "banana", "cherry"]
    assert [t["priority"] for t in backlog(sort="priority")["tasks"]] == ["high", "medium", "low"]
    assert [t["title"] for t in backlog(sort="created")["tasks"]] == ["cherry", "Apple", "banana"]
    grouped = backlog(group="assignee")["groups"]
    assert [(g["label"], len(g["tasks"])) for g in grouped] == [
        (owner.display_name, 1), ("Unassigned", 2),
    ]  # fmt: skip
    by_tag = backlog(group="tag", sort="title")["groups"]
    assert [(g["label"], [t["title"] for t in g["tasks"]]) for g in by_tag] == [
        ("#ui", ["cherry"]), ("No tag", ["Apple", "banana"]),
    ]  # fmt: skip
    for field, value in (("sort", "colour"), ("group", "mood")):
        with pytest.raises(ValidationFailed) as refused:
            board_columns(db, me, project="CRW", filters=BoardFilters(**{field: value}))
        assert refused.value.details["field"] == field
        assert refused.value.details["accepted"]


def test_the_bulk_change_saves_each_card_it_can_and_names_each_refusal_with_its_reason(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    me = person_actor(owner)
    hand_in(db, world["agent"], idempotency_key="h-1")  # CRW-1 waits in review
    a = new(db, me, "Alpha", assignee_id=world["seat"])  # CRW-2
    b = new(db, me, "Bravo")  # CRW-3, nobody does it
    c = new(db, me, "Charlie", tags=["old", "keep"])  # CRW-4
    cards = [("CRW-2", a["revision"]), ("CRW-3", b["revision"])]

    moved = bulk_change(
        db, me, project="CRW", workspace_id=None, cards=cards,
        change=BulkChange(status="in_progress"),
    )  # fmt: skip
    assert [(o.key, o.error is None) for o in moved] == [("CRW-2", True), ("CRW-3", False)]
    assert moved[0].changed == ["status"]
    assert moved[1].error is not None
    assert moved[1].error.details["field"] == "assigneeId"  # the fix the board offers
    assert task_of(db, me, "CRW-2")["status"] == "in_progress"
    assert task_of(db, me, "CRW-3")["status"] == "backlog"

    # Assignee and tags, with a stale revision on one card: that one alone is refused.
    cards = [("CRW-3", b["revision"]), ("CRW-4", c["revision"]), ("CRW-2", a["revision"])]
    changed = bulk_change(
        db, me, project="CRW", workspace_id=None, cards=cards,
        change=BulkChange(
            status="in_progress", assignee=owner.id, add_tags=("ui", "UI"), remove_tags=("OLD",)
        ),
    )  # fmt: skip
    assert [(o.key, o.error is None) for o in changed] == [
        ("CRW-3", True), ("CRW-4", True), ("CRW-2", False),
    ]  # fmt: skip
    assert changed[2].error is not None
    assert changed[2].error.code.value == "REVISION_CONFLICT"
    three = task_of(db, me, "CRW-3")
    assert (three["status"], three["assigneeId"], three["tags"]) == (
        "in_progress",
        owner.id,
        ["ui"],
    )
    assert task_of(db, me, "CRW-4")["tags"] == ["keep", "ui"]

    # Approved while a hand-in waits is refused for that card; unknown cards are named.
    settled = bulk_change(
        db, me, project="CRW", workspace_id=None,
        cards=[("CRW-1", 99), ("CRW-404", 1)], change=BulkChange(status="approved"),
    )  # fmt: skip
    assert all(o.error is not None for o in settled)
    assert settled[0].error is not None
    assert settled[0].error.details["field"] == "status"
    assert settled[1].error is not None
    assert settled[1].error.code.value == "NOT_FOUND"
    assert task_of(db, me, "CRW-1")["status"] == "review"


def test_the_bulk_change_is_refused_whole_for_bad_input_and_for_a_reader(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    me = person_actor(owner)
    made = new(db, me, "Alpha")
    card = [("CRW-2", made["revision"])]
    bad: list[tuple[list[tuple[str, int]], BulkChange, str]] = [
        ([], BulkChange(status="done"), "tasks"),
        (card, BulkChange(), "change"),
        (card, BulkChange(status="limbo"), "status"),
        (card, BulkChange(add_tags=("",)), "addTags"),
    ]
    for cards, change, field in bad:
        with pytest.raises(ValidationFailed) as refused:
            bulk_change(db, me, project="CRW", workspace_id=None, cards=cards, change=change)
        assert refused.value.details["field"] == field
    with pytest.raises(LimitExceeded):
        bulk_change(
            db, me, project="CRW", workspace_id=None, cards=card,
            change=BulkChange(add_tags=("x" * 49,)),
        )  # fmt: skip
    with pytest.raises(LimitExceeded):
        bulk_change(
            db, me, project="CRW", workspace_id=None, cards=card * 201,
            change=BulkChange(status="done"),
        )  # fmt: skip
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    with pytest.raises(PermissionDenied):
        bulk_change(
            db, person_actor(reader), project="CRW", workspace_id=None, cards=card,
            change=BulkChange(status="done"),
        )  # fmt: skip
    assert task_of(db, me, "CRW-2")["status"] == "backlog"


def test_saved_views_are_a_persons_own_kept_by_name_and_deleted(
    db: Database, owner: User, world: dict[str, Any]
) -> None:
    me = person_actor(owner)
    made = saved_views.save_view(
        db, me, project="CRW", name="  My   open work ", query="assignee=me&sort=due"
    )
    assert made.name == "My open work"
    again = saved_views.save_view(
        db, me, project="CRW", name="My open work", query="assignee=me&sort=priority"
    )
    assert again.id == made.id  # the same name replaces the query
    saved_views.save_view(db, me, project="CRW", name="all ui", query="tag=ui&group=assignee")
    listed = saved_views.list_saved_views(db, me, project="CRW")
    assert [(v.name, v.query) for v in listed] == [
        ("all ui", "tag=ui&group=assignee"), ("My open work", "assignee=me&sort=priority"),
    ]  # fmt: skip

    other = make_user(db, "other@example.com")
    grant(db, owner, "CRW", other, Role.READ)
    them = person_actor(other)
    assert saved_views.list_saved_views(db, them, project="CRW") == []
    with pytest.raises(NotFound):
        saved_views.delete_view(db, them, project="CRW", view_id=made.id)
    gone = saved_views.delete_view(db, me, project="CRW", view_id=made.id)
    assert gone.name == "My open work"
    assert [v.name for v in saved_views.list_saved_views(db, me, project="CRW")] == ["all ui"]
    assert count_rows(db, "board_views") == 1

    for name, field in (("   ", "name"), ("x" * 61, "name")):
        with pytest.raises(ValidationFailed) as refused:
            saved_views.save_view(db, me, project="CRW", name=name, query="")
        assert refused.value.details["field"] == field
    with pytest.raises(ValidationFailed) as long_query:
        saved_views.save_view(db, me, project="CRW", name="long", query="q=" + "x" * 600)
    assert long_query.value.details["field"] == "query"
    with pytest.raises(HumanIdentityRequired):
        saved_views.save_view(db, world["agent"], project="CRW", name="agent", query="")
    for n in range(29):
        saved_views.save_view(db, me, project="CRW", name=f"view {n}", query="")
    with pytest.raises(LimitExceeded):
        saved_views.save_view(db, me, project="CRW", name="one too many", query="")
    stranger = person_actor(make_user(db, "stranger@example.com"))
    with pytest.raises(NotFound):
        saved_views.list_saved_views(db, stranger, project="CRW")
