"""Board tools for code: a project's repositories, task branches and status reports."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from crewboard.contract.args import Args, WorkspaceId
from crewboard.contract.board.notes import TaskWrite, write_on_task
from crewboard.contract.board.present_notes import link_answer, repo_listing_view, report_answer
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import RESPONSE_BUDGET, Reply, compact, fit_rows
from crewboard.domain.identity.access import Toolset
from crewboard.services.board import repos

RepoId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="From list_task_repos.",
    ),
]
Branch = Annotated[
    str,
    Field(min_length=1, max_length=repos.MAX_BRANCH),
]
Summary = Annotated[str | None, Field(max_length=repos.MAX_SUMMARY)]


class ListTaskRepos(Args):
    project_id: str | None = Field(default=None, max_length=200)
    task_id: str | None = Field(
        default=None,
        max_length=200,
        description="Adds the task's links and reports.",
    )
    workspace_id: WorkspaceId = None


class ProposeRepoChange(TaskWrite):
    repo_id: RepoId
    branch: Branch
    target_branch: str | None = Field(default=None, max_length=repos.MAX_BRANCH)
    title: str | None = Field(default=None, max_length=repos.MAX_LINK_TITLE)
    summary: Summary = None
    pr_url: str | None = Field(
        default=None,
        max_length=repos.MAX_URL,
    )


class ReportRepoStatus(TaskWrite):
    repo_id: RepoId | None = None
    branch: Branch | None = None
    commit: str | None = Field(
        default=None,
        pattern=r"^[0-9a-fA-F]{7,64}$",
    )
    tests: Literal["passed", "failed", "running", "none"] | None = Field(
        default=None, description="none: no tests to run."
    )
    summary: Summary = None


def _fit(body: dict[str, Any], sections: tuple[str, ...]) -> str | None:
    """Cut the listed sections to the response budget, in order; say what was left out."""
    budget = (
        RESPONSE_BUDGET
        - 2048
        - len(compact({k: v for k, v in body.items() if k not in sections}).encode())
    )
    cut = []
    for name in sections:
        rows = body[name]
        kept = fit_rows(rows, max(budget, 0)) if rows else rows
        if len(compact(kept).encode()) > max(budget, 0):
            kept = []  # not even one row fits: fit_rows keeps one for paging; a section need not
        budget -= len(compact(kept).encode())
        if len(kept) < len(rows):
            cut.append(f"{len(kept)} of {len(rows)} {name}")
            body[name] = kept
    return f"Cut to fit the answer: {', '.join(cut)}." if cut else None


def list_task_repos(call: Call, args: ListTaskRepos) -> Reply:
    workspace = args.workspace_ref()
    listing = repos.list_task_repos(
        call.db, call.actor, project=args.project_id, task=args.task_id, workspace_id=workspace
    )
    body = repo_listing_view(listing)
    note = _fit(body, tuple(k for k in ("links", "reports", "repos") if k in body))
    return Reply(body, note)


def propose_repo_change(call: Call, args: ProposeRepoChange) -> Reply:
    return write_on_task(
        repos.propose_repo_change, call, args, repo_id=args.repo_id, branch=args.branch,
        target_branch=args.target_branch, title=args.title, summary=args.summary,
        pr_url=args.pr_url, answer=link_answer,
    )  # fmt: skip


def report_repo_status(call: Call, args: ReportRepoStatus) -> Reply:
    return write_on_task(
        repos.report_repo_status, call, args, repo_id=args.repo_id, branch=args.branch,
        commit=args.commit, tests=args.tests, summary=args.summary, answer=report_answer,
    )  # fmt: skip


REPOS = Area(Toolset.REPOS)

OPERATIONS = (
    REPOS.read(
        "list_task_repos",
        "List repositories and task branches",
        "The project's repositories (by projectId or taskId); with taskId also its branch links"
        " and newest status reports.",
        ListTaskRepos,
        list_task_repos,
        Rest("GET", "/api/v1/projects/{project}/repos"),
        Cli(("task", "branches")),
    ),
    REPOS.write(
        "propose_repo_change",
        "Link a branch to a task",
        "Link a task to your branch right after pushing it, with prUrl once a pull request "
        "exists. The same task, repository and branch again updates the link.",
        ProposeRepoChange,
        propose_repo_change,
        Rest.created("/api/v1/tasks/{task}/repos/{repo}/changes"),
        Cli(("task", "link-branch")),
    ),
    REPOS.write(
        "report_repo_status",
        "Report how the code stands",
        "Report a branch, commit, test result or summary on a task. It never links a branch: "
        "propose_repo_change does.",
        ReportRepoStatus,
        report_repo_status,
        Rest.created("/api/v1/tasks/{task}/repos/{repo}/status"),
        Cli(("task", "report-status")),
    ),
)
