"""What is said and linked on a task, in words: the one place that turns the typed results of
`services/board/{notes,note_reads,questions,repos}` into the camelCase answers every door gives
(MCP, REST, the CLI's JSON and the web pages), and fits a page of notes to the answer budget.

A question, a task named in a note and a repository are worded in
`services/board/note_views.py`, because services write them too (refusal details, the review
inbox, an event); they are re-exported here so the doors need only this module.
"""

from __future__ import annotations

from typing import Any

from crewboard.contract.reply import window_view
from crewboard.domain.board.notes import (
    CommentPage,
    N,
    NotesPage,
    NotesSection,
    OpenQuestions,
    OutputPage,
    OutputRead,
    OutputWindow,
    QuestionAnswered,
    TaskComment,
    TaskOutput,
    TaskQuestion,
    ThreadNote,
    ThreadPage,
)
from crewboard.domain.board.repos import (
    LinkMade,
    Repo,
    RepoLink,
    RepoListing,
    RepoReport,
    RepoSections,
)
from crewboard.domain.identity.naming import name_of
from crewboard.services.board.note_reads import cursor_after
from crewboard.services.board.note_views import (
    OUTPUT,
    QUESTION,
    noted_task_view,
    question_view,
    repo_view,
)
from crewboard.services.paging import fit_rows, json_size, next_offset
from crewboard.services.views import iso

__all__ = [  # the words the doors use, this module's own and those it re-exports
    "MAX_ROW_BYTES",
    "SECTION_BYTES",
    "agent_update_answer",
    "comment_answer",
    "comment_page_view",
    "comment_view",
    "fitted_row",
    "link_answer",
    "link_view",
    "link_views",
    "note_row",
    "noted_task_view",
    "notes_section_view",
    "open_questions_view",
    "output_answer",
    "output_page_view",
    "output_preview_view",
    "output_read_view",
    "output_view",
    "output_window_view",
    "question_answer",
    "question_answered_view",
    "question_view",
    "repo_listing_view",
    "repo_view",
    "report_answer",
    "report_view",
    "repos_section_view",
    "thread_answer",
    "thread_page_view",
]


# get_task's notes section: the text cuts tried until it fits its budget.
SECTION_CUTS = (1000, 300, 100, 40)
SECTION_BYTES = 8 * 1024


# --- rows and sections ------------------------------------------------------------------------


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


def _text(text: str, cut: int | None) -> tuple[str, bool]:
    """The text, or its first `cut` characters and True when it is longer."""
    if cut is None or len(text) <= cut:
        return text, False
    return text[:cut], True


def _by(stamp: dict[str, Any] | None, lean: bool) -> dict[str, Any] | str | None:
    """Who wrote it: the actor stamp, or in `lean` rows its name by the one naming rule."""
    if stamp is None or not lean:
        return stamp
    return name_of(stamp)


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


# One row never outgrows this, so any row fits an MCP answer (48 KiB) with room to spare.
MAX_ROW_BYTES = 40 * 1024


# --- what keyed writes answer (kept in the idempotency ledger) ---------------------------------


def _without(view: dict[str, Any], text: str) -> dict[str, Any]:
    """An acknowledgement's form of a view: the caller sent the text, it need not come back."""
    return {**{k: v for k, v in view.items() if k != text}, "length": len(view[text])}


def comment_answer(comment: TaskComment) -> dict[str, Any]:
    """post_comment's answer; the caller sent the content, so it does not come back."""
    return {"comment": _without(comment_view(comment), "content")}


def agent_update_answer(update: TaskComment) -> dict[str, Any]:
    return {"agentUpdate": _without(comment_view(update), "content")}


def output_answer(output: TaskOutput) -> dict[str, Any]:
    return {"output": output_view(output)}


def question_answer(question: TaskQuestion) -> dict[str, Any]:
    return {"question": _without(question_view(question), "question")}


def link_answer(made: LinkMade) -> dict[str, Any]:
    return {"link": link_view(made.link, made.repo), "created": made.created}


def report_answer(report: RepoReport) -> dict[str, Any]:
    return {"report": report_view(report)}


# --- comments and outputs ----------------------------------------------------------------------


def _task_page(page: NotesPage[N], name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "task": noted_task_view(page.task),
        name: rows,
        "total": page.total,
        "nextOffset": next_offset(page.offset, len(page.rows), page.total),
    }


def comment_page_view(page: CommentPage) -> dict[str, Any]:
    return _task_page(page, "comments", [comment_view(c) for c in page.rows])


def output_page_view(page: OutputPage) -> dict[str, Any]:
    return _task_page(page, "outputs", [output_preview_view(o) for o in page.rows])


def output_read_view(read: OutputRead) -> dict[str, Any]:
    """The output in full, content last."""
    return {
        "task": noted_task_view(read.task),
        "output": {**output_view(read.output), "content": read.output.content},
    }


def output_window_view(read: OutputWindow) -> dict[str, Any]:
    """A window of an output's lines, with the output it comes from."""
    return {"output": output_view(read.output), **window_view(read.window)}


# --- questions ---------------------------------------------------------------------------------


def open_questions_view(page: OpenQuestions) -> dict[str, Any]:
    return {
        "projectId": page.project_id,
        "questions": [
            {**question_view(row.question), "task": noted_task_view(row.task)} for row in page.rows
        ],
        "total": page.total,
        "nextOffset": next_offset(page.offset, len(page.rows), page.total),
    }


def question_answered_view(done: QuestionAnswered) -> dict[str, Any]:
    return {"question": question_view(done.question), "changed": done.changed}


# --- the thread (list_task_notes) --------------------------------------------------------------


def fitted_row(note: ThreadNote, max_bytes: int = MAX_ROW_BYTES) -> dict[str, Any]:
    """The note's row whole when it fits `max_bytes`, else with its texts cut until it does."""
    row = note_row(note)
    size = json_size(row)
    cut = max(len(text) for text in _texts(note))
    while size > max_bytes and cut > 0:
        cut = min(cut - 1, cut * max_bytes // size - 16)
        row = note_row(note, cut=max(cut, 0))
        size = json_size(row)
    return row


def _texts(note: ThreadNote) -> list[str]:
    if isinstance(note, TaskQuestion):
        return [note.question, note.answer or ""]
    return [note.content]


def thread_page_view(page: ThreadPage, room: int | None = None) -> dict[str, Any]:
    """The page whole, or (with `room`) its leading rows that fit in that many bytes."""
    rows = [fitted_row(n) for n in page.notes]
    return thread_answer(page, rows if room is None else fit_rows(rows, room))


def thread_answer(page: ThreadPage, shown: list[dict[str, Any]]) -> dict[str, Any]:
    """The answer showing `shown`, the rows of a leading part of the page; the cursor continues
    after the last one shown."""
    more = page.has_more or len(shown) < len(page.notes)
    return {
        "task": noted_task_view(page.task),
        "notes": shown,
        "nextCursor": cursor_after(page, len(shown)) if more else None,
        "hasMore": more,
    }


# --- repositories ------------------------------------------------------------------------------


def repo_listing_view(listing: RepoListing) -> dict[str, Any]:
    """A project's repositories; with a task, its links, newest reports and their total."""
    view: dict[str, Any] = {
        "projectId": listing.project_id,
        "projectKey": listing.project_key,
        "repos": [repo_view(r) for r in listing.repos],
    }
    if listing.task is not None and listing.sections is not None:
        view |= {
            "task": noted_task_view(listing.task),
            "links": link_views(listing.sections),
            "reports": [report_view(r) for r in listing.sections.reports],
            "reportsTotal": listing.sections.reports_total,
        }
    return view
