"""The state page: revisions, conflicts, exact retries, versions and restore."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from crewboard.contract.projects import present
from crewboard.domain.identity.access import Role
from crewboard.errors import LimitExceeded, NotFound, PermissionDenied, RevisionConflict
from crewboard.services.board import tasks
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import grant, make_project, make_user, token_actor


@pytest.fixture
def owner(db: Database):  # type: ignore[no-untyped-def]
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


def _save(db: Database, actor, content: str, expected: int):  # type: ignore[no-untyped-def]
    return present.update_project_state(
        db, actor, project="CRW", workspace_id=None, content=content, expected_revision=expected
    )


def test_an_empty_page_has_revision_0_and_the_first_save_makes_1(db: Database, owner) -> None:  # type: ignore[no-untyped-def]
    actor = person_actor(owner)
    empty = present.get_project_state(db, actor, project="CRW")
    assert (empty["content"], empty["revision"], empty["updatedBy"]) == ("", 0, None)
    assert empty["canEdit"] is True
    assert set(empty["taskCounts"]) == {
        "backlog",
        "ready_for_ai",
        "in_progress",
        "blocked",
        "review",
        "approved",
        "done",
    }
    saved = _save(db, actor, "# Where we are", 0)
    assert saved["revision"] == 1
    page = present.get_project_state(db, actor, project="CRW")
    assert page["content"] == "# Where we are"
    assert page["updatedBy"]["userId"] == owner.id


def test_a_stale_revision_is_a_conflict_naming_the_current_one(db: Database, owner) -> None:  # type: ignore[no-untyped-def]
    actor = person_actor(owner)
    _save(db, actor, "one", 0)
    _save(db, actor, "two", 1)
    with pytest.raises(RevisionConflict) as caught:
        _save(db, actor, "three", 1)
    assert caught.value.details["currentRevision"] == 2
    assert caught.value.details["updatedBy"]["userId"] == owner.id
    assert caught.value.details["updatedAt"]


def test_an_exact_retry_returns_that_save(db: Database, owner) -> None:  # type: ignore[no-untyped-def]
    actor = person_actor(owner)
    first = _save(db, actor, "one", 0)
    retry = _save(db, actor, "one", 0)
    assert retry["revision"] == first["revision"] == 1
    assert retry["replayed"] is True
    assert present.list_state_versions(db, actor, project="CRW")["total"] == 1


def test_the_same_text_from_another_writer_is_still_a_conflict(db: Database, owner) -> None:  # type: ignore[no-untyped-def]
    other = make_user(db, "other@example.com")
    grant(db, owner, "CRW", other, Role.WRITE)
    _save(db, person_actor(owner), "one", 0)
    with pytest.raises(RevisionConflict):
        _save(db, person_actor(other), "one", 0)


def test_content_over_5000_characters_is_refused(db: Database, owner) -> None:  # type: ignore[no-untyped-def]
    actor = person_actor(owner)
    _save(db, actor, "x" * 5000, 0)
    with pytest.raises(LimitExceeded) as caught:
        _save(db, actor, "x" * 5001, 1)
    assert caught.value.details == {"field": "content", "limit": 5000, "actual": 5001}


def test_a_reader_cannot_edit_and_is_told_so(db: Database, owner) -> None:  # type: ignore[no-untyped-def]
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    page = present.get_project_state(db, person_actor(reader), project="CRW")
    assert page["canEdit"] is False
    with pytest.raises(PermissionDenied):
        _save(db, person_actor(reader), "mine", 0)
    read_token = token_actor(db, owner, ["read"])
    assert present.get_project_state(db, read_token, project="CRW")["canEdit"] is False


def test_every_version_is_kept_and_restore_adds_a_revision(db: Database, owner) -> None:  # type: ignore[no-untyped-def]
    actor = person_actor(owner)
    for revision, text in enumerate(["one", "two", "three"]):
        _save(db, actor, text, revision)
    listed = present.list_state_versions(db, actor, project="CRW", limit=2)
    assert [v["revision"] for v in listed["versions"]] == [3, 2]
    assert listed["nextOffset"] == 2
    restored = present.restore_state_version(
        db, actor, project="CRW", revision=1, expected_revision=3
    )
    assert (restored["revision"], restored["content"], restored["restoredFrom"]) == (4, "one", 1)
    with pytest.raises(NotFound):
        present.restore_state_version(db, actor, project="CRW", revision=9, expected_revision=4)
    with pytest.raises(RevisionConflict):
        present.restore_state_version(db, actor, project="CRW", revision=2, expected_revision=3)


def test_concurrent_saves_from_one_revision_have_one_winner(db: Database, owner) -> None:  # type: ignore[no-untyped-def]
    writers = 10
    start = threading.Barrier(writers)
    actor = person_actor(owner)

    def save(n: int) -> str:
        start.wait(timeout=10)
        try:
            _save(db, actor, f"writer {n}", 0)
        except RevisionConflict:
            return "conflict"
        return "saved"

    with ThreadPoolExecutor(max_workers=writers) as pool:
        outcomes = list(pool.map(save, range(writers)))
    assert outcomes.count("saved") == 1
    assert present.list_state_versions(db, actor, project="CRW")["total"] == 1


def test_task_counts_count_the_boards_tasks_by_status(db: Database, owner) -> None:  # type: ignore[no-untyped-def]
    actor = person_actor(owner)
    for n, status in enumerate(("backlog", "backlog", "ready_for_ai")):
        tasks.create_task(
            db,
            actor,
            project="CRW",
            workspace_id=None,
            idempotency_key=f"t-{n}",
            title=f"Task {n}",
            status=status,
        )
    counts = present.get_project_state(db, actor, project="CRW")["taskCounts"]
    assert counts == {
        "backlog": 2,
        "ready_for_ai": 1,
        "in_progress": 0,
        "blocked": 0,
        "review": 0,
        "approved": 0,
        "done": 0,
    }
