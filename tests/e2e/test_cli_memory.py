"""`crewboard memory …` in-process (click's runner) on each backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import URL

from crewboard.services.identity.users import person_actor
from crewboard.services.memory import records as memory
from crewboard.storage.database import Database
from tests.support.cli import RunCli


@pytest.fixture
def run(run: RunCli) -> RunCli:
    """The CLI on a database `crewboard init` has set up."""
    assert run("init").exit_code == 0
    return run


@pytest.fixture
def record_id(empty_database_url: URL, run) -> str:  # type: ignore[no-untyped-def]
    """One record filed in the DEMO project, as the review inbox would file it."""
    db = Database(empty_database_url)
    try:

        def work(uow: Any) -> dict[str, Any]:
            owner = next(u for u in uow.users.list() if u.is_owner)
            found = uow.projects.get_with_role("DEMO", owner.id)
            return memory.file_record(
                uow,
                person_actor(owner),
                found[0],
                title="Login flow",
                summary="How sign-in works",
                content="Sessions are cookies.",
                collection=None,
                document=None,
                source_draft_id=None,
            )

        return str(db.write(work).id)
    finally:
        db.dispose()


def test_memory_edit_saves_the_next_version_and_refuses_a_stale_one(  # type: ignore[no-untyped-def]
    run, record_id: str, tmp_path: Path
) -> None:
    text = tmp_path / "content.md"
    text.write_text("Sessions are signed cookies.\n", encoding="utf-8")

    edited = run(
        "memory", "edit", record_id, "--expected-version", "1", "--title", "Sign-in",
        "--content-file", str(text), "--status", "canon", "--json",
    )  # fmt: skip

    assert edited.exit_code == 0, edited.output
    record = json.loads(edited.output)
    assert (record["version"], record["title"], record["status"]) == (2, "Sign-in", "canon")
    assert record["content"] == "Sessions are signed cookies."
    shown = json.loads(run("memory", "show", record_id, "--json").output)
    assert shown["version"] == 2
    stale = run("memory", "edit", record_id, "--expected-version", "1", "--title", "X", "--json")
    assert stale.exit_code == 1
    error = json.loads(stale.output)["error"]
    assert (error["code"], error["details"]["currentVersion"]) == ("REVISION_CONFLICT", 2)
    listed = json.loads(run("memory", "list", "DEMO", "--json").output)
    assert [(r["id"], r["version"]) for r in listed["records"]] == [(record_id, 2)]


def test_memory_document_set_and_show_for_people_and_scripts(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = json.loads(run("memory", "document", "show", "DEMO", "legal", "--json").output)
    assert (empty["version"], empty["content"], empty["title"]) == (0, "", "Asset rights")

    saved = run(
        "memory", "document", "set", "DEMO", "legal", "--expected-version", "0",
        "--text", "Fonts: OFL.", "--json",
    )  # fmt: skip
    assert saved.exit_code == 0, saved.output
    assert json.loads(saved.output)["version"] == 1
    source = tmp_path / "legal.md"
    source.write_text("Fonts: OFL. Icons: CC-BY.", encoding="utf-8")
    plain = run(
        "memory", "document", "set", "DEMO", "legal", "--expected-version", "1",
        "--file", str(source),
    )  # fmt: skip
    assert (plain.exit_code, plain.output.strip()) == (0, "saved legal as version 2")
    shown = json.loads(run("memory", "document", "show", "DEMO", "legal", "--json").output)
    assert (shown["version"], shown["content"]) == (2, "Fonts: OFL. Icons: CC-BY.")
    stale = run(
        "memory", "document", "set", "DEMO", "legal", "--expected-version", "1", "--text", "x",
        "--json",
    )  # fmt: skip
    assert stale.exit_code == 1
    assert json.loads(stale.output)["error"]["code"] == "REVISION_CONFLICT"


def test_memory_edits_need_the_write_role(run, record_id: str) -> None:  # type: ignore[no-untyped-def]
    made = run("user", "create", "ada@example.com", "--password-stdin", stdin="a good password\n")
    assert made.exit_code == 0, made.output
    assert run("project", "add-member", "DEMO", "ada@example.com", "--role", "read").exit_code == 0

    denied = run(
        "memory", "edit", record_id, "--expected-version", "1", "--title", "X",
        "--as", "ada@example.com", "--json",
    )  # fmt: skip

    assert denied.exit_code == 1
    assert json.loads(denied.output)["error"]["code"] == "PERMISSION_DENIED"
    readable = run("memory", "show", record_id, "--as", "ada@example.com")
    assert readable.exit_code == 0
    assert "Login flow" in readable.output
