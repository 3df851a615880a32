"""Reading back what is said on a task: the whole thread page by page (list_task_notes), one
output in windows of lines (read_output) and the bounded notes section of get_task.

A thread is the task's comments, agent updates, output saves and questions (with their
answers) in one order: newest first by (time written, id). Pages continue by keyset on that
pair, so a page costs the same on a long thread as on a short one. A cursor is bound to the
task, the kind filter and the caller it was issued to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from crewboard.domain.board.notes import (
    NotedTask,
    NotesPart,
    NotesSection,
    OutputWindow,
    TaskOutput,
    ThreadPage,
)
from crewboard.domain.board.tasks import Task
from crewboard.domain.files import (
    MAX_WINDOW_BYTES,
    MAX_WINDOW_LINES,
    TextWindow,
    check_window,
    index_lines,
)
from crewboard.domain.identity.records import Actor
from crewboard.errors import NotFound, ValidationFailed
from crewboard.services.board.note_views import OUTPUT, QUESTION
from crewboard.services.board.notes import AGENT_UPDATE, COMMENT, noted_task, notes_of
from crewboard.services.board.task_lookup import access_task
from crewboard.services.board.views import task_key
from crewboard.services.cursors import seal, unseal
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef
from crewboard.services.paging import check_limit
from crewboard.services.windows import text_window
from crewboard.storage.board.notes import thread_position
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

THREAD_KINDS = (COMMENT, AGENT_UPDATE, OUTPUT, QUESTION)
MAX_NOTES_PAGE = 100
MAX_CURSOR = 200
# get_task's notes section: rows per part (note_views cuts their texts to its budget).
SECTION_QUESTIONS = 10
SECTION_ROWS = 5
_CURSOR_KIND = "notes.1"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Position = tuple[datetime, str]


# --- list_task_notes --------------------------------------------------------------------------


def cursor_after(page: ThreadPage, shown: int) -> str:
    """The cursor that continues after the first `shown` notes of the page, bound to its task,
    kind filter and caller."""
    moment, note_id = thread_position(page.notes[shown - 1])
    micros = (moment - _EPOCH) // timedelta(microseconds=1)
    return seal(_CURSOR_KIND, (micros, note_id), caller=page.caller, binding=page.binding)


def list_task_notes(
    db: Database,
    actor: Actor,
    *,
    task: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    kinds: Sequence[str] | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> ThreadPage:
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

    def work(uow: UnitOfWork) -> ThreadPage:
        found, project = access_task(uow, actor, task, workspace_id=workspace_id)
        binding = {"task": found.id, "kinds": list(chosen)}
        before = _resume(actor, cursor, binding) if cursor is not None else None
        notes = notes_of(uow).thread(found.id, kinds=chosen, before=before, limit=limit + 1)
        return ThreadPage(
            task=noted_task(found, project),
            notes=notes[:limit],
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


# --- read_output ---------------------------------------------------------------------------


def read_output(
    db: Database,
    actor: Actor,
    *,
    task: str,
    output_id: str,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
    offset: int = 1,
    limit: int = MAX_WINDOW_LINES,
    room: int = MAX_WINDOW_BYTES,
) -> OutputWindow:
    """A window of one output version's lines: from line `offset` (1 = the first), at most
    `limit` lines and `room` bytes of text; the windows joined in order give back the content
    exactly.

    Raises:
        ValidationFailed: bad offset or limit, or an offset past the last line.
        NotFound: the task, or no output of that id on it.
    """
    check_window(offset, limit)

    def work(uow: UnitOfWork) -> tuple[NotedTask, TaskOutput]:
        found, project = access_task(uow, actor, task, workspace_id=workspace_id)
        output = notes_of(uow).output_by_id(found.id, output_id)
        if output is None:
            raise NotFound(
                f"Task {task_key(project, found)} has no output {output_id!r}; "
                "list_task_notes with kind output shows their ids.",
                {"resource": "output", "ref": output_id},
            )
        return noted_task(found, project), output

    noted, output = db.read(work)
    # Cut after the transaction: an output is at most 1 MiB, held whole already.
    data = output.content.encode("utf-8")
    lines = index_lines(data)
    window = text_window(
        data, lines, output.name, offset=offset, limit=limit, room=min(room, MAX_WINDOW_BYTES)
    )
    shown = TextWindow(
        offset=offset, lines=window.lines, total_lines=lines.total_lines, text=window.text,
        truncated=window.truncated, next_offset=window.next_offset,
    )  # fmt: skip
    return OutputWindow(noted, replace(output, content=""), shown)


# --- get_task's notes section -----------------------------------------------------------------


def task_notes_section(uow: UnitOfWork, task: Task) -> NotesSection:
    """What people and agents said on the task, bounded for get_task: its questions (newest
    first, at most 10, with answers), the newest 5 comments, 5 agent updates and 5 outputs
    (the newest version of each), each part with its total."""
    notes = notes_of(uow)
    counts = notes.note_counts(task.id)

    def newest(kind: str, limit: int) -> NotesPart:
        found = (
            notes.thread(task.id, kinds=(kind,), before=None, limit=limit) if counts[kind] else []
        )
        return NotesPart(found, counts[kind])

    outputs: list[TaskOutput] = []
    if counts[OUTPUT]:
        outputs = notes.latest_outputs(task.id, limit=SECTION_ROWS, offset=0, newest_first=True)[0]
    return NotesSection(
        questions=newest(QUESTION, SECTION_QUESTIONS),
        open_questions=counts["openQuestion"],
        comments=newest(COMMENT, SECTION_ROWS),
        agent_updates=newest(AGENT_UPDATE, SECTION_ROWS),
        outputs=NotesPart(outputs, counts[OUTPUT]),
    )


def question_counts(uow: UnitOfWork, task: Task) -> tuple[int, int]:
    """How many of the task's questions are answered, and how many wait (agent_brief's line)."""
    counts = notes_of(uow).question_counts(task.id)
    return counts[QUESTION] - counts["openQuestion"], counts["openQuestion"]
