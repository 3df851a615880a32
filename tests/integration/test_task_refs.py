"""Wherever a tool names a task, its id and its key (CRW-1) both work, and wherever it names a
project, its id and its key: the same forms under the same argument names, through the
contract (argument models and handlers) on a real database."""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from crewboard.config import Settings
from crewboard.contract.args import validate_arguments
from crewboard.contract.catalogue import default_catalogue
from crewboard.contract.operation import Call
from crewboard.domain.identity.records import User
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_task, make_user

CATALOGUE = default_catalogue()
KEYS = count()


def key() -> str:
    return f"k-{next(KEYS)}"


# Each tool naming a task, with the other arguments it needs: `task` is the task's name, `who`
# the caller's user id.
TASK_CALLS: list[tuple[str, Callable[[str, str], dict[str, Any]]]] = [
    ("get_task", lambda task, _who: {"taskId": task, "includeContextPack": False}),
    ("list_task_notes", lambda task, _who: {"taskId": task}),
    ("list_task_events", lambda task, _who: {"taskId": task}),
    ("list_task_repos", lambda task, _who: {"taskId": task}),
    ("list_activity", lambda task, _who: {"projectId": "CRW", "taskId": task}),
    ("list_tasks", lambda task, _who: {"projectId": "CRW", "parentTaskId": task}),
    ("post_comment", lambda task, _who: {"taskId": task, "content": "Hi.", "idempotencyKey": key()}),
    ("create_draft", lambda task, _who: {"taskId": task, "title": "D", "content": "Text."}),
    ("post_message", lambda task, who: {
        "projectId": "CRW", "participantId": who, "body": "About it.", "taskId": task,
        "idempotencyKey": key(),
    }),
    ("propose_task_delete", lambda task, _who: {"taskId": task, "reason": "Done elsewhere."}),
    ("update_tasks", lambda task, _who: {
        "projectId": "CRW", "taskIds": [task], "priority": "high", "idempotencyKey": key(),
    }),
]  # fmt: skip


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


def run(db: Database, owner: User, tmp_path: Path, name: str, arguments: dict[str, Any]) -> Any:
    tool = CATALOGUE.find(name)
    assert tool is not None
    call = Call(db=db, actor=person_actor(owner), settings=Settings(data_dir=tmp_path))
    return tool.run(call, validate_arguments(tool.args, arguments)).body


@pytest.mark.parametrize(("name", "arguments"), TASK_CALLS, ids=[n for n, _ in TASK_CALLS])
def test_a_task_is_named_by_its_id_or_its_key(
    db: Database, owner: User, tmp_path: Path, name: str, arguments: Callable[[str, str], Any]
) -> None:
    task_id = make_task(db, owner, "CRW")
    for ref in (task_id, "CRW-1"):
        run(db, owner, tmp_path, name, arguments(ref, owner.id))


def test_a_project_is_named_by_its_id_or_its_key(db: Database, owner: User, tmp_path: Path) -> None:
    project = run(db, owner, tmp_path, "get_project", {"projectId": "CRW"})["project"]
    for ref in (project["id"], "CRW"):
        for name in ("get_project", "get_project_state", "list_team", "list_spec_files"):
            run(db, owner, tmp_path, name, {"projectId": ref})
        made = run(
            db, owner, tmp_path, "create_task",
            {"projectId": ref, "title": "T", "idempotencyKey": key()},
        )  # fmt: skip
        assert made["task"]["projectId"] == project["id"]
