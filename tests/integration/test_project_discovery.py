"""What an agent finds without knowing names, through the services on SQLite and PostgreSQL:
list_projects searches key, name and description and puts the most recently active project
first (its own change or its newest event, a task change included); get_project lists the
newest spec files, attachments and active sessions, bounded, with their counts; list_tasks
keeps the tasks of one tasks.md (by id or path) and, asked, carries their text."""

from __future__ import annotations

from datetime import timedelta

import pytest

from crewboard.contract.projects import present as projects
from crewboard.contract.reply import compact
from crewboard.contract.specs import present as files
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.board import task_updates
from crewboard.services.identity.users import person_actor
from crewboard.services.screens import project as project_screen
from crewboard.services.screens.project import NEWEST
from crewboard.services.specs.file_lookup import FileRef
from crewboard.services.specs.tasks_md import install
from crewboard.storage.database import Database
from tests.support import spec_calls
from tests.support import task_reads as queries
from tests.support.errors import refused
from tests.support.factories import make_project, make_task, make_user

PLAN = "# Plan\n- [ ] Write the migration\n  - two columns\n- [x] Parse the file\n"
OTHER = "# Later\n- [ ] Ship it\n"


@pytest.fixture
def owner(db: Database) -> User:
    install(db)
    return make_user(db, "owner@example.com")


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


def keys(db: Database, actor: Actor, **filters: object) -> list[str]:
    rows, _total = projects.list_projects(db, actor, **filters)
    return [row["key"] for row in rows]


def upload(db: Database, actor: Actor, path: str, content: str, project: str = "CRW") -> str:
    made = spec_calls.upload_spec_file(
        db, actor, project=project, workspace_id=None, path=path, content=content.encode(),
        idempotency_key=None,
    )  # fmt: skip
    return str(made.body["file"]["id"])


def test_list_projects_puts_the_most_recently_active_first_a_task_change_included(
    db: Database, clock: ManualClock, owner: User, me: Actor
) -> None:
    for key in ("AAA", "BBB", "CCC"):
        make_project(db, owner, key)
        clock.advance(timedelta(minutes=1))
    assert keys(db, me) == ["CCC", "BBB", "AAA"]

    task = make_task(db, owner, "AAA")  # an event of AAA, newer than CCC's creation
    clock.advance(timedelta(minutes=1))
    assert keys(db, me) == ["AAA", "CCC", "BBB"]

    clock.advance(timedelta(minutes=1))
    projects.update_project(db, me, project="BBB", workspace_id=None, goal="Moved")
    assert keys(db, me) == ["BBB", "AAA", "CCC"]

    clock.advance(timedelta(minutes=1))
    task_updates.update_task(
        db, me, project="AAA", workspace_id=None, idempotency_key=None, task_id=task,
        expected_revision=1, patch={"status": "review"},
    )  # fmt: skip
    rows, total = projects.list_projects(db, me)
    assert [r["key"] for r in rows] == ["AAA", "BBB", "CCC"]
    assert total == 3
    assert rows[0]["lastActiveAt"] > rows[1]["lastActiveAt"] > rows[2]["lastActiveAt"]
    # The key order is still there (the web's switcher), and paging follows the order.
    assert keys(db, me, sort="key") == ["AAA", "BBB", "CCC"]
    assert keys(db, me, limit=1, offset=1) == ["BBB"]


def test_list_projects_q_matches_every_word_in_key_name_or_description_whatever_the_case(
    db: Database, owner: User, me: Actor
) -> None:
    make_project(db, owner, "CRW", description="The Crewboard web app")
    make_project(db, owner, "DOC", description="Manuals for 100% of users")
    make_project(db, owner, "OPS")

    assert keys(db, me, q="crw") == ["CRW"]
    assert keys(db, me, q="WEB crewboard") == ["CRW"]
    assert keys(db, me, q="web manuals") == []  # every word, not any
    assert keys(db, me, q="project ops", sort="key") == ["OPS"]  # name: "Project OPS"
    assert keys(db, me, q="100%") == ["DOC"]
    assert keys(db, me, q="1_0") == []  # _ and % are themselves, not patterns
    assert keys(db, me, q="   ", sort="key") == ["CRW", "DOC", "OPS"]
    error = refused(ErrorCode.VALIDATION, projects.list_projects, db, me, q="x" * 201)
    assert error.details["field"] == "q"
    error = refused(ErrorCode.VALIDATION, projects.list_projects, db, me, q="a\x00b")
    assert error.details["field"] == "q"
    error = refused(ErrorCode.VALIDATION, projects.list_projects, db, me, sort="name")
    assert error.details["field"] == "sort"


def test_list_projects_shows_no_project_the_caller_has_no_role_on(
    db: Database, owner: User
) -> None:
    make_project(db, owner, "CRW")
    stranger = make_user(db, "stranger@example.com")
    make_project(db, stranger, "OWN")
    assert keys(db, person_actor(stranger), q="project") == ["OWN"]


def test_get_project_lists_the_newest_files_attachments_and_sessions_bounded_with_counts(
    db: Database, clock: ManualClock, owner: User, me: Actor
) -> None:
    make_project(db, owner, "CRW")
    for n in range(NEWEST + 2):
        upload(db, me, f"docs/note-{n:02}.md", f"# Note {n}\n")
        clock.advance(timedelta(seconds=1))
    spec_calls.upload_attachment(
        db, me, project="CRW", workspace_id=None, name="brief.txt", content=b"hello\n",
        override=False, idempotency_key=None,
    )  # fmt: skip

    found = projects.overview_view(project_screen.describe_project(db, me, "CRW"))
    assert (
        found["counts"] | {"specFiles": NEWEST + 2, "attachments": 1, "activeSessions": 0}
        == (found["counts"])
    )
    paths = [f["path"] for f in found["specFiles"]]
    assert len(paths) == NEWEST
    assert paths[0] == f"docs/note-{NEWEST + 1:02}.md"  # the newest first
    assert "docs/note-00.md" not in paths
    assert "docs/note-01.md" not in paths
    assert [a["name"] for a in found["attachments"]] == ["brief.txt"]
    assert found["activeSessions"] == []


def test_get_project_lists_long_paths_within_the_answer_budget(
    db: Database, owner: User, me: Actor
) -> None:
    make_project(db, owner, "CRW", description="x" * 10_000)
    for n in range(NEWEST):
        # Three bytes a character: 20 such paths would take ~29 KB of the answer.
        upload(db, me, "/".join([f"{n:02}" + "文" * 58] * 8) + ".md", "text\n")
    found = projects.overview_view(project_screen.describe_project(db, me, "CRW"))
    assert len(found["specFiles"]) < NEWEST  # only the leading rows that fit their share
    assert found["counts"]["specFiles"] == NEWEST
    assert len(compact(found).encode()) < 48 * 1024


def test_list_tasks_file_keeps_the_tasks_of_one_tasks_md_by_id_or_path(
    db: Database, owner: User, me: Actor
) -> None:
    make_project(db, owner, "CRW")
    plan = upload(db, me, "tasks.md", PLAN)
    later = upload(db, me, "later/tasks.md", OTHER)
    make_task(db, owner, "CRW", "Not from a file")

    by_id = queries.list_tasks(db, me, project="CRW", file=plan)
    assert [r["title"] for r in by_id.rows] == ["Write the migration", "Parse the file"]
    assert by_id.total == 2
    by_path = queries.list_tasks(db, me, project="CRW", file="later/tasks.md")
    assert [r["title"] for r in by_path.rows] == ["Ship it"]
    assert {r["sourceFileId"] for r in by_path.rows} == {later}
    done = queries.list_tasks(db, me, project="CRW", file=plan, statuses=["done"])
    assert [r["title"] for r in done.rows] == ["Parse the file"]

    # A line taken out of the file takes its task out of the file's list.
    spec_calls_update(db, me, plan, PLAN.replace("- [x] Parse the file\n", ""))
    assert [r["title"] for r in queries.list_tasks(db, me, project="CRW", file=plan).rows] == [
        "Write the migration"
    ]


def spec_calls_update(db: Database, actor: Actor, file_id: str, content: str) -> None:
    now = files.get_spec_file(db, actor, project="CRW", ref=FileRef(file_id=file_id))
    spec_calls.update_spec_file(
        db, actor, project="CRW", workspace_id=None, ref=FileRef(file_id=file_id),
        content=content.encode(), expected_version=now["file"]["contentVersion"],
        idempotency_key=None,
    )  # fmt: skip


def test_list_tasks_file_refuses_an_unknown_file_and_one_that_is_not_a_tasks_md(
    db: Database, owner: User, me: Actor
) -> None:
    make_project(db, owner, "CRW")
    ops = make_project(db, owner, "OPS")
    notes = upload(db, me, "notes.md", "# Notes\n- [ ] not a task\n")
    elsewhere = upload(db, me, "tasks.md", PLAN, project="OPS")

    for ref in ("spf_nothere0000000000000", "docs/tasks.md", elsewhere):
        error = refused(ErrorCode.NOT_FOUND, queries.list_tasks, db, me, project="CRW", file=ref)
        assert error.details["field"] == "file"
    for ref in (notes, "notes.md", "../tasks.md", ""):
        error = refused(ErrorCode.VALIDATION, queries.list_tasks, db, me, project="CRW", file=ref)
        assert error.details["field"] == "file"
    # Across every open project, a path names the file in each that has one.
    across = queries.list_tasks(db, me, file="tasks.md")
    assert {r["projectId"] for r in across.rows} == {ops}
    assert [r["title"] for r in across.rows] == ["Write the migration", "Parse the file"]


def test_list_tasks_include_details_adds_the_brief_and_description_cut_like_preview(
    db: Database, owner: User, me: Actor
) -> None:
    make_project(db, owner, "CRW")
    upload(db, me, "tasks.md", PLAN.replace("  - two columns\n", "  - two columns\n" * 40))
    plain = queries.list_tasks(db, me, project="CRW", projection="compact")
    assert "description" not in plain.rows[0]

    rich = queries.list_tasks(db, me, project="CRW", projection="compact", include_details=True)
    first = rich.rows[0]
    assert first["key"] == plain.rows[0]["key"]
    assert first["revision"] == 1
    assert first["description"].startswith("- two columns")
    assert len(first["description"]) == 500
    assert first["descriptionTruncated"] is True
    assert first["brief"] == ""
    assert first["briefTruncated"] is False
    summary = queries.list_tasks(db, me, project="CRW", projection="summary", include_details=True)
    assert {"createdAt", "brief", "description"} <= set(summary.rows[0])
