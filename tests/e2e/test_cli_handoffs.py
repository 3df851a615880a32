"""`crewboard handoff …` in-process (click's runner) on each backend: an operator writes the
owner's handoff, lists and shows it, adds an action item and closes it; a second handoff for
the same day and a bad date exit 1 with the code."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import RunCli


@pytest.fixture
def run(run: RunCli) -> RunCli:
    """The CLI on a database `crewboard init` has set up."""
    assert run("init").exit_code == 0
    return run


def test_write_list_show_and_work_a_handoff(run: RunCli) -> None:
    wrote = run("handoff", "write", "DEMO", "--completed", "Shipped it", "--next-steps",
                "Watch errors", "--date", "2026-12-03", "--json")  # fmt: skip
    assert wrote.exit_code == 0, wrote.output
    handoff = json.loads(wrote.output)["handoff"]
    assert (handoff["date"], handoff["completed"]) == ("2026-12-03", "Shipped it")
    listed = run("handoff", "list", "DEMO").output
    assert f"{handoff['id']}  2026-12-03" in listed
    added = run("handoff", "add-item", handoff["id"], "Call the vendor", "--due", "2026-12-04")
    assert added.exit_code == 0, added.output
    item = added.output.split()[1]
    assert item.startswith("hai_")
    done = run("handoff", "set-item", item, "--status", "done")
    assert done.output.strip() == f"{item} [done] Call the vendor"
    shown = run("handoff", "show", handoff["id"]).output
    assert "Next steps:\nWatch errors" in shown
    assert f"item {item} [done] Call the vendor" in shown


def test_refusals_exit_1_with_the_code(run: RunCli) -> None:
    assert run("handoff", "write", "DEMO", "--date", "2026-12-03").exit_code == 0
    twice = run("handoff", "write", "DEMO", "--date", "2026-12-03", "--json")
    assert twice.exit_code == 1
    assert json.loads(twice.output)["error"]["code"] == "HANDOFF_ALREADY_EXISTS"
    bad = run("handoff", "list", "DEMO", "--since", "yesterday")
    assert bad.exit_code == 1
    assert "since" in bad.output
    assert "VALIDATION" in bad.output


def test_a_handoff_of_a_shared_project_takes_its_workspace(run: RunCli) -> None:
    made = run("workspace", "create", "Studio", "--json")
    assert made.exit_code == 0, made.output
    space = json.loads(made.output)["id"]
    project = run("project", "create", "--key", "TEAM", "--name", "Team", "--workspace", space)
    assert project.exit_code == 0, project.output
    wrote = run("handoff", "write", "TEAM", "--completed", "Shipped", "--date", "2026-12-03")
    assert wrote.exit_code == 0, wrote.output
