"""What is said and linked on a task, in words: the one place that turns the typed results of
`services/board/{notes,note_reads,questions,repos}` into the camelCase answers every door gives
(MCP, REST, the CLI's JSON and the web pages), and fits a page of notes to the answer budget.

The row and section words still live in `services/board/note_views.py`, because get_task,
task_activity and the review inbox (services) word them too; they are re-exported here so the
doors need only this module.
"""

from __future__ import annotations

from typing import Any

from crewboard.domain.board.notes import (
    CommentPage,
    N,
    NotesPage,
    OpenQuestions,
    OutputPage,
    OutputRead,
    QuestionAnswered,
    TaskComment,
    TaskOutput,
    TaskQuestion,
    ThreadNote,
    ThreadPage,
)
from crewboard.domain.board.repos import LinkMade, RepoListing, RepoReport
from crewboard.services.board.note_reads import cursor_after

# merge: once note_views moves here, these imports become the definitions.
from crewboard.services.board.note_views import (
    comment_view,
    link_view,
    link_views,
    note_row,
    noted_task_view,
    notes_section_view,
    output_preview_view,
    output_view,
    question_view,
    repo_view,
    report_view,
    repos_section_view,
)
from crewboard.services.paging import fit_rows, json_size, next_offset

__all__ = [  # the words the doors use, this module's own and those it re-exports
    "MAX_ROW_BYTES",
    "agent_update_answer",
    "comment_answer",
    "comment_page_view",
    "fitted_row",
    "link_answer",
    "notes_section_view",
    "open_questions_view",
    "output_answer",
    "output_page_view",
    "output_read_view",
    "question_answer",
    "question_answered_view",
    "repo_listing_view",
    "repo_view",
    "report_answer",
    "repos_section_view",
    "thread_answer",
    "thread_page_view",
]

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
