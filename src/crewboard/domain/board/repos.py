"""Code repositories of a project, the branches and pull requests tasks are linked to, and
the status agents report from them. Pure values, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from crewboard.domain.board.notes import NotedTask


@dataclass(frozen=True)
class Repo:
    id: str
    project_id: str
    name: str
    url: str
    default_branch: str
    created_at: datetime


@dataclass(frozen=True)
class RepoLink:
    id: str
    project_id: str
    task_id: str
    repo_id: str
    agent: str
    branch: str
    target_branch: str | None
    title: str | None
    summary: str | None
    pr_url: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class RepoReport:
    id: str
    project_id: str
    task_id: str
    repo_id: str | None
    branch: str | None
    commit_sha: str | None
    tests: str | None
    summary: str | None
    reported_by: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class RepoSections:
    """A task's newest repository links and status reports, each with its total; `repos`
    names the project's repositories by id."""

    links: list[RepoLink]
    links_total: int
    reports: list[RepoReport]
    reports_total: int
    repos: dict[str, Repo]


@dataclass(frozen=True)
class RepoListing:
    """A project's repositories; with a task, also that task's links and reports."""

    project_id: str
    project_key: str
    repos: list[Repo]
    task: NotedTask | None = None
    sections: RepoSections | None = None


@dataclass(frozen=True)
class LinkMade:
    """A branch link as proposed; `created` is False when an existing link was updated."""

    link: RepoLink
    repo: Repo
    created: bool
