"""REST reads of long texts: the same cut and windows as the MCP tools (get_task, memory)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.contract import memory_present as memory_edits
from crewboard.domain.identity.records import User
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.server import free_port, running_server

TEXT = ('Brief 漢字 🙂 \u0001 "q" \\ line\n' * 8000).strip()


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    actor = person_actor(user)
    tasks.create_task(
        db, actor, project="CRW", workspace_id=None, idempotency_key="t", title="Long", brief=TEXT
    )
    memory_edits.set_document(db, actor, "CRW", "decisions", TEXT, expected_version=0)
    return user


@pytest.fixture
def api(db: Database, owner: User, tmp_path: Path) -> Iterator[httpx2.Client]:
    secret = tokens.issue_token(db, person_actor(owner), kind="personal", scopes=["read"]).secret
    with (
        running_server(Settings(data_dir=tmp_path, port=free_port()), db) as base,
        httpx2.Client(
            base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {secret}"}
        ) as client,
    ):
        yield client


def read_whole(api: httpx2.Client, path: str, params: dict[str, str], key: str) -> str:
    parts, offset = [], 0
    while offset is not None:
        answer = api.get(path, params={**params, key: str(offset)})
        assert answer.status_code == 200, answer.text
        parts.append(answer.json()["text"])
        offset = answer.json()["nextOffset"]
    return "".join(parts)


def test_get_task_over_rest_is_cut_and_reads_whole_in_windows(api: httpx2.Client) -> None:
    task = api.get("/tasks/CRW-1").json()["task"]

    assert (task["briefTruncated"], task["briefLength"]) == (True, len(TEXT))
    assert read_whole(api, "/tasks/CRW-1", {"textField": "brief"}, "textOffset") == TEXT


def test_project_memory_over_rest_reads_a_document_in_windows(api: httpx2.Client) -> None:
    params = {"document": "decisions"}
    text = read_whole(api, "/projects/CRW/memory", params, "contentOffset")

    assert text == TEXT


def test_a_window_argument_without_its_text_is_refused_naming_the_field(
    api: httpx2.Client,
) -> None:
    answer = api.get("/tasks/CRW-1", params={"textOffset": "5"})

    assert answer.status_code == 422
    assert answer.json()["error"]["details"]["field"] == "textField"
