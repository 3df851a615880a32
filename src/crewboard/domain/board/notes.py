"""What people and agents write on a task: comments and agent updates, named outputs (every
version kept), and questions with their answers. Pure values, no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from crewboard.domain.files import TextWindow


class NoteKind(StrEnum):
    """A note on a task: a person's (or agent's) comment, or an agent's progress update."""

    COMMENT = "comment"
    AGENT_UPDATE = "agent_update"


@dataclass(frozen=True)
class TaskComment:
    id: str
    project_id: str
    task_id: str
    kind: NoteKind
    content: str
    author: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class TaskOutput:
    """One saved version of a named deliverable; `content` is whole or a preview."""

    id: str
    project_id: str
    task_id: str
    name: str
    content: str
    length: int  # characters of the whole content
    author: dict[str, Any]
    created_at: datetime
    version: int
    versions: int


@dataclass(frozen=True)
class TaskQuestion:
    id: str
    project_id: str
    task_id: str
    question: str
    asked_by: dict[str, Any]
    asked_at: datetime
    answer: str | None = None
    answered_by: dict[str, Any] | None = None
    answered_at: datetime | None = None


@dataclass(frozen=True)
class CommentHit:
    id: str
    task_id: str
    task_number: int
    task_title: str
    kind: NoteKind
    content: str
    created_at: datetime


@dataclass(frozen=True)
class CommentHits:
    rows: list[CommentHit]
    total: int  # every comment and agent update of the project that holds the words


ThreadNote = TaskComment | TaskOutput | TaskQuestion
N = TypeVar("N", TaskComment, TaskOutput)


@dataclass(frozen=True)
class NotedTask:
    """Enough of a task to name it next to what was said on it."""

    id: str
    key: str
    title: str
    status: str
    project_id: str
    workspace_id: str | None


@dataclass(frozen=True)
class NotesPage(Generic[N]):
    """A page of a task's notes of one sort: comments or agent updates (list_comments), or the
    newest version of each output, previewed (list_outputs)."""

    task: NotedTask
    rows: list[N]
    total: int
    offset: int


CommentPage = NotesPage[TaskComment]
OutputPage = NotesPage[TaskOutput]


@dataclass(frozen=True)
class OutputRead:
    """One output version in full, with its task (get_output)."""

    task: NotedTask
    output: TaskOutput


@dataclass(frozen=True)
class OutputWindow:
    """A window of lines of one output version (read_output); `output.content` is left empty."""

    task: NotedTask
    output: TaskOutput
    window: TextWindow


@dataclass(frozen=True)
class OpenQuestion:
    question: TaskQuestion
    task: NotedTask


@dataclass(frozen=True)
class OpenQuestions:
    """A page of a project's unanswered questions, each with its task."""

    project_id: str
    rows: list[OpenQuestion]
    total: int
    offset: int


@dataclass(frozen=True)
class QuestionAnswered:
    """The question as it stands after an answer; `changed` is False for a repeated answer."""

    question: TaskQuestion
    changed: bool


@dataclass(frozen=True)
class NotesPart:
    """The newest notes of one kind on a task, and how many there are in all."""

    notes: Sequence[ThreadNote]
    total: int


@dataclass(frozen=True)
class NotesSection:
    """What get_task shows of a task's notes: questions (and how many wait), comments, agent
    updates and outputs, each the newest few."""

    questions: NotesPart
    open_questions: int
    comments: NotesPart
    agent_updates: NotesPart
    outputs: NotesPart


@dataclass(frozen=True)
class ThreadPage:
    """One page of a task's thread (list_task_notes), newest first. A door may show a leading
    part of `notes`; its cursor then continues after the last one shown."""

    task: NotedTask
    notes: list[ThreadNote]
    has_more: bool  # notes past the page follow
    caller: str  # the principal the cursor is bound to
    binding: dict[str, Any]  # the task and kind filter the cursor is bound to
