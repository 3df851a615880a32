"""tasks.md and the board in sync both ways, through the services on SQLite and PostgreSQL:
saving the file creates, updates and closes tasks (a line keeps its task when it moves or is
reworded); a board status change rewrites the box (one revision per file per call, by the
mover); set_task_status' expectedVersions per file fail only that file's tasks; list_tasks
shows each file task's source and the file's contentVersion."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from crewboard.contract.review.present import hand_in_view
from crewboard.contract.specs import present as files
from crewboard.domain.board.tasks import Task, TaskStatus
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.tasks_md import BOX_OF, Box
from crewboard.errors import ErrorCode
from crewboard.services.board import batch, task_updates
from crewboard.services.board.tasks import save_task
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.review import decisions, drafts
from crewboard.services.specs.file_lookup import FileRef
from crewboard.services.specs.tasks_md import install
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from tests.support import spec_calls
from tests.support import task_reads as queries
from tests.support.errors import refused
from tests.support.factories import make_project, make_task, make_user, token_actor

KEY = "CRW"
PLAN = (
    "# Plan\n"
    "\n"
    "- [ ] Write the migration\n"
    "  - two columns\n"
    "  - one index\n"
    "- [-] Parse the file\n"
    "- [x] Map the statuses\n"
)


@pytest.fixture
def synced(db: Database) -> Database:
    install(db)
    return db


@pytest.fixture
def owner(synced: Database) -> User:
    user = make_user(synced, "owner@example.com")
    make_project(synced, user, KEY)
    return user


@pytest.fixture
def me(owner: User) -> Actor:
    return person_actor(owner)


def upload(db: Database, actor: Actor, path: str, content: str) -> str:
    made = spec_calls.upload_spec_file(
        db, actor, project=KEY, workspace_id=None, path=path, content=content.encode(),
        idempotency_key=None,
    )  # fmt: skip
    return str(made.body["file"]["id"])


def save(db: Database, actor: Actor, file_id: str, content: str) -> None:
    now = files.get_spec_file(db, actor, project=KEY, ref=FileRef(file_id=file_id))
    spec_calls.update_spec_file(
        db, actor, project=KEY, workspace_id=None, ref=FileRef(file_id=file_id),
        content=content.encode(), expected_version=now["file"]["contentVersion"],
        idempotency_key=None,
    )  # fmt: skip


def text_of(db: Database, actor: Actor, file_id: str) -> str:
    _view, data = files.read_file_bytes(db, actor, project=KEY, ref=FileRef(file_id=file_id))
    return data.decode()


def file_of(db: Database, actor: Actor, file_id: str) -> dict[str, Any]:
    return dict(files.get_spec_file(db, actor, project=KEY, ref=FileRef(file_id=file_id))["file"])


def board(db: Database, file_id: str) -> list[Task]:
    """The tasks still linked to a line of the file, in line order."""
    return db.read(lambda uow: uow.tasks.of_source_files([file_id]))


def task(db: Database, task_id: str) -> Task:
    found = db.read(lambda uow: uow.tasks.get(task_id))
    assert found is not None
    return found


def move(db: Database, actor: Actor, changes: list[tuple[str, str]], key: str, **kw: Any) -> Any:
    return batch.set_task_status(
        db, actor, project=KEY, workspace_id=None, idempotency_key=key,
        changes=[{"taskId": ref, "status": status} for ref, status in changes], **kw,
    ).body  # fmt: skip


# --- file → board --------------------------------------------------------------------------


def test_uploading_tasks_md_puts_its_checkbox_lines_on_the_board(
    synced: Database, me: Actor
) -> None:
    file_id = upload(synced, me, "release/tasks.md", PLAN)
    made = board(synced, file_id)
    assert [(t.title, t.status, t.source_line) for t in made] == [
        ("Write the migration", TaskStatus.BACKLOG, 3),
        ("Parse the file", TaskStatus.IN_PROGRESS, 6),
        ("Map the statuses", TaskStatus.DONE, 7),
    ]
    assert made[0].description == "- two columns\n- one index"
    assert {t.source_file_id for t in made} == {file_id}
    view = queries.get_task(synced, me, task=made[0].id)
    found = view.get("task", view)
    assert (found["sourceFileId"], found["sourcePath"], found["sourceLine"]) == (
        file_id,
        "release/tasks.md",
        3,
    )


def test_a_file_not_named_tasks_md_makes_no_tasks(synced: Database, me: Actor) -> None:
    file_id = upload(synced, me, "release/notes.md", PLAN)
    assert board(synced, file_id) == []
    page = queries.list_tasks(synced, me, project=KEY)
    assert page.total == 0


def test_editing_the_file_keeps_moved_and_reworded_lines_closes_removed_ones_and_adds_new(
    synced: Database, me: Actor
) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    write, parse, mapping = board(synced, file_id)
    save(
        synced, me, file_id,
        "# Plan\n"
        "- [x] Map the statuses\n"  # moved up
        "- [ ] Write the migrations for tasks\n"  # reworded
        "  - two columns\n"
        "  - one index, unique\n"  # details changed
        "- [ ] Benchmark it\n",  # new; "Parse the file" removed
    )  # fmt: skip
    now = board(synced, file_id)
    assert [(t.id, t.title, t.source_line) for t in now[:2]] == [
        (mapping.id, "Map the statuses", 2),
        (write.id, "Write the migrations for tasks", 3),
    ]
    assert task(synced, write.id).description == "- two columns\n- one index, unique"
    assert now[2].title == "Benchmark it"
    assert now[2].id not in (write.id, parse.id, mapping.id)
    closed = task(synced, parse.id)
    assert closed.status is TaskStatus.DONE
    assert synced.read(lambda uow: uow.tasks.sources_of([parse.id])) == {parse.id: (file_id, None)}
    # A line that only moved is layout: no new revision of its task.
    assert task(synced, mapping.id).revision == mapping.revision


def test_a_box_change_in_the_file_moves_its_task_between_groups_only(
    synced: Database, me: Actor
) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    write, parse, _mapping = board(synced, file_id)
    move(synced, me, [(parse.id, "review")], "to-review")
    assert "- [-] Parse the file" in text_of(synced, me, file_id)  # review shows [-]
    save(synced, me, file_id, text_of(synced, me, file_id) + "\nA new paragraph.\n")
    assert task(synced, parse.id).status is TaskStatus.REVIEW  # still [-]: not moved
    save(synced, me, file_id, text_of(synced, me, file_id).replace("- [ ] Write", "- [x] Write"))
    assert task(synced, write.id).status is TaskStatus.DONE


# --- board → file --------------------------------------------------------------------------


def test_set_task_status_rewrites_only_the_boxes_with_one_revision_per_file_by_the_mover(
    synced: Database, me: Actor, owner: User
) -> None:
    first = upload(synced, me, "a/tasks.md", PLAN)
    second = upload(synced, me, "b/tasks.md", "- [ ] Alone\n")
    write, parse, mapping = board(synced, first)
    (alone,) = board(synced, second)
    agent = token_actor(synced, owner, ["read", "tasks.manage"])
    body = move(
        synced, agent,
        [(write.id, "done"), (parse.id, "backlog"), (mapping.id, "approved"),
         (alone.id, "blocked")],
        "four",
    )  # fmt: skip
    assert body["succeeded"] == 4  # approved stays [x]: its box is left as it is
    assert text_of(synced, me, first) == PLAN.replace("- [ ] Write", "- [x] Write").replace(
        "- [-] Parse", "- [ ] Parse"
    )
    assert text_of(synced, me, second) == "- [-] Alone\n"
    a, b = file_of(synced, me, first), file_of(synced, me, second)
    assert (a["revisionCount"], b["revisionCount"]) == (2, 2)
    assert agent.token is not None
    assert a["updatedBy"]["tokenId"] == agent.token.id
    # The rewrite did not echo back into the board: no task changed again.
    assert task(synced, write.id).revision == write.revision + 1


def test_a_move_within_a_box_group_writes_no_revision(synced: Database, me: Actor) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    _write, parse, _mapping = board(synced, file_id)
    move(synced, me, [(parse.id, "blocked")], "blocked")
    assert file_of(synced, me, file_id)["revisionCount"] == 1


def test_update_task_status_rewrites_the_box(synced: Database, me: Actor) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    write = board(synced, file_id)[0]
    task_updates.update_task(
        synced, me, project=KEY, workspace_id=None, idempotency_key=None, task_id=write.id,
        expected_revision=write.revision, patch={"status": TaskStatus.DONE},
    )  # fmt: skip
    assert "- [x] Write the migration\n" in text_of(synced, me, file_id)
    assert file_of(synced, me, file_id)["revisionCount"] == 2


def test_a_task_without_a_file_changes_no_file(synced: Database, me: Actor, owner: User) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    plain = make_task(synced, owner, KEY, "Not from a file")
    move(synced, me, [(plain, "done")], "plain")
    assert file_of(synced, me, file_id)["revisionCount"] == 1


# --- expectedVersions per file -------------------------------------------------------------


def test_a_stale_file_entry_fails_only_the_tasks_of_that_file(synced: Database, me: Actor) -> None:
    first = upload(synced, me, "a/tasks.md", PLAN)
    second = upload(synced, me, "b/tasks.md", "- [ ] Alone\n")
    write, parse, _ = board(synced, first)
    (alone,) = board(synced, second)
    stale = file_of(synced, me, first)["contentVersion"]
    fresh = file_of(synced, me, second)["contentVersion"]
    save(synced, me, first, PLAN + "\nsomeone else's edit\n")
    body = move(
        synced, me, [(write.id, "done"), (parse.id, "done"), (alone.id, "done")], "stale",
        expected_versions={first: stale, second: fresh},
    )  # fmt: skip
    assert (body["succeeded"], body["failed"]) == (1, 2)
    failed = [o for o in body["outcomes"] if not o["ok"]]
    assert {o["taskId"] for o in failed} == {write.id, parse.id}
    error = failed[0]["error"]
    assert error["code"] == ErrorCode.REVISION_CONFLICT.value
    assert error["details"]["fileId"] == first
    assert error["details"]["updatedBy"]["userId"] == me.user_id
    assert error["details"]["updatedAt"]
    assert task(synced, write.id).status is TaskStatus.BACKLOG
    assert file_of(synced, me, first)["revisionCount"] == 2  # only the other edit
    assert text_of(synced, me, second) == "- [x] Alone\n"


def test_a_current_file_entry_lets_its_tasks_move(synced: Database, me: Actor) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    write = board(synced, file_id)[0]
    version = file_of(synced, me, file_id)["contentVersion"]
    body = move(synced, me, [(write.id, "done")], "fresh", expected_versions={file_id: version})
    assert body["succeeded"] == 1
    assert file_of(synced, me, file_id)["contentVersion"] != version


def test_a_file_entry_naming_no_file_of_the_changes_is_refused(synced: Database, me: Actor) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    other = upload(synced, me, "other/tasks.md", "- [ ] x\n")
    write = board(synced, file_id)[0]
    error = refused(
        ErrorCode.VALIDATION, move, synced, me, [(write.id, "done")], "wrong",
        expected_versions={other: "v"},
    )  # fmt: skip
    assert error.details["field"] == f"expectedVersions.{other}"
    assert task(synced, write.id).status is TaskStatus.BACKLOG


def test_list_tasks_shows_each_file_tasks_source_and_the_files_content_version(
    synced: Database, me: Actor, owner: User
) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    make_task(synced, owner, KEY, "Not from a file")
    version = file_of(synced, me, file_id)["contentVersion"]
    for projection in ("compact", "preview"):
        rows = queries.list_tasks(synced, me, project=KEY, projection=projection).rows
        sourced = [r for r in rows if "sourceFileId" in r]
        assert [(r["sourceLine"], r["contentVersion"]) for r in sourced] == [
            (3, version),
            (6, version),
            (7, version),
        ]
        assert len(rows) == 4


def test_any_board_use_case_that_writes_statuses_rewrites_the_boxes_once_at_its_end(
    synced: Database, me: Actor
) -> None:
    """save_task is how every use case writes a status (hand-ins to review, decisions, the
    batch): two moves in one transaction make one revision."""
    file_id = upload(synced, me, "tasks.md", PLAN)
    write, parse, _mapping = board(synced, file_id)

    def work(uow: UnitOfWork) -> None:
        project = uow.projects.get_by_key(KEY)
        assert project is not None
        for moved, status in ((write, TaskStatus.REVIEW), (parse, TaskStatus.DONE)):
            current = uow.tasks.get(moved.id)
            assert current is not None
            save_task(
                uow, me, project, current, replace(current, status=status), changed=["status"]
            )

    synced.write(work)
    assert text_of(synced, me, file_id) == PLAN.replace("- [ ] Write", "- [-] Write").replace(
        "- [-] Parse", "- [x] Parse"
    )
    assert file_of(synced, me, file_id)["revisionCount"] == 2


def test_a_hand_in_and_its_approval_rewrite_the_box_each_time(
    synced: Database, me: Actor, owner: User
) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    write = board(synced, file_id)[0]
    issued = tokens.issue_token(
        synced, me, kind="agent", scopes=["read", "tasks.manage", "drafts.create"], project=KEY
    )
    agent = tokens.authenticate_token(synced, issued.secret)
    handed = drafts.submit_result(
        synced, agent, project=KEY, workspace_id=None, task=write.id, idempotency_key="h-1",
        expected_revision=write.revision, context_receipt_id=None, title="Migration written",
        summary="Two columns, one index", content="Done as planned.", collection=None,
        document=None, references=[], answer=hand_in_view,
    )  # fmt: skip
    assert task(synced, write.id).status is TaskStatus.REVIEW
    assert "- [-] Write the migration\n" in text_of(synced, me, file_id)
    decisions.approve(synced, me, handed.body["draft"]["id"])
    assert BOX_OF[task(synced, write.id).status] is Box.DONE
    assert "- [x] Write the migration\n" in text_of(synced, me, file_id)
    saved = files.get_spec_file(
        synced, me, project=KEY, ref=FileRef(file_id=file_id), revisions_limit=3
    )
    # Newest first: the approver's box, the agent's box, the upload.
    assert [(r["savedBy"]["kind"], r["savedBy"]["tokenId"]) for r in saved["revisions"]] == [
        ("person", None),
        ("agent_token", issued.token.id),
        ("person", None),
    ]


def test_a_trashed_tasks_md_keeps_its_tasks_and_gets_the_boards_boxes_back_on_restore(
    synced: Database, me: Actor
) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    write, parse, _mapping = board(synced, file_id)
    ref = FileRef(file_id=file_id)
    spec_calls.move_spec_file_to_trash(synced, me, project=KEY, workspace_id=None, ref=ref)
    assert [t.id for t in board(synced, file_id)] == [write.id, parse.id, _mapping.id]
    outcome = move(synced, me, [(write.id, "done"), (parse.id, "backlog")], "while-trashed")
    assert [o["ok"] for o in outcome["outcomes"]] == [True, True]
    trashed = files.get_spec_file(synced, me, project=KEY, ref=ref, include_trashed=True)
    assert trashed["file"]["revisionCount"] == 1  # a file in the trash gets no revisions
    restored = spec_calls.restore_spec_file_from_trash(
        synced, me, project=KEY, workspace_id=None, ref=ref
    )
    assert restored["file"]["revisionCount"] == 2
    assert text_of(synced, me, file_id) == PLAN.replace("- [ ] Write", "- [x] Write").replace(
        "- [-] Parse", "- [ ] Parse"
    )
    assert (task(synced, write.id).status, task(synced, parse.id).status) == (
        TaskStatus.DONE,
        TaskStatus.BACKLOG,
    )


def test_restoring_a_tasks_md_whose_boxes_agree_writes_no_revision(
    synced: Database, me: Actor
) -> None:
    file_id = upload(synced, me, "tasks.md", PLAN)
    ref = FileRef(file_id=file_id)
    spec_calls.move_spec_file_to_trash(synced, me, project=KEY, workspace_id=None, ref=ref)
    restored = spec_calls.restore_spec_file_from_trash(
        synced, me, project=KEY, workspace_id=None, ref=ref
    )
    assert restored["file"]["revisionCount"] == 1


def test_a_started_line_names_whoever_saved_the_file_as_owner_when_nobody_is_named(
    synced: Database, me: Actor, owner: User
) -> None:
    """The board's rule holds for tasks from a file too: a task in progress names who does
    the work."""
    file_id = upload(synced, me, "tasks.md", PLAN)
    write, parse, mapping = board(synced, file_id)
    assert (parse.status, parse.human_owner_id) == (TaskStatus.IN_PROGRESS, owner.id)
    assert (write.human_owner_id, mapping.human_owner_id) == (None, None)
    editor = token_actor(synced, owner, ["read", "specs.write"])
    save(synced, editor, file_id, PLAN.replace("- [ ] Write", "- [-] Write"))
    started = task(synced, write.id)
    assert (started.status, started.human_owner_id) == (TaskStatus.IN_PROGRESS, owner.id)
    assert started.assignee_id is None
    events = synced.read(lambda uow: uow.events.list_after(project_id=None, limit=1000))
    last = [e for e in events if e["type"] == "task.updated"][-1]["payload"]
    assert set(last["changed"]) == {"status", "humanOwnerId"}
