"""Code repositories of a project, the branches tasks are worked on, and status reports.

A link is one task × repository × agent × branch: proposing the same branch again updates it.
The agent is whoever acts: the token's id, or the person's user id without a token. A status
report is a note on the task; it never makes a link.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict
from enum import StrEnum
from typing import Any, TypeVar
from urllib.parse import urlsplit

from crewboard.domain.board.repos import (
    LinkMade,
    Repo,
    RepoLink,
    RepoListing,
    RepoReport,
    RepoSections,
)
from crewboard.domain.board.tasks import Task
from crewboard.domain.identity.access import Role, Scope, parse_enum
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.domain.validation import check_text
from crewboard.errors import AlreadyExists, NotFound, ValidationFailed
from crewboard.services.board.note_views import (
    repo_view,
)
from crewboard.services.board.notes import (
    excerpt,
    keyed_task_write,
    noted_task,
    record_task_event,
)
from crewboard.services.board.task_lookup import access_task
from crewboard.services.idempotency import Ack, KeyedResult
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, access_project
from crewboard.services.views import actor_stamp
from crewboard.storage.board.notes import RepoLinkRepository
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

MAX_REPO_NAME = 200
MAX_URL = 500
MAX_BRANCH = 200
MAX_LINK_TITLE = 300
MAX_SUMMARY = 4000  # a link's or a status report's summary
REPORTS_SHOWN = 20  # the newest status reports list_task_repos shows
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,64}$")
T = TypeVar("T")


class TestsState(StrEnum):
    """How a branch's tests stand in a status report."""

    __test__ = False  # not a pytest test class, whatever the name says

    PASSED = "passed"
    FAILED = "failed"
    RUNNING = "running"
    NONE = "none"


# --- checks ---------------------------------------------------------------------------------


def check_https_url(field: str, value: str) -> str:
    """Raises: ValidationFailed unless an https:// URL with a host; LimitExceeded over 500."""
    url = check_text(field, value, max_length=MAX_URL, required=True)
    parts = urlsplit(url)
    if (
        parts.scheme != "https"
        or not parts.hostname
        or any(ch.isspace() or ord(ch) < 32 for ch in url)
    ):
        raise ValidationFailed.field(field, f"must be an https:// URL; got {value!r}.")
    return url


def check_branch(field: str, value: str) -> str:
    """Raises: ValidationFailed for a blank name, spaces or control characters; LimitExceeded."""
    branch = check_text(field, value, max_length=MAX_BRANCH, required=True)
    if branch.startswith("-") or any(ch.isspace() or ord(ch) < 32 for ch in branch):
        raise ValidationFailed.field(
            field, f"{value!r} is not a branch name (no spaces, not starting with '-')."
        )
    return branch


def check_commit(value: str) -> str:
    """Raises: ValidationFailed unless 7 to 64 hexadecimal characters (kept lower-case)."""
    if not _COMMIT.match(value):
        raise ValidationFailed.field(
            "commit", f"must be a commit hash of 7 to 64 hexadecimal characters; got {value!r}."
        )
    return value.lower()


def _text(field: str, value: str, limit: int) -> str:
    """Raises: LimitExceeded over `limit` characters, ValidationFailed on NUL."""
    return check_text(field, value, max_length=limit)


def _optional(value: str | None, check: Callable[[str], T]) -> T | None:
    return None if value is None else check(value)


def _links(uow: UnitOfWork) -> RepoLinkRepository:
    return RepoLinkRepository(uow.conn)


def _repo_of(uow: UnitOfWork, project: Project, repo_id: str) -> Repo:
    """Raises: NotFound when the repository is not one of the project's."""
    repo = _links(uow).repo(repo_id)
    if repo is None or repo.project_id != project.id:
        raise NotFound(
            f"No repository {repo_id!r} in {project.key}; list_task_repos shows the project's "
            "repositories and their ids.",
            {"resource": "repo", "ref": repo_id, "field": "repoId"},
        )
    return repo


# --- repositories ----------------------------------------------------------------------------


def add_repo(
    db: Database,
    actor: Actor,
    project: str,
    name: str,
    url: str,
    *,
    default_branch: str = "main",
) -> Repo:
    """Add a code repository to a project (project admins).

    Raises:
        AlreadyExists: the project has a repository of that name.
        NotFound, PermissionDenied, ValidationFailed, LimitExceeded.
    """
    clean_name = check_text("name", name, max_length=MAX_REPO_NAME, required=True)
    clean_url = check_https_url("url", url)
    branch = check_branch("defaultBranch", default_branch)

    def work(uow: UnitOfWork) -> Repo:
        access = access_project(uow, actor, project, scope=Scope.PROJECTS_ADMIN, role=Role.ADMIN)
        links = _links(uow)
        if links.repo_named(access.project.id, clean_name) is not None:
            raise AlreadyExists(
                f"{access.project.key} already has a repository named {clean_name}; choose "
                "another name.",
                {"resource": "repo", "name": clean_name},
            )
        repo = Repo(
            id=new_id("rep"),
            project_id=access.project.id,
            name=clean_name,
            url=clean_url,
            default_branch=branch,
            created_at=uow.now,
        )
        links.add_repo(repo)
        uow.record_event(
            "repo.added",
            actor=actor.as_payload(),
            payload={"repo": repo_view(repo)},
            project_id=access.project.id,
            workspace_id=access.project.workspace_id,
        )
        return repo

    return db.write(work)


def task_repo_sections(uow: UnitOfWork, task: Task, *, limit: int) -> RepoSections:
    """A task's newest `limit` repository links and status reports, with their totals."""
    links = _links(uow)
    linked = links.task_links(task.id)
    reports, total = links.task_reports(task.id, limit=limit)
    return RepoSections(
        links=linked[:limit],
        links_total=len(linked),
        reports=reports,
        reports_total=total,
        repos={repo.id: repo for repo in links.repos(task.project_id)},
    )


def list_task_repos(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    task: str | None = None,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> RepoListing:
    """A project's repositories; with a task, also its links and newest status reports.

    Raises:
        ValidationFailed: neither a project nor a task named.
        NotFound: the project or task is not open to the actor, or the task is in another project.
    """
    if project is None and task is None:
        raise ValidationFailed.field(
            "projectId", "name a project (projectId) or a task (taskId) to list repositories for."
        )

    def work(uow: UnitOfWork) -> RepoListing:
        if task is None:
            assert project is not None  # noqa: S101 - checked above
            proj = access_project(uow, actor, project, workspace_id=workspace_id).project
            return RepoListing(proj.id, proj.key, _links(uow).repos(proj.id))
        found, proj = access_task(uow, actor, task, project=project, workspace_id=workspace_id)
        return RepoListing(
            proj.id,
            proj.key,
            _links(uow).repos(proj.id),
            task=noted_task(found, proj),
            sections=task_repo_sections(uow, found, limit=REPORTS_SHOWN),
        )

    return db.read(work)


# --- links and reports -----------------------------------------------------------------------


def propose_repo_change(
    db: Database,
    actor: Actor,
    *,
    task: str,
    workspace_id: WorkspaceRef,
    idempotency_key: str | None,
    repo_id: str,
    branch: str,
    target_branch: str | None = None,
    title: str | None = None,
    summary: str | None = None,
    pr_url: str | None = None,
    answer: Callable[[LinkMade], dict[str, Any]],
) -> KeyedResult:
    """Link the actor's branch of a repository to a task, or update that link (keyed).

    Fields left out (None) keep what the link had; the ledger keeps `answer`'s words.

    Raises:
        NotFound: the task or repository is not open to the actor.
        ValidationFailed, LimitExceeded, IdempotencyConflict, PermissionDenied.
    """
    clean_branch = check_branch("branch", branch)
    given = {
        "target_branch": _optional(target_branch, lambda v: check_branch("targetBranch", v)),
        "title": _optional(title, lambda v: _text("title", v, MAX_LINK_TITLE)),
        "summary": _optional(summary, lambda v: _text("summary", v, MAX_SUMMARY)),
        "pr_url": _optional(pr_url, lambda v: check_https_url("prUrl", v)),
    }

    def perform(uow: UnitOfWork, found: Task, project: Project) -> Ack:
        repo = _repo_of(uow, project, repo_id)
        links = _links(uow)
        current = links.link(found.id, repo.id, actor.principal, clean_branch)
        before = asdict(current) if current is not None else {}
        link = RepoLink(
            id=current.id if current is not None else new_id("lnk"),
            project_id=project.id,
            task_id=found.id,
            repo_id=repo.id,
            agent=actor.principal,
            branch=clean_branch,
            created_at=current.created_at if current is not None else uow.now,
            updated_at=uow.now,
            **{k: before.get(k) if v is None else v for k, v in given.items()},
        )
        if current is None:
            links.add_link(link)
        else:
            links.update_link(link)
        record_task_event(
            uow,
            actor,
            "task.repo_linked",
            found,
            project,
            payload={
                "link": {
                    "id": link.id,
                    "repoId": link.repo_id,
                    "branch": link.branch,
                    "prUrl": link.pr_url,
                },
                "created": current is None,
            },
        )
        return Ack(
            answer(LinkMade(link, repo, created=current is None)),
            resource_type="repo_link",
            resource_id=link.id,
            project_id=project.id,
        )

    return keyed_task_write(
        db,
        actor,
        operation="propose_repo_change",
        task=task,
        workspace_id=workspace_id,
        idempotency_key=idempotency_key,
        arguments={
            "repoId": repo_id,
            "branch": branch,
            "targetBranch": target_branch,
            "title": title,
            "summary": summary,
            "prUrl": pr_url,
        },
        perform=perform,
    )


def report_repo_status(
    db: Database,
    actor: Actor,
    *,
    task: str,
    workspace_id: WorkspaceRef,
    idempotency_key: str | None,
    repo_id: str | None = None,
    branch: str | None = None,
    commit: str | None = None,
    tests: str | None = None,
    summary: str | None = None,
    answer: Callable[[RepoReport], dict[str, Any]],
) -> KeyedResult:
    """Report how work on a task stands in code: branch, commit, tests, a summary (keyed).

    It never links a branch to the task; propose_repo_change does that. The ledger keeps
    `answer`'s words for the report.

    Raises:
        ValidationFailed: nothing to report, or a bad field. NotFound: task or repository.
        LimitExceeded, IdempotencyConflict, PermissionDenied.
    """
    clean_branch = _optional(branch, lambda v: check_branch("branch", v))
    sha = _optional(commit, check_commit)
    state = _optional(tests, lambda v: parse_enum(v, TestsState, "tests"))
    text = _optional(summary, lambda v: _text("summary", v, MAX_SUMMARY) or None)
    if clean_branch is None and sha is None and state is None and text is None:
        raise ValidationFailed.field(
            "summary", "a status report says something: give a branch, commit, tests or summary."
        )

    def perform(uow: UnitOfWork, found: Task, project: Project) -> Ack:
        repo = _repo_of(uow, project, repo_id) if repo_id is not None else None
        report = RepoReport(
            id=new_id("rpt"),
            project_id=project.id,
            task_id=found.id,
            repo_id=repo.id if repo else None,
            branch=clean_branch,
            commit_sha=sha,
            tests=state.value if state else None,
            summary=text,
            reported_by=actor_stamp(actor),
            created_at=uow.now,
        )
        _links(uow).add_report(report)
        record_task_event(
            uow,
            actor,
            "task.repo_status_reported",
            found,
            project,
            payload={
                "reportId": report.id,
                "repoId": report.repo_id,
                "branch": report.branch,
                "commit": report.commit_sha,
                "tests": report.tests,
                "excerpt": excerpt(text) if text else None,
            },
        )
        return Ack(
            answer(report),
            resource_type="repo_report",
            resource_id=report.id,
            project_id=project.id,
        )

    return keyed_task_write(
        db,
        actor,
        operation="report_repo_status",
        task=task,
        workspace_id=workspace_id,
        idempotency_key=idempotency_key,
        arguments={
            "repoId": repo_id,
            "branch": branch,
            "commit": commit,
            "tests": tests,
            "summary": summary,
        },
        perform=perform,
    )
