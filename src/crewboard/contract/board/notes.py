"""Board tools for what is said on a task: comments, progress notes, outputs, questions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from crewboard.contract.args import Args, WorkspaceId
from crewboard.contract.board import present_notes
from crewboard.contract.board.tasks import TaskRef
from crewboard.contract.operation import Area, Call, Cli, NoDoor, Rest
from crewboard.contract.reply import RESPONSE_BUDGET, Reply
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
    note = (
        "More notes follow: call again with cursor set to nextCursor, same taskId and kind."
        if body["hasMore"]
        else None
    )
    return Reply(body, note)


BOARD = Area(Toolset.BOARD)
PLANNING = Area(Toolset.PLANNING)

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
    PLANNING.write(
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
        "Save a named deliverable on a task, kept as sent; the same name again adds a version.",
        SaveOutput,
        save_output,
        Rest.created("/api/v1/tasks/{task}/outputs"),
        Cli(("task", "save-output")),
    ),
    BOARD.write(
        "ask_question",
        "Ask the people a question",
        "Ask people what you cannot decide about a task; the answer shows in get_task and "
        "list_task_notes.",
        AskQuestion,
        ask_question,
        Rest.created("/api/v1/tasks/{task}/questions"),
        NoDoor("Agent protocol: an agent asks people, who answer with `question answer`."),
    ),
    BOARD.read(
        "list_task_notes",
        "Read a task's notes",
        "A task's notes, newest first: comments, updates, outputs (previews), questions and "
        "answers; kind narrows.",
        ListTaskNotes,
        list_task_notes,
        Rest("GET", "/api/v1/tasks/{task}/notes"),
        Cli(("task", "notes")),
    ),
)
