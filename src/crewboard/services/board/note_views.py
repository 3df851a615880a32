"""The camelCase words for what is said and linked on a task, where the services floor still
needs them: get_task's notes section and task_activity (services/board), the review inbox's
question rows (services/review/inbox.py), the details of an already-answered question, and the
`repo.added` event. The doors reach them through `contract/board/present_notes.py`.

merge: the lead moves these into contract/board/present_notes.py once get_task, task_activity
and the review inbox read the typed records (domain/board/notes.py, domain/board/repos.py);
`repo_view` stays here for the event, or the event gets its own payload.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.board.notes import (
    NotedTask,
    NotesSection,
    TaskComment,
    TaskOutput,
    TaskQuestion,
    ThreadNote,
)
from crewboard.domain.board.repos import Repo, RepoLink, RepoReport, RepoSections
from crewboard.services.paging import json_size
from crewboard.services.views import iso

OUTPUT = "output"
QUESTION = "question"
# get_task's notes section: the text cuts tried until it fits its budget.
SECTION_CUTS = (1000, 300, 100, 40)
SECTION_BYTES = 8 * 1024


# --- notes -------------------------------------------------------------------------------------


def comment_view(comment: TaskComment) -> dict[str, Any]:
    return {
        "id": comment.id,
        "taskId": comment.task_id,
        "projectId": comment.project_id,
        "kind": comment.kind,
        "content": comment.content,
        "author": comment.author,
        "createdAt": iso(comment.created_at),
    }


def output_view(output: TaskOutput) -> dict[str, Any]:
    """An output version without its content."""
    return {
        "id": output.id,
        "taskId": output.task_id,
        "projectId": output.project_id,
        "name": output.name,
        "version": output.version,
        "versions": output.versions,
        "length": output.length,
        "author": output.author,
        "createdAt": iso(output.created_at),
    }


def output_preview_view(output: TaskOutput) -> dict[str, Any]:
    """An output as lists show it: the first 500 characters and whether more follow."""
    return {
        **output_view(output),
        "preview": output.content,
        "contentTruncated": output.length > len(output.content),
    }


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


# --- thread rows -------------------------------------------------------------------------------


def _text(text: str, cut: int | None) -> tuple[str, bool]:
    """The text, or its first `cut` characters and True when it is longer."""
    if cut is None or len(text) <= cut:
        return text, False
    return text[:cut], True


def _by(stamp: dict[str, Any] | None, lean: bool) -> dict[str, Any] | str | None:
    """Who wrote it: the actor stamp, or in `lean` rows its name and kind in a few words."""
    if stamp is None or not lean:
        return stamp
    kind = str(stamp.get("kind", "")).replace("_", " ")
    return f"{stamp.get('displayName') or stamp.get('userId')} ({kind})"


def _head(kind: str, note_id: str, lean: bool) -> dict[str, Any]:
    """What starts a row: its kind and id, which `lean` rows leave to their section."""
    return {} if lean else {"kind": kind, "id": note_id}


def note_row(note: ThreadNote, *, cut: int | None = None, lean: bool = False) -> dict[str, Any]:
    """A note as a thread row; texts longer than `cut` characters are cut and say so.

    `lean` rows (get_task's section) leave out the kind, which their section names, and the
    id, and give authors as name and kind in a few words.
    """
    if isinstance(note, TaskQuestion):
        return _question_row(note, cut, lean)
    kind = OUTPUT if isinstance(note, TaskOutput) else note.kind
    row = _head(kind, note.id, lean)
    row |= {"author": _by(note.author, lean), "createdAt": iso(note.created_at)}
    if isinstance(note, TaskOutput):
        preview, _ = _text(note.content, cut)
        return row | {
            "name": note.name,
            "version": note.version,
            "preview": preview,
            "contentTruncated": note.length > len(preview),
            "length": note.length,
        }
    content, cut_short = _text(note.content, cut)
    row["content"] = content
    if cut_short:
        row |= {"contentTruncated": True, "length": len(note.content)}
    return row


def _question_row(note: TaskQuestion, cut: int | None, lean: bool) -> dict[str, Any]:
    row = _head(QUESTION, note.id, lean)
    question, question_cut = _text(note.question, cut)
    answer, answer_cut = _text(note.answer or "", cut)
    row |= {
        "author": _by(note.asked_by, lean),
        "createdAt": iso(note.asked_at),
        "question": question,
        "status": "open" if note.answered_at is None else "answered",
        "answer": answer if note.answer is not None else None,
        "answeredBy": _by(note.answered_by, lean),
        "answeredAt": iso(note.answered_at),
    }
    if question_cut or answer_cut:
        row["contentTruncated"] = True
        row["questionLength"] = len(note.question)
        if note.answer is not None:
            row["answerLength"] = len(note.answer)
    return row


def notes_section_view(section: NotesSection) -> dict[str, Any]:
    """get_task's `notes`: each part's rows and totals, the texts cut (first to 1,000
    characters, shorter while the section is over 8 KiB) and saying their length."""
    parts = {
        "questions": (section.questions, {"open": section.open_questions}),
        "comments": (section.comments, {}),
        "agentUpdates": (section.agent_updates, {}),
        "outputs": (section.outputs, {}),
    }
    view: dict[str, Any] = {}
    for cut in SECTION_CUTS:
        view = {
            name: {
                "items": [note_row(n, cut=cut, lean=True) for n in part.notes],
                "total": part.total,
                **more,
            }
            for name, (part, more) in parts.items()
        }
        if json_size(view) <= SECTION_BYTES:
            break
    return view


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


def link_view(link: RepoLink, repo: Repo | None = None) -> dict[str, Any]:
    return {
        "id": link.id,
        "taskId": link.task_id,
        "repoId": link.repo_id,
        "repoName": repo.name if repo else None,
        "agent": link.agent,
        "branch": link.branch,
        "targetBranch": link.target_branch,
        "title": link.title,
        "summary": link.summary,
        "prUrl": link.pr_url,
        "createdAt": iso(link.created_at),
        "updatedAt": iso(link.updated_at),
    }


def report_view(report: RepoReport) -> dict[str, Any]:
    return {
        "id": report.id,
        "taskId": report.task_id,
        "repoId": report.repo_id,
        "branch": report.branch,
        "commit": report.commit_sha,
        "tests": report.tests,
        "summary": report.summary,
        "reportedBy": report.reported_by,
        "createdAt": iso(report.created_at),
    }


def link_views(sections: RepoSections) -> list[dict[str, Any]]:
    return [link_view(link, sections.repos.get(link.repo_id)) for link in sections.links]


def repos_section_view(sections: RepoSections) -> dict[str, Any]:
    """get_task's and task_activity's `repoLinks` and `repoReports`."""
    return {
        "repoLinks": {"items": link_views(sections), "total": sections.links_total},
        "repoReports": {
            "items": [report_view(r) for r in sections.reports],
            "total": sections.reports_total,
        },
    }
