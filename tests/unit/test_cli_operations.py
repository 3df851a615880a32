"""Every operation has a CLI command or says why not, each declared command is in the click
tree, and a built command's options follow its argument model."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from crewboard.cli.main import cli
from crewboard.cli.operations import (
    CLEAR,
    OperationCommand,
    arguments,
    built_commands,
    operation_params,
)
from crewboard.contract.catalogue import default_catalogue
from crewboard.contract.operation import Cli, NoDoor, Operation
from crewboard.errors import ValidationFailed


def _command(words: tuple[str, ...]) -> click.Command | None:
    found: click.Command | None = cli
    for word in words:
        if not isinstance(found, click.Group):
            return None
        found = found.commands.get(word)
    return found


def _op(name: str) -> Operation:
    found = default_catalogue().find(name)
    assert found is not None
    return found


def test_every_operation_declares_its_command_or_why_it_has_none() -> None:
    undeclared = [op.name for op in default_catalogue() if op.cli is None]
    assert not undeclared, f"no cli= on: {undeclared}"
    silent = [
        op.name for op in default_catalogue() if isinstance(op.cli, NoDoor) and not op.cli.reason
    ]
    assert not silent


def test_every_declared_command_is_in_the_tree_once() -> None:
    declared = [(op.name, op.cli.words) for op in default_catalogue() if isinstance(op.cli, Cli)]
    missing = [name for name, words in declared if _command(words) is None]
    assert not missing, f"declared commands missing from the tree: {missing}"
    groups = [name for name, words in declared if isinstance(_command(words), click.Group)]
    assert not groups, f"declared commands that are groups: {groups}"
    words = [w for _, w in declared]
    assert len(words) == len(set(words)), "two operations declare the same command"
    built = dict(built_commands(cli))
    for name, command_words in declared:
        command = _command(command_words)
        if isinstance(command, OperationCommand):
            assert command.operation.name == name
            assert built[command_words].name == name
    # A command written by hand at an operation's words is kept (e.g. `state show`).
    assert not isinstance(_command(("state", "show")), OperationCommand)
    assert isinstance(_command(("task", "list")), OperationCommand)


def test_help_lists_the_options_from_the_argument_model() -> None:
    shown = CliRunner().invoke(cli, ["task", "list", "--help"])
    assert shown.exit_code == 0, shown.output
    for option in ("--project-id", "--status", "--updated-since", "--as", "--json"):
        assert option in shown.output
    assert "[backlog|ready_for_ai|in_progress|blocked|review|approved|done]" in shown.output
    assert "[1<=x<=500]" in shown.output  # the limit's bounds
    assert "List tasks." in shown.output
    created = CliRunner().invoke(cli, ["handoff", "create", "--help"]).output
    assert "--send-notification / --no-send-notification" in created
    assert "--idempotency-key" in created


def test_options_take_their_kind_from_the_field() -> None:
    params = {p.field: p for p in operation_params(_op("list_tasks"))}
    assert (params["limit"].kind, params["limit"].low, params["limit"].high) == ("int", 1, 500)
    assert params["status"].kind == "choice"
    assert (params["status"].multiple, params["status"].scalar) == (True, True)
    assert (params["fields"].multiple, params["fields"].scalar) == (True, False)
    assert params["number"].kind == "int"
    assert params["updated_since"].kind == "str"
    moves = {p.field: p for p in operation_params(_op("set_task_status"))}
    assert (moves["changes"].kind, moves["changes"].required) == ("json", True)
    assert moves["expected_versions"].kind == "json"
    # Optional (the project's own workspace when left out): not sent, and --clear sends null.
    assert (moves["workspace_id"].required, moves["workspace_id"].nullable) == (False, False)
    assert moves["workspace_id"].clearable
    # A keyed write's key is made per run when left out.
    assert moves["idempotency_key"].required is False
    handoff = {p.field: p for p in operation_params(_op("create_handoff"))}
    assert handoff["send_email"].kind == "bool"
    assert (handoff["recipients"].kind, handoff["recipients"].multiple) == ("str", True)


def test_a_write_clears_an_argument_with_clear_and_makes_a_key_per_run() -> None:
    op = _op("assign_task")
    fields = operation_params(op)
    given = {"task_id": "CRW-1", "expected_revision": 2, CLEAR: ("assignee-id",)}
    sent = arguments(op, fields, given)
    assert sent["assigneeId"] is None
    assert "humanOwnerId" not in sent  # left out: stays as it is
    assert "workspaceId" not in sent  # optional: left out, the project's own workspace
    assert sent["idempotencyKey"] != arguments(op, fields, given)["idempotencyKey"]
    with pytest.raises(ValidationFailed) as refused:
        arguments(op, fields, {**given, "assignee_id": "rol_1"})
    assert refused.value.details == {"field": "assigneeId", "option": "--assignee-id"}
    shown = CliRunner().invoke(cli, ["task", "assign", "--help"]).output
    assert "--clear [workspace-id|assignee-id|assignee-type|human-owner-id]" in shown
    assert "--clear" not in CliRunner().invoke(cli, ["task", "list", "--help"]).output
