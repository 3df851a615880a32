"""Code repositories of a project, the branches and pull requests tasks are linked to, and
the status agents report from them. Pure values, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


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
