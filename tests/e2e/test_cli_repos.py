"""`crewboard repo add` and `crewboard repo list` in-process (click's runner) on each backend."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import RunCli

URL_ = "https://github.com/acme/app"


@pytest.fixture
def run(run: RunCli) -> RunCli:
    """The CLI on a database `crewboard init` has set up."""
    assert run("init").exit_code == 0
    return run


def test_repo_add_and_list_for_people_and_scripts(run) -> None:  # type: ignore[no-untyped-def]
    added = run("repo", "add", "DEMO", "app", URL_, "--json")
    assert added.exit_code == 0, added.output
    repo = json.loads(added.output)
    assert (repo["name"], repo["url"], repo["defaultBranch"]) == ("app", URL_, "main")
    plain = run("repo", "add", "DEMO", "docs", URL_ + "-docs", "--default-branch", "trunk")
    assert plain.exit_code == 0, plain.output
    assert plain.output.startswith("added repository docs (rep_")
    listed = json.loads(run("repo", "list", "DEMO", "--json").output)
    assert [(r["name"], r["defaultBranch"]) for r in listed] == [("app", "main"), ("docs", "trunk")]
    text = run("repo", "list", "DEMO").output
    assert f"{repo['id']}  app  {URL_}  (main)" in text


def test_repo_errors_exit_1_with_the_code(run) -> None:  # type: ignore[no-untyped-def]
    insecure = run("repo", "add", "DEMO", "app", "http://github.com/acme/app", "--json")
    assert insecure.exit_code == 1
    error = json.loads(insecure.output)["error"]
    assert (error["code"], error["details"]["field"]) == ("VALIDATION", "url")
    assert run("repo", "add", "DEMO", "app", URL_).exit_code == 0
    twice = run("repo", "add", "DEMO", "app", URL_)
    assert twice.exit_code == 1
    assert "ALREADY_EXISTS" in twice.output
    missing = run("repo", "list", "NOPE")
    assert missing.exit_code == 1
    assert "NOT_FOUND" in missing.output


def test_only_project_admins_add_repositories(run) -> None:  # type: ignore[no-untyped-def]
    made = run("user", "create", "ada@example.com", "--password-stdin", stdin="a good password\n")
    assert made.exit_code == 0, made.output
    assert run("project", "add-member", "DEMO", "ada@example.com", "--role", "write").exit_code == 0
    denied = run("repo", "add", "DEMO", "app", URL_, "--as", "ada@example.com", "--json")
    assert denied.exit_code == 1
    assert json.loads(denied.output)["error"]["code"] == "PERMISSION_DENIED"
    empty = run("repo", "list", "DEMO", "--as", "ada@example.com")
    assert (empty.exit_code, empty.output.strip()) == (0, "no repositories")
