"""Board tools for what is said on a task: comments, progress notes, outputs, questions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from crewboard.contract.args import Args, WorkspaceId
from crewboard.contract.board import present_notes
from crewboard.contract.board.tasks import TaskRef
from crewboard.contract.operation import Area, Call, Cli, NoDoor, Rest
from crewboard.contract.reply import RESPONSE_BUDGET, WINDOW_ROOM, Reply, window_note
from crewboard.domain.identity.access import Toolset
from crewboard.services.board import note_reads, questions
from crewboard.services.board import notes as task_notes
from crewboard.services.idempotency import KeyedResult

Key = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
    ),
]
NoteText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=task_notes.MAX_NOTE_CHARS,
    ),
]
OutputName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=task_notes.MAX_OUTPUT_NAME,
        description="e.g. audit.md",
    ),
]
OutputContent = Annotated[
    str,
    Field(
        min_length=1,
        max_length=task_notes.MAX_OUTPUT_BYTES,
    ),
]


class TaskWrite(Args):
    """What every keyed write on a task names: the task, its workspace and the key."""

    task_id: TaskRef
    workspace_id: WorkspaceId = None
    idempotency_key: Key

    def target(self) -> dict[str, Any]:
        """These three as the services take them."""
        return {
            "task": self.task_id,
            "workspace_id": self.workspace_ref(),
            "idempotency_key": self.idempotency_key,
        }


class PostComment(TaskWrite):
    content: NoteText


class AgentUpdate(TaskWrite):
    content: NoteText


class SaveOutput(TaskWrite):
    name: OutputName
    content: OutputContent


class AskQuestion(TaskWrite):
    question: NoteText


NoteKind = Literal["comment", "agent_update", "output", "question"]


class ListTaskNotes(Args):
    task_id: TaskRef
    workspace_id: WorkspaceId = None
    kind: NoteKind | Annotated[list[NoteKind], Field(min_length=1, max_length=4)] | None = None
    limit: int = Field(default=20, ge=1, le=note_reads.MAX_NOTES_PAGE)
    cursor: str | None = Field(
        default=None,
        min_length=1,
        max_length=note_reads.MAX_CURSOR,
    )


class ReadOutput(Args):
    task_id: TaskRef
    workspace_id: WorkspaceId = None
    output_id: str = Field(min_length=1, max_length=64)
    # No limit: a window is up to 2,000 lines or what fits the answer, and the entry stays
    # small in tools/list (an agent reads an output to its end, not a slice of it).
    offset: int = Field(default=1, ge=1, le=2**31 - 1)


def keyed_reply(result: KeyedResult) -> Reply:
    note = "This key was used before: this is the original answer." if result.replayed else None
    return Reply(result.body, note)


def write_on_task(
    write: Callable[..., KeyedResult], call: Call, args: TaskWrite, **fields: Any
) -> Reply:
    """Run a keyed write on a task: `write` gets the caller, the task, its workspace and the
    key, and `fields` (its own arguments and its answer's view)."""
    return keyed_reply(write(call.db, call.actor, **args.target(), **fields))


def post_comment(call: Call, args: PostComment) -> Reply:
    answer = present_notes.comment_answer
    return write_on_task(task_notes.post_comment, call, args, content=args.content, answer=answer)


def agent_update(call: Call, args: AgentUpdate) -> Reply:
    answer = present_notes.agent_update_answer
    return write_on_task(task_notes.agent_update, call, args, content=args.content, answer=answer)


def save_output(call: Call, args: SaveOutput) -> Reply:
    return write_on_task(
        task_notes.save_output, call, args, name=args.name, content=args.content,
        answer=present_notes.output_answer,
    )  # fmt: skip


def ask_question(call: Call, args: AskQuestion) -> Reply:
    answer = present_notes.question_answer
    return write_on_task(questions.ask_question, call, args, question=args.question, answer=answer)


def list_task_notes(call: Call, args: ListTaskNotes) -> Reply:
    kinds = [args.kind] if isinstance(args.kind, str) else args.kind
    page = note_reads.list_task_notes(
        call.db, call.actor, task=args.task_id, workspace_id=args.workspace_ref(), kinds=kinds,
        limit=args.limit, cursor=args.cursor,
    )  # fmt: skip
    # The rows' budget leaves room for the task and the cursor around them.
    body = present_notes.thread_page_view(page, RESPONSE_BUDGET - 4096)
    notes = []
    if body["hasMore"]:
        notes.append(
            "More notes follow: call again with cursor set to nextCursor, same taskId and kind."
        )
    if any(row.get("kind") == "output" and row["contentTruncated"] for row in body["notes"]):
        notes.append("read_output (taskId, outputId: the row's id) reads an output whole.")
    return Reply(body, " ".join(notes) or None)


def read_output(call: Call, args: ReadOutput) -> Reply:
    found = note_reads.read_output(
        call.db, call.actor, task=args.task_id, output_id=args.output_id,
        workspace_id=args.workspace_ref(), offset=args.offset, room=WINDOW_ROOM,
    )  # fmt: skip
    body = present_notes.output_window_view(found)
    return Reply(body, window_note(body))


BOARD = Area(Toolset.BOARD)

OPERATIONS = (
    BOARD.write(
        "post_comment",
        "Comment on a task",
        "Add a markdown comment to a task.",
        PostComment,
        post_comment,
        Rest.created("/api/v1/tasks/{task}/comments"),
        Cli(("task", "comment")),
    ),
    BOARD.write(
        "agent_update",
        "Post a progress note",
        "Post a progress note on a task, shown apart from comments; it changes nothing else.",
        AgentUpdate,
        agent_update,
        Rest.created("/api/v1/tasks/{task}/updates"),
        NoDoor("Agent protocol: an agent's progress note; people comment (task comment)."),
    ),
    BOARD.write(
        "save_output",
        "Save a deliverable",
        "Save a named deliverable on a task, kept exactly as sent; the same name again adds a "
        "version.",
        SaveOutput,
        save_output,
        Rest.created("/api/v1/tasks/{task}/outputs"),
        Cli(("task", "save-output")),
    ),
    BOARD.write(
        "ask_question",
        "Ask the people a question",
        "Ask the people what you cannot decide yourself about a task. Their answer shows in "
        "get_task notes, list_task_notes and list_activity mine.",
        AskQuestion,
        ask_question,
        Rest.created("/api/v1/tasks/{task}/questions"),
        NoDoor("Agent protocol: an agent asks people, who answer with `question answer`."),
    ),
    BOARD.read(
        "list_task_notes",
        "Read a task's notes",
        "A task's notes, newest first: comments, agent updates, outputs (previews) and "
        "questions with answers; kind narrows it.",
        ListTaskNotes,
        list_task_notes,
        Rest("GET", "/api/v1/tasks/{task}/notes"),
        Cli(("task", "notes")),
    ),
    BOARD.read(
        "read_output",
        "Read an output",
        "An output's lines in windows of up to 2,000; nextOffset for more.",
        ReadOutput,
        read_output,
        Rest("GET", "/api/v1/tasks/{task}/outputs/{output}/lines"),
        Cli(("task", "output")),
    ),
)
