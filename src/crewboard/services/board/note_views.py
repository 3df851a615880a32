"""The few camelCase words for what is said and linked on a task that the services floor
itself writes: a question in the details of an already-answered refusal and in the review
inbox's rows (services/review/inbox.py), a task named in those rows, and a repository in the
`repo.added` event's payload. Everything else a door answers is worded in
`contract/board/present_notes.py`, which uses these too.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.board.notes import (
    NotedTask,
    TaskQuestion,
)
from crewboard.domain.board.repos import Repo
from crewboard.services.views import iso

OUTPUT = "output"
QUESTION = "question"


# --- notes -------------------------------------------------------------------------------------


def question_view(question: TaskQuestion) -> dict[str, Any]:
    return {
        "id": question.id,
        "taskId": question.task_id,
        "projectId": question.project_id,
        "question": question.question,
        "status": "open" if question.answered_at is None else "answered",
        "askedBy": question.asked_by,
        "askedAt": iso(question.asked_at),
        "answer": question.answer,
        "answeredBy": question.answered_by,
        "answeredAt": iso(question.answered_at),
    }


def noted_task_view(task: NotedTask) -> dict[str, Any]:
    return {
        "id": task.id,
        "key": task.key,
        "title": task.title,
        "status": task.status,
        "projectId": task.project_id,
        "workspaceId": task.workspace_id,
    }


# --- repositories ------------------------------------------------------------------------------


def repo_view(repo: Repo) -> dict[str, Any]:
    return {
        "id": repo.id,
        "projectId": repo.project_id,
        "name": repo.name,
        "url": repo.url,
        "defaultBranch": repo.default_branch,
        "createdAt": iso(repo.created_at),
    }
