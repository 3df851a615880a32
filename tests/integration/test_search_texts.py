"""Search over spec files, artifacts and handoffs (storage/search_texts.py, migration 0026) on
both databases: each found by its words through the text index, kept in step with saves, the
trash bin left out, excerpts with markdown's marks taken out and the word marked, and a bounded
number of statements per search however much a project holds."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event, text

from crewboard.contract.handoffs import present as handoffs_present
from crewboard.domain.handoffs import Bodies
from crewboard.domain.identity.records import Actor, User
from crewboard.services.artifacts import artifacts
from crewboard.services.artifacts.artifacts import FileInput
from crewboard.services.handoffs import commands as handoffs
from crewboard.services.identity.users import person_actor
from crewboard.services.screens import search
from crewboard.services.screens.excerpts import plain_text
from crewboard.services.specs.file_lookup import FileRef
from crewboard.storage import migrate
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support.factories import make_project, make_user


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    make_project(db, user, "OPS")
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


def add_file(db: Database, me: Actor, path: str, content: str, project: str = "CRW") -> str:
    return str(made_file(db, me, path, content, project)["id"])


def made_file(
    db: Database, me: Actor, path: str, content: str, project: str = "CRW"
) -> dict[str, Any]:
    made = spec_calls.upload_spec_file(
        db, me, project=project, workspace_id=None, path=path, content=content.encode(),
        idempotency_key=None,
    )  # fmt: skip
    return dict(made.body["file"])


def add_artifact(db: Database, me: Actor, slug: str, title: str, files: dict[str, str]) -> None:
    artifacts.create_artifact(
        db, me, project="CRW", workspace_id=None, slug=slug, title=title, description="",
        files=[FileInput(path, body.encode()) for path, body in files.items()],
        idempotency_key=None, answer=lambda written: {"slug": written.artifact.slug},
    )  # fmt: skip


def add_handoff(db: Database, me: Actor, bodies: Bodies) -> dict[str, Any]:
    made = handoffs.create_handoff(
        db, me, project="CRW", workspace_id=None, bodies=bodies,
        answer=lambda made: handoffs_present.handoff_view(made.read, me),
    )  # fmt: skip
    return dict(made.body)


def found(db: Database, me: Actor, q: str, kind: str | None = None) -> dict[str, search.Group]:
    results = search.search_project(db, me, project="CRW", q=q, kind=kind)
    return {group.kind: group for group in results.groups}


def words_of(parts: list[tuple[str, bool]]) -> str:
    return "".join(text for text, _ in parts)


def marks_of(parts: list[tuple[str, bool]]) -> list[str]:
    return [text for text, hit in parts if hit]


@contextmanager
def statements(db: Database) -> Iterator[list[str]]:
    seen: list[str] = []

    def note(*args: Any) -> None:
        seen.append(str(args[2]))

    event.listen(db.engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", note)


def test_spec_files_artifacts_and_handoffs_are_found_with_rendered_marked_excerpts(
    db: Database, me: Actor
) -> None:
    file_id = add_file(
        db, me, "docs/cart.md", "# Cart\n\nThe **checkout** total uses `sum_lines()`.\n"
    )
    add_artifact(db, me, "mockup", "Checkout mockup", {"index.html": "<p>checkout page</p>"})
    handed = add_handoff(db, me, Bodies(completed="Wired the `checkout` button", next_steps="QA"))
    groups = found(db, me, "checkout")
    [spec] = groups["specs"].items
    assert spec.ref == file_id
    assert words_of(spec.title) == "docs/cart.md"
    assert words_of(spec.excerpt) == "Cart The checkout total uses sum_lines()."
    assert marks_of(spec.excerpt) == ["checkout"]
    [art] = groups["artifacts"].items
    assert (words_of(art.title), art.link) == ("Checkout mockup", "mockup")
    [hand] = groups["handoffs"].items
    assert hand.ref == handed["id"]
    assert hand.link == handed["date"]
    assert words_of(hand.excerpt).startswith("Wired the checkout button")
    assert "`" not in words_of(hand.excerpt)
    assert words_of(hand.title) == f"owner's handoff for {handed['date']}"


def test_saves_keep_the_text_in_step_and_the_trash_bin_is_not_searched(
    db: Database, me: Actor
) -> None:
    made = made_file(db, me, "notes.md", "kiwi")
    assert found(db, me, "kiwi")["specs"].total == 1
    ref = FileRef(file_id=str(made["id"]))
    spec_calls.update_spec_file(
        db, me, project="CRW", workspace_id=None, ref=ref, content=b"mango",
        expected_version=str(made["contentVersion"]), idempotency_key=None,
    )  # fmt: skip
    assert found(db, me, "kiwi")["specs"].total == 0
    assert found(db, me, "mango")["specs"].total == 1
    spec_calls.move_spec_file_to_trash(db, me, project="CRW", workspace_id=None, ref=ref)
    assert found(db, me, "mango")["specs"].total == 0
    spec_calls.restore_spec_file_from_trash(db, me, project="CRW", workspace_id=None, ref=ref)
    assert found(db, me, "mango")["specs"].total == 1


def test_a_project_never_finds_another_projects_texts(db: Database, me: Actor) -> None:
    add_file(db, me, "ops.md", "papaya", project="OPS")
    assert found(db, me, "papaya")["specs"].total == 0
    ops = search.search_project(db, me, project="OPS", q="papaya")
    assert sum(g.total for g in ops.groups if g.kind == "specs") == 1


def test_a_search_costs_the_same_few_statements_however_much_the_project_holds(
    db: Database, me: Actor
) -> None:
    add_file(db, me, "a.md", "melon one")
    with statements(db) as few:
        found(db, me, "melon")
    for number in range(30):
        add_file(db, me, f"many/{number}.md", f"melon {number}")
    add_handoff(db, me, Bodies(completed="melon"))
    with statements(db) as many:
        groups = found(db, me, "melon")
    assert groups["specs"].total == 31
    assert len(groups["specs"].items) == search.PER_KIND
    assert len(many) == len(few)
    # Two statements a kind (a page and a count) and the access check: bounded.
    assert len(many) <= 2 * len(search.KINDS) + 6, many


def test_the_text_index_goes_with_a_downgrade_and_comes_back_filled(
    db: Database, me: Actor
) -> None:
    add_handoff(db, me, Bodies(completed="lychee"))
    add_file(db, me, "docs/lychee-plan.md", "nothing here")
    migrate.downgrade(db, "0025_token_seats")
    migrate.upgrade(db)
    groups = found(db, me, "lychee")
    assert groups["handoffs"].total == 1
    # A file saved before the index came is found by its path until its next save.
    assert groups["specs"].total == 1
    assert migrate.schema_differences(db) == []
    if db.dialect == "sqlite":
        with db.engine.connect() as conn:
            conn.execute(
                text("INSERT INTO search_texts_fts(search_texts_fts) VALUES ('integrity-check')")
            )


def test_plain_text_takes_markdowns_marks_out() -> None:
    source = "## Plan\n\n- [x] **bold** and _soft_\n- see [the doc](https://x.example)\n\n> `code`"
    assert plain_text(source) == "Plan bold and soft see the doc code"
    assert plain_text("a_b_c") == "a_b_c"
