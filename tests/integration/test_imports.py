"""Importing other tools' tasks through the service, on SQLite and PostgreSQL: each importer on
its sample files (made by the real tools, or hand-made to the documented shape), twice; the
mappings; what a second import of a changed file does; a dry run."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from crewboard.domain.board.imports import BacklogFile, SourceFiles
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.board import imports, week
from crewboard.services.board.imports import ImportReport
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support import task_reads as queries
from tests.support.factories import grant, make_project, make_user

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"
# After every sample's times: a creation time from the file is kept as it is.
LATER = datetime(2027, 1, 4, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(LATER)


@pytest.fixture
def owner_user(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    for email in ("ada@example.com", "bob@example.com"):
        grant(db, user, "CRW", make_user(db, email), Role.WRITE)
    return user


@pytest.fixture
def owner(owner_user: User) -> Actor:
    return person_actor(owner_user)


def one_file(source: str, name: str) -> SourceFiles:
    path = FIXTURES / source / name
    return SourceFiles.one(path.name, path.read_text(encoding="utf-8"))


def backlog_files(root: Path = FIXTURES / "backlog" / "backlog") -> SourceFiles:
    def read(path: Path) -> BacklogFile:
        return BacklogFile(str(path.relative_to(root.parent)), path.read_text(encoding="utf-8"))

    return SourceFiles(
        [read(p) for p in sorted((root / "tasks").glob("*.md"))],
        config=read(root / "config.yml"),
        milestones=[read(p) for p in sorted((root / "milestones").glob("*.md"))],
    )


SAMPLES = {
    "taskmaster": lambda: one_file("taskmaster", "tasks.json"),
    "backlog": backlog_files,
    "github": lambda: one_file("github", "issues.json"),
    "linear": lambda: one_file("linear", "export.csv"),
}
MAPS = {"github": {"ada-l": "ada@example.com"}, "backlog": {"@bob": "bob@example.com"}}


def run(
    db: Database, owner: Actor, source: str, files: SourceFiles | None = None, **more: Any
) -> ImportReport:
    return imports.import_tasks(
        db,
        owner,
        project="CRW",
        source=source,
        files=files or SAMPLES[source](),
        user_map=MAPS.get(source, {}),
        **more,
    )


def snapshot(db: Database) -> dict[str, Any]:
    """Every row an import can write, in a form two runs can be compared by."""
    with db.engine.connect() as conn:
        tasks = conn.execute(
            text(
                "SELECT id, number, revision, status, title, updated_at FROM tasks ORDER BY number"
            )
        ).all()
        return {
            "tasks": [tuple(row) for row in tasks],
            "links": conn.execute(text("SELECT count(*) FROM task_links")).scalar_one(),
            "lifecycle": conn.execute(text("SELECT count(*) FROM task_events")).scalar_one(),
            "events": conn.execute(text("SELECT count(*) FROM events")).scalar_one(),
            "labels": conn.execute(text("SELECT count(*) FROM task_labels")).scalar_one(),
        }


def by_ref(db: Database, owner: Actor) -> dict[str, dict[str, Any]]:
    """The project's tasks as get_task shows them, by their external reference."""
    found: dict[str, dict[str, Any]] = {}
    number = 1
    while True:
        try:
            answer = queries.get_task(
                db, owner, number=number, project="CRW", include_context_pack=False
            )
        except NotFound:  # past the last number
            return found
        task = answer["task"]
        found[task["externalReferenceIds"][0]] = answer
        number += 1


@pytest.mark.parametrize("source", list(SAMPLES))
def test_each_sample_imports_once_and_a_second_import_changes_nothing(
    db: Database, owner: Actor, source: str
) -> None:
    first = run(db, owner, source)
    assert first.created
    assert (first.updated, first.unchanged) == ([], [])
    after_first = snapshot(db)
    assert after_first["lifecycle"] == 0  # nothing made up from current status or assignee
    assert after_first["events"] >= len(first.created)
    second = run(db, owner, source)
    assert (second.created, second.updated) == ([], [])
    assert len(second.unchanged) == len(first.created)
    assert snapshot(db) == after_first
    tasks = by_ref(db, owner)
    assert len(tasks) == len(first.created)
    for answer in tasks.values():
        assert answer["lifecycle"]["coverage"] == "partial"
        assert answer["lifecycle"]["eventCount"] == 0
        assert "Imported from" in answer["task"]["description"]


def test_taskmaster_tags_subtasks_dependencies_and_statuses(db: Database, owner: Actor) -> None:
    run(db, owner, "taskmaster")
    tasks = by_ref(db, owner)
    assert {ref.partition("#")[0] for ref in tasks} == {
        "taskmaster:master",
        "taskmaster:feature-auth",
        "taskmaster:v2-ideas",
    }
    database = tasks["taskmaster:master#2"]["task"]
    migrations = tasks["taskmaster:master#2.2"]["task"]
    orm = tasks["taskmaster:master#2.1"]["task"]
    assert migrations["parentTaskId"] == database["id"]
    assert migrations["blockedByTaskIds"] == [orm["id"]]
    assert tasks["taskmaster:master#3"]["task"]["blockedByTaskIds"] == [database["id"]]
    assert tasks["taskmaster:feature-auth#2"]["task"]["blockedByTaskIds"] == [
        tasks["taskmaster:feature-auth#1"]["task"]["id"]
    ]
    statuses = {ref: answer["task"]["status"] for ref, answer in tasks.items()}
    assert statuses["taskmaster:master#1"] == "done"
    assert statuses["taskmaster:master#2"] == "in_progress"
    assert statuses["taskmaster:master#3"] == "backlog"
    assert statuses["taskmaster:master#6"] == "review"
    assert statuses["taskmaster:feature-auth#1"] == "blocked"
    assert tasks["taskmaster:master#5"]["task"]["labels"] == ["master", "cancelled"]
    assert tasks["taskmaster:master#4"]["task"]["labels"] == ["master", "deferred"]
    assert tasks["taskmaster:master#1"]["task"]["priority"] == "high"
    assert (
        "## Test strategy\n\nCI passes on an empty commit."
        in tasks["taskmaster:master#1"]["task"]["description"]
    )
    # task-master keeps no creation time: the import's own.
    assert tasks["taskmaster:master#1"]["lifecycle"]["createdAt"] == "2027-01-04T09:00:00+00:00"
    # In progress with nobody to map: the importer answers for it.
    assert database["humanOwnerId"] == owner.user_id


def test_backlog_labels_dependencies_criteria_people_and_milestones(
    db: Database, owner: Actor
) -> None:
    report = run(db, owner, "backlog")
    tasks = by_ref(db, owner)
    schema = tasks["backlog:task-2"]["task"]
    assert schema["status"] == "in_progress"
    assert schema["cycle"] == "Beta"
    assert schema["blockedByTaskIds"] == [tasks["backlog:task-1"]["task"]["id"]]
    assert schema["assigneeId"] is not None  # @bob, mapped
    assert (
        "- [x] Schema reviewed by the team\n- [ ] Migrations run on an empty database"
        in schema["description"]
    )
    assert tasks["backlog:task-3"]["task"]["status"] == "review"  # the team's "In Review"
    assert (
        tasks["backlog:task-3.1"]["task"]["parentTaskId"] == tasks["backlog:task-3"]["task"]["id"]
    )
    checkout = tasks["backlog:task-5"]["task"]
    assert checkout["labels"] == ["frontend", "assignee:alice", "assignee:dave"]
    assert checkout["dueDate"] == "2026-04-30"
    assert sorted(report.unmapped_people) == ["alice", "carol", "dave"]
    assert tasks["backlog:task-1"]["lifecycle"]["createdAt"] == "2026-12-05T03:23:00+00:00"


def test_github_issues_labels_people_milestones_and_pull_requests(
    db: Database, owner: Actor
) -> None:
    report = run(db, owner, "github")
    assert report.skipped == [
        {"ref": "github:acme/webshop#12", "reason": "a pull request, not an issue"}
    ]
    tasks = by_ref(db, owner)
    assert "github:acme/webshop#12" not in tasks
    cart = tasks["github:acme/webshop#14"]
    assert cart["task"]["priority"] == "high"
    assert cart["task"]["cycle"] == "v1.0 Beta"
    assert cart["task"]["assigneeId"] is not None
    assert cart["task"]["description"].endswith(
        "Imported from GitHub acme/webshop#14: https://github.com/acme/webshop/issues/14"
    )
    assert cart["lifecycle"]["createdAt"] == "2025-10-01T09:12:44+00:00"
    wishlist = tasks["github:acme/webshop#13"]["task"]
    assert "assignee:linus-t" in wishlist["labels"]  # the second assignee, not mapped
    rewrite = tasks["github:acme/webshop#10"]["task"]
    assert (rewrite["status"], rewrite["priority"]) == ("done", "low")
    assert "not planned" in rewrite["labels"]
    assert tasks["github:acme/webshop#11"]["task"]["status"] == "done"
    assert set(report.unmapped_people) == {"linus-t", "grace-h"}


def test_linear_states_parents_blockers_cycles_and_emails(db: Database, owner: Actor) -> None:
    report = run(db, owner, "linear")
    tasks = by_ref(db, owner)
    retries = tasks["linear:ENG-101"]["task"]
    assert retries["status"] == "in_progress"
    assert retries["assigneeId"] is not None  # ada@example.com is a member: no map needed
    assert retries["priority"] == "high"
    assert retries["cycle"] == "Cycle 12"
    assert "milestone:Beta" in retries["labels"]
    tokens = tasks["linear:ENG-102"]["task"]
    assert tokens["parentTaskId"] == retries["id"]
    assert tokens["blockedByTaskIds"] == [retries["id"]]
    assert tokens["description"].startswith("=Compliance:")
    assert tasks["linear:ENG-103"]["task"]["status"] == "review"
    assert tasks["linear:ENG-98"]["task"]["status"] == "done"
    assert "canceled" in tasks["linear:ENG-98"]["task"]["labels"]
    assert tasks["linear:DES-7"]["task"]["status"] == "in_progress"  # "Ready for dev", started
    assert tasks["linear:ENG-104"]["task"]["dueDate"] == "2025-12-15"
    assert report.unmapped_people == ["Sam Rivera"]


def test_an_imported_task_lists_no_events_with_partial_coverage(db: Database, owner: Actor) -> None:
    run(db, owner, "github")
    page = week.list_task_events(db, owner, task="CRW-1")
    assert page.answer(page.events)["coverage"] == "partial"
    assert page.events == []


def test_a_changed_item_updates_its_task_as_one_revision_and_the_rest_stay(
    db: Database, owner: Actor, tmp_path: Path
) -> None:
    run(db, owner, "github")
    before = by_ref(db, owner)
    issues = json.loads((FIXTURES / "github" / "issues.json").read_text(encoding="utf-8"))
    issues[0]["title"] = "Cart total ignores discount codes and gift cards"
    issues[0]["state"], issues[0]["state_reason"] = "closed", "completed"
    issues.append(
        dict(
            issues[-1],
            number=15,
            title="A new one",
            html_url="https://github.com/acme/webshop/issues/15",
        )
    )
    report = run(db, owner, "github", SourceFiles.one("issues.json", json.dumps(issues)))
    assert [row["externalId"] for row in report.updated] == ["github:acme/webshop#14"]
    assert report.updated[0]["changed"] == ["status", "title"]
    assert [row["externalId"] for row in report.created] == ["github:acme/webshop#15"]
    after = by_ref(db, owner)
    cart = after["github:acme/webshop#14"]
    assert cart["task"]["revision"] == before["github:acme/webshop#14"]["task"]["revision"] + 1
    assert cart["task"]["status"] == "done"
    assert cart["lifecycle"]["coverage"] == "partial"
    assert cart["lifecycle"]["eventCount"] == 1  # the status change it saw happen
    for ref in ("github:acme/webshop#13", "github:acme/webshop#9"):
        assert after[ref]["task"]["revision"] == before[ref]["task"]["revision"]


def test_a_dry_run_reports_the_same_and_writes_nothing(db: Database, owner: Actor) -> None:
    empty = snapshot(db)
    dry = run(db, owner, "linear", dry_run=True)
    assert snapshot(db) == empty
    real = run(db, owner, "linear")
    assert dry.dry_run
    assert not real.dry_run
    assert [r["key"] for r in dry.created] == [r["key"] for r in real.created]
    assert dry.unmapped_people == real.unmapped_people


def test_references_outside_the_file_are_reported_not_fatal(db: Database, owner: Actor) -> None:
    lines = (FIXTURES / "linear" / "export.csv").read_text(encoding="utf-8").splitlines()
    report = run(
        db, owner, "linear", SourceFiles.one("export.csv", _rows_without(lines, "ENG-101"))
    )
    assert {
        "externalId": "linear:ENG-102",
        "field": "parent",
        "ref": "linear:ENG-101",
    } in report.missing_references
    assert {
        "externalId": "linear:ENG-103",
        "field": "blockedBy",
        "ref": "linear:ENG-101",
    } in report.missing_references
    tasks = by_ref(db, owner)
    assert tasks["linear:ENG-103"]["task"]["blockedByTaskIds"] == [
        tasks["linear:ENG-102"]["task"]["id"]
    ]


def _rows_without(lines: list[str], key: str) -> str:
    rows = list(csv.reader(io.StringIO("\n".join(lines) + "\n")))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(row for row in rows if row[0] != key)
    return out.getvalue()


def test_a_user_map_to_someone_outside_the_project_is_refused(db: Database, owner: Actor) -> None:
    make_user(db, "stranger@example.com")
    with pytest.raises(ValidationFailed) as refused:
        imports.import_tasks(
            db,
            owner,
            project="CRW",
            source="github",
            files=SAMPLES["github"](),
            user_map={"ada-l": "stranger@example.com"},
        )
    assert refused.value.details["field"] == "mapUser"
    assert snapshot(db)["tasks"] == []


def test_created_at_later_than_the_import_is_the_import_time(
    db: Database, owner: Actor, clock: ManualClock
) -> None:
    clock.advance(datetime(2026, 1, 1, tzinfo=UTC) - clock.now())
    run(db, owner, "backlog")
    tasks = by_ref(db, owner)
    assert tasks["backlog:task-1"]["lifecycle"]["createdAt"] == "2026-01-01T00:00:00+00:00"
    assert tasks["backlog:task-5"]["task"]["dueDate"] == date(2026, 4, 30).isoformat()
