"""What the board's task reads return: a task with what its answer names, get_task's whole
read, a window of a task's text, a subagent's brief and everything said on a task. contract/board/present.py words them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from crewboard.domain.board.claims import HeldClaim
from crewboard.domain.board.context import ContextPack
from crewboard.domain.board.notes import (
    NotedTask,
    NotesSection,
    TaskComment,
    TaskOutput,
    TaskQuestion,
)
from crewboard.domain.board.repos import RepoSections
from crewboard.domain.board.tasks import Link, Task
from crewboard.domain.projects import Project, TeamRole


@dataclass(frozen=True)
class TaskSource:
    """Where a task from a tasks.md file stands: the file, its path and version, the line."""

    file_id: str
    path: str | None
    line: int | None
    content_version: str | None


@dataclass(frozen=True)
class TaskShown:
    """A task with its relationships and the numbers of the tasks they (and its parent) name."""

    task: Task
    project: Project
    links: tuple[Link, ...]
    numbers: Mapping[str, int]


@dataclass(frozen=True)
class ChecklistItem:
    text: str
    state: str  # open, in_progress or done


@dataclass(frozen=True)
class Readiness:
    """Whether a task can be finished, and what holds it back."""

    reasons: tuple[str, ...]
    open_blocker_ids: tuple[str, ...]
    open_subtasks: int
    open_checklist_items: int
    finished: bool


@dataclass(frozen=True)
class TaskRead:
    """get_task's whole read; `pack` is the context pack with its receipt
    (services/board/context.py), None when not asked for."""

    shown: TaskShown
    source: TaskSource | None
    event_count: int
    latest_event_at: datetime | None
    role: TeamRole | None
    checklist: tuple[ChecklistItem, ...]
    subtasks: tuple[Task, ...]
    subtasks_total: int
    readiness: Readiness
    notes: NotesSection
    pack: ContextPack | None = None
    claim: HeldClaim | None = None  # its live claim, if one holds it


@dataclass(frozen=True)
class TaskText:
    """A task's brief or description, to be read in windows from `offset`."""

    task: Task
    project: Project
    field: str
    offset: int
    limit: int
    claim: HeldClaim | None = None


@dataclass(frozen=True)
class AgentBrief:
    """get_task's plain text for a subagent's prompt."""

    text: str
    claim: HeldClaim | None = None


@dataclass(frozen=True)
class TaskActivity:
    """Everything said and linked on a task, each part newest first with its total."""

    task: NotedTask
    comments: tuple[TaskComment, ...]
    comments_total: int
    agent_updates: tuple[TaskComment, ...]
    agent_updates_total: int
    outputs: tuple[TaskOutput, ...]
    outputs_total: int
    questions: tuple[TaskQuestion, ...]
    questions_total: int
    repos: RepoSections
