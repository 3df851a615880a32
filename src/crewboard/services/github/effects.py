"""What a GitHub delivery does to the board: task links and their pull request state, status
reports, task moves on merge, and issues mirrored as tasks. Runs inside the delivery's
transaction, as GitHub acting for the admin who set it up."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from crewboard.domain.board.repos import Repo, RepoLink, RepoReport
from crewboard.domain.board.tasks import Task, TaskStatus
from crewboard.domain.github import (
    HANDLED,
    CheckChange,
    Delivery,
    GithubSettings,
    IssueChange,
    OnMerge,
    PullChange,
    PullState,
    PushChange,
    repo_address,
    report_tests,
    task_numbers,
)
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.projects import Project
from crewboard.services.board.notes import record_task_event
from crewboard.services.board.task_updates import do_update_task
from crewboard.services.board.tasks import do_create_task
from crewboard.services.views import actor_stamp
from crewboard.storage.board.notes import RepoLinkRepository
from crewboard.storage.github.repository import GithubRepository
from crewboard.storage.uow import UnitOfWork

AGENT = "github"  # the agent of the links GitHub makes
_LATER = (TaskStatus.REVIEW, TaskStatus.APPROVED, TaskStatus.DONE)
MAX_TITLE = 300
MAX_DESCRIPTION = 20_000


@dataclass(frozen=True)
class Effect:
    outcome: str | None = None
    ignored: str | None = None
    tasks: tuple[str, ...] = ()


def apply_delivery(
    uow: UnitOfWork, actor: Actor, project: Project, settings: GithubSettings, delivery: Delivery
) -> Effect:
    """Do what the delivery asks of the project's board."""
    if delivery.skipped is not None:
        return Effect(ignored=delivery.skipped)
    if not (delivery.pull or delivery.push or delivery.check or delivery.issue):
        return Effect(
            ignored=f"{delivery.event} deliveries are not followed; Crewboard handles {HANDLED}"
        )
    repo = _repo(uow, project, delivery)
    if repo is None:
        url = delivery.repo_url or f"https://github.com/{delivery.repo_name}"
        return Effect(
            ignored=f"repository {delivery.repo_name or url} is not one of {project.key}'s "
            f"repositories; add it with add_repo (url {url})"
        )
    return _Context(uow, actor, project, settings, repo).apply(delivery)


def _repo(uow: UnitOfWork, project: Project, delivery: Delivery) -> Repo | None:
    wanted = {repo_address(u) for u in (delivery.repo_url,) if u}
    if delivery.repo_name:
        wanted.add(repo_address(f"https://github.com/{delivery.repo_name}"))
    for repo in RepoLinkRepository(uow.conn).repos(project.id):
        if repo_address(repo.url) in wanted:
            return repo
    return None


class _Context:
    def __init__(
        self, uow: UnitOfWork, actor: Actor, project: Project, settings: GithubSettings, repo: Repo
    ) -> None:
        self.uow, self.actor, self.project, self.settings, self.repo = (
            uow,
            actor,
            project,
            settings,
            repo,
        )
        self.links = RepoLinkRepository(uow.conn)
        self.github = GithubRepository(uow.conn)

    def apply(self, delivery: Delivery) -> Effect:
        """The change by its kind (the delivery carries exactly one)."""
        if delivery.pull is not None:
            return self.pull(delivery.pull)
        if delivery.push is not None:
            return self.push(delivery.push)
        if delivery.check is not None:
            return self.check(delivery.check)
        assert delivery.issue is not None  # noqa: S101 - apply_delivery checked one is there
        return self.issue(delivery.issue)

    # --- finding tasks ---------------------------------------------------------------------

    def tasks_named(self, texts: list[str | None]) -> list[Task]:
        found = (
            self.uow.tasks.get_by_number(self.project.id, n)
            for n in task_numbers(self.project.key, texts)
        )
        return [task for task in found if task is not None]

    def linked(self, *, branch: str | None = None, pr_url: str | None = None) -> list[Task]:
        """Tasks with a link in this repository on `branch` or to `pr_url`."""
        ids = self.links.linked_tasks(self.repo.id, branch=branch, pr_url=pr_url)
        return list(self.uow.tasks.get_many(ids).values())

    def key(self, task: Task) -> str:
        return f"{self.project.key}-{task.number}"

    @staticmethod
    def _unique(tasks: list[Task]) -> list[Task]:
        return list({t.id: t for t in tasks}.values())

    # --- pull requests ---------------------------------------------------------------------

    def pull(self, pr: PullChange) -> Effect:
        if pr.action not in (
            "opened",
            "reopened",
            "edited",
            "ready_for_review",
            "synchronize",
            "closed",
            "converted_to_draft",
        ):
            return Effect(
                ignored=f"pull_request {pr.action} changes nothing on the board; opened, reopened, edited, ready_for_review, synchronize and closed do"
            )
        tasks = self._unique(
            self.tasks_named([pr.head, pr.title, pr.body])
            + self.linked(branch=pr.head, pr_url=pr.url)
        )
        if not tasks:
            return Effect(
                ignored=f"pull request #{pr.number} names no {self.project.key} task (put a key like {self.project.key}-12 in its branch, title or body)"
            )
        changed: list[str] = []
        for task in tasks:
            if self._pull_task(task, pr):
                changed.append(self.key(task))
        if not changed:
            return Effect(
                ignored=f"pull request #{pr.number} is stale or changes nothing: the tasks already show it"
            )
        return Effect(outcome=f"pull request #{pr.number} {pr.state}", tasks=tuple(changed))

    def _pull_task(self, task: Task, pr: PullChange) -> bool:
        link, state = self._link(task, pr.head, pr)
        if (
            state is not None
            and state.github_updated_at
            and pr.updated_at
            and pr.updated_at < state.github_updated_at
        ):
            return False  # an older delivery arriving late
        self._save_state(
            link,
            state,
            pr_number=pr.number,
            pr_state=pr.state,
            head_sha=pr.head_sha,
            at=pr.updated_at,
        )
        if pr.action == "synchronize":
            pushed = f"pushed {pr.commits} commits" if pr.commits else "pushed new commits"
            self._report(task, pr.head, pr.head_sha, None, f"{pushed} to pull request #{pr.number}")
        elif pr.state == "merged":
            self._report(
                task,
                pr.head,
                pr.head_sha,
                None,
                f"merged into {pr.base} by {pr.merged_by or 'someone'}",
            )
            self._move_merged(task)
        elif pr.state == "closed":
            self._report(
                task,
                pr.head,
                pr.head_sha,
                None,
                f"pull request #{pr.number} closed without merging",
            )
        return True

    def _link(
        self, task: Task, branch: str, pr: PullChange | None
    ) -> tuple[RepoLink, PullState | None]:
        current = self.links.link(task.id, self.repo.id, AGENT, branch)
        link = RepoLink(
            id=current.id if current else new_id("lnk"),
            project_id=self.project.id, task_id=task.id, repo_id=self.repo.id, agent=AGENT,
            branch=branch[:200],
            target_branch=(pr.base[:200] or None) if pr else (current.target_branch if current else None),
            title=(pr.title[:MAX_TITLE] or None) if pr else (current.title if current else None),
            summary=current.summary if current else None,
            pr_url=(pr.url or None) if pr else (current.pr_url if current else None),
            created_at=current.created_at if current else self.uow.now,
            updated_at=self.uow.now,
        )  # fmt: skip
        if current is None:
            self.links.add_link(link)
        elif (current.target_branch, current.title, current.pr_url) != (
            link.target_branch,
            link.title,
            link.pr_url,
        ):
            self.links.update_link(link)
        else:
            return current, self.github.pull(current.id)
        record_task_event(
            self.uow, self.actor, "task.repo_linked", task, self.project,
            payload={
                "link": {"id": link.id, "repoId": link.repo_id, "branch": link.branch, "prUrl": link.pr_url},
                "created": current is None,
            },
        )  # fmt: skip
        return link, self.github.pull(link.id)

    def _save_state(self, link: RepoLink, state: PullState | None, **changes: Any) -> None:
        at = changes.pop("at", None)
        base = state or PullState(link.id, self.project.id, None, None, None, {}, None)
        self.github.save_pull(
            replace(base, **changes, github_updated_at=at or base.github_updated_at)
        )

    def _report(
        self, task: Task, branch: str | None, sha: str | None, tests: str | None, summary: str
    ) -> None:
        report = RepoReport(
            id=new_id("rpt"), project_id=self.project.id, task_id=task.id, repo_id=self.repo.id,
            branch=branch[:200] if branch else None, commit_sha=sha.lower() if sha else None,
            tests=tests, summary=summary[:4000], reported_by=actor_stamp(self.actor),
            created_at=self.uow.now,
        )  # fmt: skip
        self.links.add_report(report)
        record_task_event(
            self.uow, self.actor, "task.repo_status_reported", task, self.project,
            payload={
                "reportId": report.id, "repoId": report.repo_id, "branch": report.branch,
                "commit": report.commit_sha, "tests": report.tests, "excerpt": summary[:200],
            },
        )  # fmt: skip

    def _move(self, task: Task, status: TaskStatus) -> None:
        current = self.uow.tasks.get(task.id) or task
        do_update_task(
            self.uow, self.actor, project=self.project.id, workspace_id=self.project.workspace_id,
            task_ref=current.id, expected_revision=current.revision, patch={"status": status},
        )  # fmt: skip

    def _move_merged(self, task: Task) -> None:
        target = {OnMerge.REVIEW: TaskStatus.REVIEW, OnMerge.DONE: TaskStatus.DONE}.get(
            self.settings.on_merge
        )
        current = self.uow.tasks.get(task.id) or task
        if target is None or current.status in (TaskStatus.DONE, TaskStatus.APPROVED, target):
            return  # never backwards from done or approved
        if target is TaskStatus.REVIEW and current.status in _LATER:
            return
        self._move(current, target)

    # --- pushes and checks -----------------------------------------------------------------

    def push(self, push: PushChange) -> Effect:
        tasks = self._unique(
            self.tasks_named([push.branch, *push.messages]) + self.linked(branch=push.branch)
        )
        if not tasks:
            return Effect(ignored=f"the push to {push.branch} names no {self.project.key} task")
        count = len(push.messages)
        summary = f"{count} commit{'s' if count != 1 else ''} pushed by {push.pusher or 'someone'}"
        for task in tasks:
            self._report(task, push.branch, push.head_sha, None, summary)
        return Effect(
            outcome=f"push to {push.branch}: {summary}", tasks=tuple(self.key(t) for t in tasks)
        )

    def check(self, check: CheckChange) -> Effect:
        tasks = self._unique(
            [t for b in check.branches for t in self.tasks_named([b]) + self.linked(branch=b)]
        )
        if not tasks:
            return Effect(
                ignored=f"check {check.name} ran on no branch naming a {self.project.key} task"
            )
        tests = report_tests(check.conclusion)
        changed = []
        for task in tasks:
            branch = next((b for b in check.branches), None)
            link, state = self._link(task, branch or "", None)
            if (
                state
                and state.github_updated_at
                and check.completed_at
                and check.completed_at < state.github_updated_at
            ):
                continue
            checks = {**(state.checks if state else {}), check.name: check.conclusion or "running"}
            self._save_state(link, state, checks=checks, at=check.completed_at)
            self._report(
                task,
                branch,
                check.head_sha,
                tests,
                f"check {check.name}: {check.conclusion or 'running'}",
            )
            changed.append(self.key(task))
        if not changed:
            return Effect(ignored=f"check {check.name} is stale: the tasks have newer results")
        return Effect(outcome=f"check {check.name}: {tests}", tasks=tuple(changed))

    # --- issues ----------------------------------------------------------------------------

    def issue(self, issue: IssueChange) -> Effect:
        if not self.settings.sync_issues:
            return Effect(
                ignored=f"{self.project.key} does not follow issues (configure_github syncIssues turns it on)"
            )
        task_id = self.github.issue_task(self.repo.id, issue.number)
        task = self.uow.tasks.get(task_id) if task_id else None
        if issue.action == "opened" and task is None:
            return self._issue_opened(issue)
        if task is None:
            return Effect(ignored=f"issue #{issue.number} has no task here")
        patch: dict[str, Any] = {}
        if issue.action == "edited":
            patch = {
                "title": issue.title[:MAX_TITLE] or task.title,
                "description": self._description(issue),
            }
        elif issue.action == "closed" and task.status is not TaskStatus.DONE:
            patch = {"status": TaskStatus.DONE}
        elif issue.action == "reopened" and task.status is TaskStatus.DONE:
            patch = {"status": TaskStatus.BACKLOG}
        if not patch:
            return Effect(ignored=f"issues {issue.action} changes nothing on {self.key(task)}")
        do_update_task(
            self.uow, self.actor, project=self.project.id, workspace_id=self.project.workspace_id,
            task_ref=task.id, expected_revision=task.revision, patch=patch,
        )  # fmt: skip
        return Effect(outcome=f"issue #{issue.number} {issue.action}", tasks=(self.key(task),))

    @staticmethod
    def _description(issue: IssueChange) -> str:
        tail = f"\n\nGitHub issue: {issue.url}"
        return issue.body[: MAX_DESCRIPTION - len(tail)] + tail

    def _issue_opened(self, issue: IssueChange) -> Effect:
        ack = do_create_task(
            self.uow, self.actor, project=self.project.id, workspace_id=self.project.workspace_id,
            fields={
                "title": issue.title[:MAX_TITLE] or f"Issue #{issue.number}",
                "description": self._description(issue), "tags": ("github",),
            },
        )  # fmt: skip
        task_id = str(ack.resource_id)
        self.github.add_issue(self.project.id, self.repo.id, issue.number, task_id)
        task = self.uow.tasks.get(task_id)
        key = self.key(task) if task else task_id
        return Effect(outcome=f"issue #{issue.number} opened as {key}", tasks=(key,))
