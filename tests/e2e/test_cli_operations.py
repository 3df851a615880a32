"""The commands built from the operation declarations, in-process (click's runner), against the
MCP door on the same database: a command's `--json` is the tool's answer, its refusals the
tool's refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from PIL import Image
from sqlalchemy.engine import URL

from crewboard.config import Settings
from crewboard.contract.args import validate_arguments
from crewboard.contract.catalogue import default_catalogue
from crewboard.contract.operation import Call
from crewboard.contract.reply import compact
from crewboard.services.identity import users
from crewboard.storage.database import Database
from tests.support.cli import RunCli, cli_on
from tests.support.mcp_client import body_of, mcp_client

pytestmark = pytest.mark.anyio

OWNER = "owner@crewboard.local"
SCOPES = "read,tasks.manage,drafts.create,messages.write,team.manage,specs.write,projects.admin"


@pytest.fixture
def run(database_url: URL, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """The CLI on the database the `url` fixture serves, set up by `crewboard init`."""
    invoke = cli_on(database_url, tmp_path / "data", monkeypatch)
    assert invoke("init").exit_code == 0
    return invoke


@pytest.fixture
def secret(run: RunCli) -> str:
    """A personal token of the owner, the person the CLI acts as by default."""
    made = run("token", "create", "--user", OWNER, "--scopes", SCOPES, "--json")
    assert made.exit_code == 0, made.output
    return str(json.loads(made.output)["token"])


def answer(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    assert result.output.count("\n") == 1, "--json prints one line of compact JSON"
    return json.loads(result.output)


def refusal(result: Result) -> dict[str, Any]:
    assert result.exit_code == 1, result.output
    error: dict[str, Any] = json.loads(result.output)["error"]
    return error


def run_operation(url: URL, tmp_path: Path, name: str, arguments: dict[str, Any]) -> Any:
    """The operation's answer as the MCP door makes it (checked arguments, `run`), for the owner."""
    op = default_catalogue().find(name)
    assert op is not None
    db = Database(url)
    try:
        owner = users.person_actor(users.get_user_by_email(db, OWNER))
        call = Call(db, owner, Settings(data_dir=tmp_path / "data"))
        reply = op.run(call, validate_arguments(op.args, arguments))
    finally:
        db.dispose()
    return json.loads(reply.text if reply.text is not None else compact(reply.body))


async def call(url: str, secret: str, tool: str, arguments: dict[str, Any]) -> Any:
    async with mcp_client(url, secret, "legacy") as client:
        result = await client.call_tool(tool, arguments)
    return result.structured_content if result.is_error else body_of(result)


async def test_a_read_and_a_filtered_list_print_what_the_tool_answers(
    run: RunCli, url: str, secret: str
) -> None:
    for title, status in (("Draw", "backlog"), ("Paint", "ready_for_ai"), ("Frame", "done")):
        made = run("task", "create", "--project-id", "DEMO", "--title", title, "--status", status)
        assert made.exit_code == 0, made.output
    shown = answer(run("project", "show", "--project-id", "DEMO", "--json"))
    assert shown == await call(url, secret, "get_project", {"projectId": "DEMO"})
    filters = (
        "task", "list", "--project-id", "DEMO", "--status", "backlog", "--status", "done",
        "--order", "desc", "--projection", "summary", "--limit", "1", "--json",
    )  # fmt: skip
    listed = answer(run(*filters))
    arguments = {
        "projectId": "DEMO",
        "status": ["backlog", "done"],
        "order": "desc",
        "projection": "summary",
        "limit": 1,
    }
    tool = await call(url, secret, "list_tasks", arguments)
    # A cursor is bound to its caller (the token here, the person at the CLI); the rest is equal.
    assert {**listed, "nextCursor": None} == {**tool, "nextCursor": None}
    cursor = listed["nextCursor"]
    following = run(*filters, "--cursor", cursor)
    assert [t["title"] for t in answer(following)["tasks"]] == ["Draw"]
    assert [t["title"] for t in listed["tasks"]] == ["Frame"]
    assert listed["total"] == 2
    # One value of an option that takes one or several goes alone, as a tool takes it.
    single = answer(run("task", "list", "--project-id", "DEMO", "--status", "done", "--json"))
    assert single == await call(url, secret, "list_tasks", {"projectId": "DEMO", "status": "done"})
    text = run("task", "list", "--project-id", "DEMO", "--status", "done")
    assert text.exit_code == 0, text.output
    assert "DEMO-3  Frame  done" in text.output
    assert "total: 1" in text.output


def test_a_keyed_write_answers_as_the_operation_does_and_retries_with_its_key(
    run: RunCli, database_url: URL, tmp_path: Path
) -> None:
    command = ("task", "create", "--project-id", "DEMO", "--title", "Ship", "--tags", "release")
    made = answer(run(*command, "--idempotency-key", "ship-1", "--json"))
    assert made["task"]["tags"] == ["release"]
    # The same person, key and arguments through the operation as MCP runs it (keys are the
    # caller's own, so not through a token): the first acknowledgement again, not a new task.
    arguments = {"projectId": "DEMO", "title": "Ship", "tags": ["release"]}
    again = run_operation(
        database_url, tmp_path, "create_task", {**arguments, "idempotencyKey": "ship-1"}
    )
    assert again == made
    # Without a key each run is a new request: a second task.
    other = answer(run(*command, "--json"))
    assert other["task"]["number"] == made["task"]["number"] + 1
    retried = answer(run(*command, "--idempotency-key", "ship-1", "--json"))
    assert retried == made


async def test_a_revision_checked_write_is_refused_as_the_tool_refuses_it(
    run: RunCli, url: str, secret: str
) -> None:
    write = ("state", "write", "--project-id", "DEMO", "--content", "We ship Friday.")
    first = answer(run(*write, "--expected-revision", "0", "--json"))
    assert first["revision"] == 1
    shown = run("state", "show", "DEMO", "--json")  # written by hand: indented JSON
    assert json.loads(shown.output)["content"] == "We ship Friday."
    # The same text from the same revision again is a retry that landed: answered, not refused.
    assert answer(run(*write, "--expected-revision", "0", "--json"))["replayed"] is True
    write = ("state", "write", "--project-id", "DEMO", "--content", "We ship Monday.")
    stale = refusal(run(*write, "--expected-revision", "0", "--json"))
    arguments = {"projectId": "DEMO", "workspaceId": None, "content": "We ship Monday."}
    tool = await call(url, secret, "update_project_state", {**arguments, "expectedRevision": 0})
    assert stale == tool
    assert stale["code"] == "REVISION_CONFLICT"
    plain = run(*write, "--expected-revision", "0")
    assert (plain.exit_code, plain.output.endswith("[REVISION_CONFLICT]\n")) == (1, True)


async def test_a_bad_value_is_refused_naming_the_option_and_the_accepted_values(
    run: RunCli, url: str, secret: str
) -> None:
    bad = refusal(run("task", "list", "--project-id", "DEMO", "--order", "sideways", "--json"))
    tool = await call(url, secret, "list_tasks", {"projectId": "DEMO", "order": "sideways"})
    assert bad["code"] == tool["code"] == "VALIDATION"
    assert bad["details"] == {**tool["details"], "option": "--order"}
    assert bad["details"]["accepted"] == ["asc", "desc"]
    assert bad["message"].startswith("--order: ")
    over = refusal(run("task", "list", "--project-id", "DEMO", "--limit", "501", "--json"))
    assert over["details"] == {"field": "limit", "minimum": 1, "maximum": 500, "option": "--limit"}
    text = run("task", "list", "--project-id", "DEMO", "--limit", "501")
    assert text.exit_code == 1
    assert text.output == "error: --limit: must be a whole number from 1 to 500. [VALIDATION]\n"
    # Over 200 rows a page only the board projection takes: the service says so.
    wide = refusal(run("task", "list", "--project-id", "DEMO", "--limit", "300", "--json"))
    assert (wide["details"]["option"], wide["details"]["field"]) == ("--limit", "limit")
    assert "projection board takes up to 500" in wide["message"]
    not_json = refusal(run("task", "move", "--project-id", "DEMO", "--changes", "{", "--json"))
    assert (not_json["code"], not_json["details"]["option"]) == ("VALIDATION", "--changes")
    # What click itself checks (a required option, a number that is not one) is a usage error.
    assert run("task", "update", "--task-id", "DEMO-1").exit_code == 2
    assert run("task", "list", "--limit", "many").exit_code == 2


async def test_a_refusal_from_the_service_names_the_option_too(
    run: RunCli, url: str, secret: str
) -> None:
    """A rule the argument model cannot state (a time zone that must exist) is checked by the
    service; a person still reads which option to fix."""
    bad = refusal(run("week", "show", "--project-id", "DEMO", "--time-zone", "Mars/Base", "--json"))
    tool = await call(url, secret, "get_week", {"projectId": "DEMO", "timeZone": "Mars/Base"})
    assert bad["code"] == tool["code"] == "VALIDATION"
    assert bad["details"] == {**tool["details"], "option": "--time-zone"}
    assert bad["message"] == "--time-zone: " + tool["message"].removeprefix("timeZone: ")
    gone = refusal(run("task", "show", "--task-id", "DEMO-999", "--json"))
    assert gone["code"] == "NOT_FOUND"  # names no option: passed on as the service said it


def test_a_person_without_a_role_on_the_project_is_refused(run: RunCli) -> None:
    made = run("user", "create", "ada@example.com", "--password-stdin", stdin="a good password\n")
    assert made.exit_code == 0, made.output
    assert run("task", "create", "--project-id", "DEMO", "--title", "Hidden").exit_code == 0
    listing = ("task", "list", "--project-id", "DEMO", "--as", "ada@example.com", "--json")
    assert refusal(run(*listing))["code"] == "NOT_FOUND"
    create = (
        "task",
        "create",
        "--project-id",
        "DEMO",
        "--title",
        "Mine",
        "--as",
        "ada@example.com",
    )
    assert refusal(run(*create, "--json"))["code"] == "NOT_FOUND"
    assert run("project", "add-member", "DEMO", "ada@example.com", "--role", "read").exit_code == 0
    assert answer(run(*listing))["total"] == 1
    assert refusal(run(*create, "--json"))["code"] == "PERMISSION_DENIED"


def test_an_image_read_at_the_cli_says_it_was_scaled_and_where_the_original_is(
    run: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Image.linear_gradient("L").resize((2000, 500)).save(tmp_path / "wide.png")
    made = answer(run(
        "attachment", "upload", "--project-id", "DEMO", "--name", "wide.png",
        "--local-file-path", "wide.png", "--json",
    ))["attachment"]  # fmt: skip
    read = ("attachment", "read", "--project-id", "DEMO", "--attachment-id", made["id"])
    image = answer(run(*read, "--json"))["image"]
    assert (image["scaled"], image["width"], image["height"]) == (True, 1568, 392)
    assert image["original"]["width"] == 2000
    shown = run(*read)
    assert shown.exit_code == 0, shown.output
    assert "(an image, image/png," in shown.output
    assert "Scaled from 2000×500" in shown.output
    assert f"/attachments/{made['id']}/content" in shown.output
