"""Repositories of a project, task × branch links and status reports, through the services."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from crewboard.contract.board import present_notes
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor, User
from crewboard.errors import ErrorCode
from crewboard.services.board import repos, tasks
from crewboard.services.idempotency import KeyedResult
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.errors import refused
from tests.support.factories import count_rows, grant, make_project, make_user, token_actor

URL = "https://github.com/acme/app"
PR = "https://github.com/acme/app/pull/42"


def make_task(db: Database, user: User, project: str, key: str) -> None:
    tasks.create_task(
        db,
        person_actor(user),
        project=project,
        workspace_id=None,
        idempotency_key=key,
        title=f"Work in {project}",
    )


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    make_task(db, user, "CRW", "t-1")
    return user


@pytest.fixture
def repo(db: Database, owner: User) -> dict[str, Any]:
    return present_notes.repo_view(repos.add_repo(db, person_actor(owner), "CRW", "app", URL))


def agent_for(db: Database, user: User) -> Actor:
    issued = tokens.issue_token(
        db, person_actor(user), kind="agent", scopes=["read", "tasks.manage"], project="CRW"
    )
    return tokens.authenticate_token(db, issued.secret)


@pytest.fixture
def agent(db: Database, owner: User) -> Actor:
    return agent_for(db, owner)


def propose(
    db: Database, actor: Actor, repo_id: str, key: str = "p-1", **fields: Any
) -> KeyedResult:
    arguments: dict[str, Any] = {
        "task": "CRW-1",
        "workspace_id": None,
        "idempotency_key": key,
        "repo_id": repo_id,
        "branch": "agent/crw-1-fix-login",
    }
    return repos.propose_repo_change(
        db, actor, **{**arguments, **fields}, answer=present_notes.link_answer
    )


def report(db: Database, actor: Actor, key: str = "r-1", **fields: Any) -> KeyedResult:
    return repos.report_repo_status(
        db,
        actor,
        task="CRW-1",
        workspace_id=None,
        idempotency_key=key,
        **fields,
        answer=present_notes.report_answer,
    )


def event_types(db: Database) -> list[str]:
    rows = db.read(lambda uow: uow.events.list_after(project_id=None, limit=1000))
    return [r["type"] for r in rows]


# --- repositories ------------------------------------------------------------------------------


def test_a_project_admin_adds_repositories_and_everyone_on_it_lists_them(
    db: Database, owner: User, repo: dict[str, Any]
) -> None:
    assert (repo["name"], repo["url"], repo["defaultBranch"]) == ("app", URL, "main")
    assert repo["id"].startswith("rep_")
    assert "repo.added" in event_types(db)
    repos.add_repo(db, person_actor(owner), "CRW", "docs", URL + "-docs", default_branch="trunk")
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    listed = present_notes.repo_listing_view(
        repos.list_task_repos(db, person_actor(reader), project="CRW")
    )
    assert [(r["name"], r["defaultBranch"]) for r in listed["repos"]] == [
        ("app", "main"),
        ("docs", "trunk"),
    ]
    assert "links" not in listed


def test_add_repo_refusals(db: Database, owner: User, repo: dict[str, Any]) -> None:
    admin = person_actor(owner)
    taken = refused(ErrorCode.ALREADY_EXISTS, repos.add_repo, db, admin, "CRW", "app", URL)
    assert taken.details["name"] == "app"
    for url in ("http://github.com/acme/app", "git@github.com:acme/app.git", "https://", "ftp://x"):
        error = refused(ErrorCode.VALIDATION, repos.add_repo, db, admin, "CRW", "x", url)
        assert error.details["field"] == "url", url
    long_url = "https://example.com/" + "a" * 481
    error = refused(ErrorCode.LIMIT_EXCEEDED, repos.add_repo, db, admin, "CRW", "x", long_url)
    assert error.details["field"] == "url"
    error = refused(
        ErrorCode.VALIDATION, repos.add_repo, db, admin, "CRW", "x", URL, default_branch="a b"
    )
    assert error.details["field"] == "defaultBranch"
    error = refused(ErrorCode.LIMIT_EXCEEDED, repos.add_repo, db, admin, "CRW", "n" * 201, URL)
    assert error.details["field"] == "name"
    writer = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer, Role.WRITE)
    refused(ErrorCode.PERMISSION_DENIED, repos.add_repo, db, person_actor(writer), "CRW", "x", URL)
    refused(ErrorCode.NOT_FOUND, repos.add_repo, db, admin, "NOPE", "x", URL)
    assert count_rows(db, "repos") == 1


def test_list_task_repos_needs_a_project_or_a_task_of_that_project(
    db: Database, owner: User, repo: dict[str, Any]
) -> None:
    actor = person_actor(owner)
    assert refused(ErrorCode.VALIDATION, repos.list_task_repos, db, actor).details["field"] == (
        "projectId"
    )
    make_project(db, owner, "TWO")
    make_task(db, owner, "TWO", "t-2")
    refused(ErrorCode.NOT_FOUND, repos.list_task_repos, db, actor, project="TWO", task="CRW-1")
    both = present_notes.repo_listing_view(
        repos.list_task_repos(db, actor, project="CRW", task="CRW-1")
    )
    assert both["task"]["key"] == "CRW-1"
    assert [r["id"] for r in both["repos"]] == [repo["id"]]
    stranger = make_user(db, "stranger@example.com")
    refused(ErrorCode.NOT_FOUND, repos.list_task_repos, db, person_actor(stranger), task="CRW-1")


# --- links -------------------------------------------------------------------------------------


def test_proposing_the_same_branch_again_updates_the_one_link(
    db: Database, clock: ManualClock, agent: Actor, repo: dict[str, Any]
) -> None:
    first = propose(db, agent, repo["id"], title="Fix login redirect", target_branch="main")
    link = first.body["link"]
    assert first.body["created"] is True
    assert (link["agent"], link["branch"], link["targetBranch"], link["prUrl"]) == (
        agent.principal,
        "agent/crw-1-fix-login",
        "main",
        None,
    )
    clock.advance(timedelta(minutes=5))
    second = propose(db, agent, repo["id"], "p-2", pr_url=PR, summary="Adds a regression test.")
    assert second.body["created"] is False
    updated = second.body["link"]
    assert updated["id"] == link["id"]
    assert (updated["title"], updated["targetBranch"], updated["prUrl"], updated["summary"]) == (
        "Fix login redirect",
        "main",
        PR,
        "Adds a regression test.",
    )
    assert updated["updatedAt"] > link["updatedAt"]
    assert updated["createdAt"] == link["createdAt"]
    assert count_rows(db, "task_repo_links") == 1
    listed = present_notes.repo_listing_view(repos.list_task_repos(db, agent, task="CRW-1"))
    assert [(x["id"], x["repoName"], x["prUrl"]) for x in listed["links"]] == [
        (link["id"], "app", PR)
    ]
    assert event_types(db).count("task.repo_linked") == 2


def test_a_link_belongs_to_one_agent_and_one_branch(
    db: Database, owner: User, agent: Actor, repo: dict[str, Any]
) -> None:
    propose(db, agent, repo["id"])
    propose(db, agent, repo["id"], "p-2", branch="agent/crw-1-second-try")
    other = agent_for(db, owner)
    theirs = propose(db, other, repo["id"], "p-1").body["link"]
    assert theirs["agent"] == other.principal
    person = propose(db, person_actor(owner), repo["id"], "p-1").body["link"]
    assert person["agent"] == owner.id
    links = present_notes.repo_listing_view(repos.list_task_repos(db, agent, task="CRW-1"))["links"]
    assert len(links) == 4
    assert {x["agent"] for x in links} == {agent.principal, other.principal, owner.id}


def test_an_exact_retry_replays_and_a_changed_one_is_refused(
    db: Database, agent: Actor, repo: dict[str, Any]
) -> None:
    first = propose(db, agent, repo["id"], pr_url=PR)
    again = propose(db, agent, repo["id"], pr_url=PR)
    assert again.replayed is True
    assert again.body == first.body
    clash = refused(ErrorCode.IDEMPOTENCY_CONFLICT, propose, db, agent, repo["id"], title="Other")
    assert clash.details["resourceId"] == first.body["link"]["id"]
    assert event_types(db).count("task.repo_linked") == 1


def test_propose_repo_change_refusals(
    db: Database, owner: User, agent: Actor, repo: dict[str, Any]
) -> None:
    cases: list[tuple[ErrorCode, str, dict[str, Any]]] = [
        (ErrorCode.VALIDATION, "prUrl", {"pr_url": "http://github.com/acme/app/pull/1"}),
        (ErrorCode.LIMIT_EXCEEDED, "prUrl", {"pr_url": "https://example.com/" + "p" * 481}),
        (ErrorCode.VALIDATION, "branch", {"branch": "two words"}),
        (ErrorCode.VALIDATION, "branch", {"branch": "  "}),
        (ErrorCode.VALIDATION, "branch", {"branch": "-rf"}),
        (ErrorCode.LIMIT_EXCEEDED, "branch", {"branch": "b" * 201}),
        (ErrorCode.VALIDATION, "targetBranch", {"target_branch": "main branch"}),
        (ErrorCode.LIMIT_EXCEEDED, "title", {"title": "t" * 301}),
        (ErrorCode.LIMIT_EXCEEDED, "summary", {"summary": "s" * 4001}),
        (ErrorCode.VALIDATION, "idempotencyKey", {"key": ""}),
    ]
    for code, field, fields in cases:
        error = refused(code, propose, db, agent, repo["id"], **fields)
        assert error.details["field"] == field, fields
    propose(db, agent, repo["id"], "long", branch="b" * 200, title="t" * 300)
    make_project(db, owner, "TWO")
    elsewhere = present_notes.repo_view(repos.add_repo(db, person_actor(owner), "TWO", "app", URL))
    missing = refused(ErrorCode.NOT_FOUND, propose, db, agent, elsewhere["id"], "p-x")
    assert missing.details["field"] == "repoId"
    refused(ErrorCode.NOT_FOUND, propose, db, agent, "rep_unknown", "p-y")
    reader = make_user(db, "reader@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    refused(ErrorCode.PERMISSION_DENIED, propose, db, person_actor(reader), repo["id"], "p-z")
    read_only = token_actor(db, owner, ["read"])
    refused(ErrorCode.PERMISSION_DENIED, propose, db, read_only, repo["id"], "p-z")
    wrong_space = refused(
        ErrorCode.VALIDATION, propose, db, agent, repo["id"], "p-w", workspace_id="wsp_x"
    )
    assert wrong_space.details["field"] == "workspaceId"
    assert count_rows(db, "task_repo_links") == 1


def test_nul_characters_are_refused_alike_on_both_backends(
    db: Database, owner: User, agent: Actor, repo: dict[str, Any]
) -> None:
    admin = person_actor(owner)
    cases: list[tuple[str, Any]] = [
        ("name", lambda: present_notes.repo_view(repos.add_repo(db, admin, "CRW", "a\x00", URL))),
        (
            "url",
            lambda: present_notes.repo_view(repos.add_repo(db, admin, "CRW", "x", URL + "\x00")),
        ),
        ("title", lambda: propose(db, agent, repo["id"], title="a\x00")),
        ("summary", lambda: propose(db, agent, repo["id"], summary="a\x00")),
        ("branch", lambda: propose(db, agent, repo["id"], branch="a\x00")),
        ("summary", lambda: report(db, agent, summary="a\x00")),
    ]
    for field, call in cases:
        assert refused(ErrorCode.VALIDATION, call).details["field"] == field
    assert count_rows(db, "task_repo_links") + count_rows(db, "task_repo_reports") == 0


def test_concurrent_first_proposals_of_one_branch_make_one_link(
    db: Database, agent: Actor, repo: dict[str, Any]
) -> None:
    writers = 6
    start = threading.Barrier(writers)

    def write(n: int) -> str:
        start.wait(timeout=10)
        return str(propose(db, agent, repo["id"], f"race-{n}").body["link"]["id"])

    with ThreadPoolExecutor(max_workers=writers) as pool:
        ids = set(pool.map(write, range(writers)))
    assert len(ids) == 1
    assert count_rows(db, "task_repo_links") == 1


# --- status reports ----------------------------------------------------------------------------


def test_a_status_report_lands_on_the_task_and_never_makes_a_link(
    db: Database, clock: ManualClock, agent: Actor, repo: dict[str, Any]
) -> None:
    made = report(
        db,
        agent,
        repo_id=repo["id"],
        branch="agent/crw-1-fix-login",
        commit="ABCDEF1234",
        tests="passed",
        summary="All green.",
    ).body["report"]
    assert (made["commit"], made["tests"], made["repoId"]) == ("abcdef1234", "passed", repo["id"])
    assert made["reportedBy"]["tokenId"] == agent.principal
    clock.advance(timedelta(minutes=1))
    newer = report(db, agent, "r-2", tests="running").body["report"]
    assert newer["repoId"] is None
    assert count_rows(db, "task_repo_links") == 0
    listed = present_notes.repo_listing_view(repos.list_task_repos(db, agent, task="CRW-1"))
    assert listed["links"] == []
    assert [r["id"] for r in listed["reports"]] == [newer["id"], made["id"]]
    assert listed["reportsTotal"] == 2
    assert event_types(db).count("task.repo_status_reported") == 2
    again = report(db, agent, "r-2", tests="running")
    assert again.replayed is True
    assert refused(ErrorCode.IDEMPOTENCY_CONFLICT, report, db, agent, "r-2", tests="failed")


def test_report_repo_status_refusals(db: Database, agent: Actor, repo: dict[str, Any]) -> None:
    cases: list[tuple[ErrorCode, str, dict[str, Any]]] = [
        (ErrorCode.VALIDATION, "summary", {}),
        (ErrorCode.VALIDATION, "commit", {"commit": "abc123"}),
        (ErrorCode.VALIDATION, "commit", {"commit": "a" * 65}),
        (ErrorCode.VALIDATION, "commit", {"commit": "xyz1234"}),
        (ErrorCode.VALIDATION, "tests", {"tests": "green"}),
        (ErrorCode.VALIDATION, "branch", {"branch": "a b"}),
        (ErrorCode.LIMIT_EXCEEDED, "summary", {"summary": "s" * 4001}),
    ]
    for code, field, fields in cases:
        error = refused(code, report, db, agent, **fields)
        assert error.details["field"] == field, fields
    tests_error = refused(ErrorCode.VALIDATION, report, db, agent, tests="green")
    assert tests_error.details["accepted"] == ["passed", "failed", "running", "none"]
    refused(ErrorCode.NOT_FOUND, report, db, agent, repo_id="rep_unknown", tests="none")
    report(db, agent, "ok-1", commit="a" * 7)
    report(db, agent, "ok-2", commit="b" * 64, summary="s" * 4000)
    assert count_rows(db, "task_repo_reports") == 2
