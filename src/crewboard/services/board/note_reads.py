"""Reading back what is said on a task: the whole thread page by page (list_task_notes) and
the bounded notes section of get_task.

A thread is the task's comments, agent updates, output saves and questions (with their
answers) in one order: newest first by (time written, id). Pages continue by keyset on that
pair, so a page costs the same on a long thread as on a short one. A cursor is bound to the
task, the kind filter and the caller it was issued to.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from crewboard.domain.board.notes import TaskOutput, TaskQuestion
from crewboard.domain.board.tasks import Task
from crewboard.domain.identity.records import Actor
from crewboard.errors import ValidationFailed
from crewboard.services.board.notes import AGENT_UPDATE, COMMENT, notes_of, task_ref_view
from crewboard.services.board.task_lookup import access_task
from crewboard.services.cursors import seal, unseal
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.paging import check_limit
from crewboard.services.views import iso
from crewboard.storage.board.notes import ThreadNote, thread_position
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

OUTPUT = "output"
QUESTION = "question"
THREAD_KINDS = (COMMENT, AGENT_UPDATE, OUTPUT, QUESTION)
MAX_NOTES_PAGE = 100
MAX_CURSOR = 200
# One row never outgrows this, so any row fits an MCP answer (48 KiB) with room to spare.
MAX_ROW_BYTES = 40 * 1024
# get_task's notes section: rows per part, and the text cuts tried until it fits its budget.
SECTION_QUESTIONS = 10
SECTION_ROWS = 5
SECTION_CUTS = (1000, 300, 100, 40)
SECTION_BYTES = 8 * 1024
_CURSOR_KIND = "notes.1"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Position = tuple[datetime, str]


# --- rows -------------------------------------------------------------------------------------


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


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


def fitted_row(note: ThreadNote, max_bytes: int = MAX_ROW_BYTES) -> dict[str, Any]:
    """The note's row whole when it fits `max_bytes`, else with its texts cut until it does."""
    row = note_row(note)
    size = _size(row)
    cut = max(len(text) for text in _texts(note))
    while size > max_bytes and cut > 0:
        cut = min(cut - 1, cut * max_bytes // size - 16)
        row = note_row(note, cut=max(cut, 0))
        size = _size(row)
    return row


def _texts(note: ThreadNote) -> list[str]:
    if isinstance(note, TaskQuestion):
        return [note.question, note.answer or ""]
    return [note.content]


# --- list_task_notes --------------------------------------------------------------------------


@dataclass(frozen=True)
class NotePage:
    """One page of a task's thread; a door may show a leading part of `rows` to stay in its
    budget, and the cursor then continues after the last row it shows."""

    task: dict[str, Any]
    rows: list[dict[str, Any]]
    positions: list[Position]
    has_more: bool
    caller: str
    binding: dict[str, Any]

    def cursor_after(self, position: Position) -> str:
        """The cursor that continues after `position`, bound to this task, filter and caller."""
        moment, note_id = position
        micros = (moment - _EPOCH) // timedelta(microseconds=1)
        return seal(_CURSOR_KIND, (micros, note_id), caller=self.caller, binding=self.binding)

    def answer(self, shown: list[dict[str, Any]]) -> dict[str, Any]:
        """The wire answer when the door shows `shown`, a leading part of `rows`."""
        more = self.has_more or len(shown) < len(self.rows)
        return {
            "task": self.task,
            "notes": shown,
            "nextCursor": self.cursor_after(self.positions[len(shown) - 1]) if more else None,
            "hasMore": more,
        }


def list_task_notes(
    db: Database,
    actor: Actor,
    *,
    task: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    kinds: Sequence[str] | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> NotePage:
    """A page of the task's comments, agent updates, output saves (previewed) and questions
    with their answers, newest first; `kinds` narrows it.

    Raises:
        ValidationFailed: an unknown kind, a limit outside 1-100, or a cursor that is not one,
            or was issued for another task, kind filter or caller.
        NotFound: the task is not open to the actor.
    """
    chosen = _check_kinds(kinds)
    check_limit(limit, MAX_NOTES_PAGE)
    if cursor is not None and len(cursor) > MAX_CURSOR:
        raise ValidationFailed.field("cursor", f"at most {MAX_CURSOR} characters; start again.")

    def work(uow: UnitOfWork) -> NotePage:
        found, project = access_task(uow, actor, task, workspace_id=workspace_id)
        binding = {"task": found.id, "kinds": list(chosen)}
        before = _resume(actor, cursor, binding) if cursor is not None else None
        notes = notes_of(uow).thread(found.id, kinds=chosen, before=before, limit=limit + 1)
        page = notes[:limit]
        return NotePage(
            task=task_ref_view(found, project),
            rows=[fitted_row(n) for n in page],
            positions=[thread_position(n) for n in page],
            has_more=len(notes) > limit,
            caller=actor.principal,
            binding=binding,
        )

    return db.read(work)


def _check_kinds(kinds: Sequence[str] | None) -> tuple[str, ...]:
    """Raises: ValidationFailed naming `kind` and the accepted values."""
    if not kinds:
        return THREAD_KINDS
    for kind in kinds:
        if kind not in THREAD_KINDS:
            raise ValidationFailed.field(
                "kind", f"{kind!r} is not a kind of note.", [*THREAD_KINDS]
            )
    return tuple(k for k in THREAD_KINDS if k in kinds)


def _resume(actor: Actor, cursor: str, binding: dict[str, Any]) -> Position:
    """The (time, id) a cursor continues after.

    Raises:
        ValidationFailed: naming `cursor` when list_task_notes did not issue it for this task,
            kind filter and caller.
    """
    position = unseal(
        _CURSOR_KIND, cursor, caller=actor.principal, binding=binding, tool="list_task_notes"
    )
    match position:
        case [int(micros), str(note_id)] if note_id:
            try:
                return _EPOCH + timedelta(microseconds=micros), note_id
            except OverflowError:
                pass
    raise ValidationFailed.field(
        "cursor", "is not a cursor from list_task_notes; start again without one."
    )


# --- get_task's notes section -----------------------------------------------------------------


def task_notes_section(uow: UnitOfWork, task: Task) -> dict[str, Any]:
    """What people and agents said on the task, bounded for get_task: its questions (newest
    first, at most 10, with answers), the newest 5 comments, 5 agent updates and 5 outputs
    (the newest version of each), each part with its total. Long texts are cut (first to
    1,000 characters, shorter while the section is over 8 KiB) and say their length."""
    notes = notes_of(uow)
    counts = notes.note_counts(task.id)

    def newest(kind: str, limit: int) -> list[ThreadNote]:
        if not counts[kind]:
            return []
        return notes.thread(task.id, kinds=(kind,), before=None, limit=limit)

    parts: dict[str, tuple[list[ThreadNote], dict[str, int]]] = {
        "questions": (
            newest(QUESTION, SECTION_QUESTIONS),
            {"total": counts[QUESTION], "open": counts["openQuestion"]},
        ),
        "comments": (newest(COMMENT, SECTION_ROWS), {"total": counts[COMMENT]}),
        "agentUpdates": (newest(AGENT_UPDATE, SECTION_ROWS), {"total": counts[AGENT_UPDATE]}),
    }
    outputs: list[ThreadNote] = []
    if counts[OUTPUT]:
        outputs += notes.latest_outputs(task.id, limit=SECTION_ROWS, offset=0, newest_first=True)[0]
    parts["outputs"] = (outputs, {"total": counts[OUTPUT]})
    return _fit_section(parts)


def _fit_section(parts: dict[str, tuple[list[ThreadNote], dict[str, int]]]) -> dict[str, Any]:
    section: dict[str, Any] = {}
    for cut in SECTION_CUTS:
        section = {
            name: {"items": [note_row(n, cut=cut, lean=True) for n in rows], **totals}
            for name, (rows, totals) in parts.items()
        }
        if _size(section) <= SECTION_BYTES:
            break
    return section


def question_counts(uow: UnitOfWork, task: Task) -> tuple[int, int]:
    """How many of the task's questions are answered, and how many wait (agent_brief's line)."""
    counts = notes_of(uow).question_counts(task.id)
    return counts[QUESTION] - counts["openQuestion"], counts["openQuestion"]
