"""What people and agents write on a task: comments and agent updates, named outputs (every
version kept), and questions with their answers. Pure values, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


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
