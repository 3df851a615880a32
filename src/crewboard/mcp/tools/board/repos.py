"""Board tools for code: a project's repositories, task branches and status reports."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from crewboard.domain.identity.access import Toolset
from crewboard.mcp.args import Args
from crewboard.mcp.render import RESPONSE_BUDGET, Reply, compact, fit_rows
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.mcp.tools.board.notes import TaskWrite, keyed_board_write, keyed_reply
from crewboard.services.board import repos

RepoId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="The repository's id (rep_…) from list_task_repos.",
    ),
]
Branch = Annotated[
    str,
    Field(min_length=1, max_length=repos.MAX_BRANCH, description="A branch name, without spaces."),
]
Summary = Annotated[
    str | None, Field(max_length=repos.MAX_SUMMARY, description="At most 4000 characters.")
]


class ListTaskRepos(Args):
    project_id: str | None = Field(
        default=None, max_length=200, description="The project (id or key); or give taskId."
    )
    task_id: str | None = Field(
        default=None,
        max_length=200,
        description="A task (id or key, e.g. CRW-12): adds its branch links and status reports.",
    )
    workspace_id: str | None = Field(
        default=None, max_length=200, description="The project's workspace id, or null for private."
    )


class ProposeRepoChange(TaskWrite):
    repo_id: RepoId
    branch: Branch
    target_branch: str | None = Field(
        default=None, max_length=repos.MAX_BRANCH, description="Where the branch should merge."
    )
    title: str | None = Field(default=None, max_length=repos.MAX_LINK_TITLE)
    summary: Summary = None
    pr_url: str | None = Field(
        default=None,
        max_length=repos.MAX_URL,
        description="The pull request's https:// address, once there is one.",
    )


class ReportRepoStatus(TaskWrite):
    repo_id: RepoId | None = None
    branch: Branch | None = None
    commit: str | None = Field(
        default=None,
        pattern=r"^[0-9a-fA-F]{7,64}$",
        description="The commit hash the report is about (7 to 64 hexadecimal characters).",
    )
    tests: Literal["passed", "failed", "running", "none"] | None = Field(
        default=None, description="How the tests stand; none: there are no tests to run."
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
        budget -= len(compact(kept).encode())
        if len(kept) < len(rows):
            cut.append(f"{len(kept)} of {len(rows)} {name}")
            body[name] = kept
    return f"Cut to fit the answer: {', '.join(cut)}." if cut else None


def list_task_repos(call: Call, args: ListTaskRepos) -> Reply:
    workspace = args.workspace_ref()
    body = repos.list_task_repos(
        call.db, call.actor, project=args.project_id, task=args.task_id, workspace_id=workspace
    )
    note = _fit(body, tuple(k for k in ("links", "reports", "repos") if k in body))
    return Reply(body, note)


def propose_repo_change(call: Call, args: ProposeRepoChange) -> Reply:
    return keyed_reply(
        repos.propose_repo_change(
            call.db,
            call.actor,
            repo_id=args.repo_id,
            branch=args.branch,
            target_branch=args.target_branch,
            title=args.title,
            summary=args.summary,
            pr_url=args.pr_url,
            **args.target(),
        )
    )


def report_repo_status(call: Call, args: ReportRepoStatus) -> Reply:
    return keyed_reply(
        repos.report_repo_status(
            call.db,
            call.actor,
            repo_id=args.repo_id,
            branch=args.branch,
            commit=args.commit,
            tests=args.tests,
            summary=args.summary,
            **args.target(),
        )
    )


TOOLS = (
    ToolDef(
        name="list_task_repos",
        title="List repositories and task branches",
        description=(
            "Show a project's code repositories (id, name, https URL, default branch), by "
            "projectId or taskId. With taskId it also shows the task's branch links (repository, "
            "agent, branch, targetBranch, title, summary, prUrl, updatedAt) and its 20 newest "
            "status reports. Use it to find the repoId for propose_repo_change."
        ),
        args=ListTaskRepos,
        toolset=Toolset.BOARD,
        run=list_task_repos,
    ),
    keyed_board_write(
        "propose_repo_change",
        "Link a branch to a task",
        "Record that you work on a task in a branch of one of the project's repositories, right "
        "after pushing it; add prUrl (https) once a pull request exists. One link per task, "
        "repository, branch and you: calling again with the same branch updates that link, and "
        "fields you leave out keep their values. branch and targetBranch at most 200 "
        "characters, title 300, summary 4000. Keyed by idempotencyKey.",
        ProposeRepoChange,
        propose_repo_change,
    ),
    keyed_board_write(
        "report_repo_status",
        "Report how the code stands",
        "Leave a status report on a task: branch, commit (7 to 64 hex characters), tests "
        "(passed, failed, running or none) and a summary of at most 4000 characters; give at "
        "least one. repoId is optional. A report never links a branch to the task: use "
        "propose_repo_change for that. Keyed by idempotencyKey.",
        ReportRepoStatus,
        report_repo_status,
    ),
)
