"""Board tools for what is said on a task: comments, progress notes, outputs, questions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from crewboard.domain.identity.access import Scope, Toolset
from crewboard.mcp.args import Args, WorkspaceId
from crewboard.mcp.render import Reply
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.mcp.tools.board.tasks import TaskRef
from crewboard.services.board import notes as task_notes
from crewboard.services.board import questions
from crewboard.services.idempotency import KeyedResult

Key = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        description="A stable key for this write (at most 128 characters); a retry with the "
        "same key and arguments returns the first answer.",
    ),
]
NoteText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=task_notes.MAX_NOTE_CHARS,
        description="Markdown, at most 20,000 characters.",
    ),
]
OutputName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=task_notes.MAX_OUTPUT_NAME,
        description="The deliverable's name, e.g. audit.md (one line, at most 200 characters).",
    ),
]
OutputContent = Annotated[
    str,
    Field(
        min_length=1,
        max_length=task_notes.MAX_OUTPUT_BYTES,
        description="The whole text, kept exactly as sent; at most 1 MiB in UTF-8.",
    ),
]


class TaskWrite(Args):
    """What every keyed write on a task names: the task, its workspace and the key."""

    task_id: TaskRef
    workspace_id: WorkspaceId
    idempotency_key: Key

    def target(self) -> dict[str, Any]:
        """These three as the services take them."""
        return {
            "task": self.task_id,
            "workspace_id": self.workspace_id,
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


def keyed_reply(result: KeyedResult) -> Reply:
    note = "This key was used before: this is the original answer." if result.replayed else None
    return Reply(result.body, note)


def post_comment(call: Call, args: PostComment) -> Reply:
    return keyed_reply(
        task_notes.post_comment(call.db, call.actor, content=args.content, **args.target())
    )


def agent_update(call: Call, args: AgentUpdate) -> Reply:
    return keyed_reply(
        task_notes.agent_update(call.db, call.actor, content=args.content, **args.target())
    )


def save_output(call: Call, args: SaveOutput) -> Reply:
    return keyed_reply(
        task_notes.save_output(
            call.db, call.actor, name=args.name, content=args.content, **args.target()
        )
    )


def ask_question(call: Call, args: AskQuestion) -> Reply:
    return keyed_reply(
        questions.ask_question(call.db, call.actor, question=args.question, **args.target())
    )


def keyed_board_write(
    name: str, title: str, description: str, args: type[Args], run: Callable[[Call, Any], Reply]
) -> ToolDef:
    """A keyed write on the board: tasks.manage, not read-only, safe to retry with its key."""
    return ToolDef(
        name=name,
        title=title,
        description=description,
        args=args,
        toolset=Toolset.BOARD,
        run=run,
        scopes=(Scope.TASKS_MANAGE,),
        read_only=False,
        idempotent=True,
    )


TOOLS = (
    keyed_board_write(
        "post_comment",
        "Comment on a task",
        "Add a markdown comment to a task (taskId or its key, e.g. CRW-12), signed with who you "
        "are. At most 20,000 characters. Name the task's workspace (null for a private project) "
        "and send an idempotencyKey; retrying with the same key and text returns the first answer.",
        PostComment,
        post_comment,
    ),
    keyed_board_write(
        "agent_update",
        "Post a progress note",
        "Tell the team how your work on a task is going: a short markdown note (at most 20,000 "
        "characters) shown on the task apart from comments. It changes nothing on the task: "
        "use update_task to move its status. Keyed by idempotencyKey.",
        AgentUpdate,
        agent_update,
    ),
    keyed_board_write(
        "save_output",
        "Save a deliverable",
        "Save a named result of a task (a report, a document, a data file as text) so people can "
        "open it from the task. Saving the same name again adds a newer version; earlier versions "
        "are kept. name at most 200 characters, content at most 1 MiB and stored exactly as "
        "sent. Keyed by idempotencyKey; the answer gives the version, not the content.",
        SaveOutput,
        save_output,
    ),
    keyed_board_write(
        "ask_question",
        "Ask the people a question",
        "Ask the project's people something you cannot decide yourself about a task; the "
        "question waits in their inbox and the answer shows on the task. At most 20,000 "
        "characters. Keep working on what does not depend on it. Keyed by idempotencyKey.",
        AskQuestion,
        ask_question,
    ),
)
