"""Review tools: hand work in as a draft that waits for a person (or an acceptance rule)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from crewboard.domain.identity.access import Scope, Toolset
from crewboard.mcp.args import Args, Revision, WorkspaceId
from crewboard.mcp.render import Reply
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.mcp.tools.board.tasks import TaskRef
from crewboard.services.idempotency import KeyedResult
from crewboard.services.review import drafts

Document = Literal["overview", "context", "decisions", "notes", "legal"]
Title = Annotated[str, Field(min_length=1, max_length=300, description="A short title.")]
Summary = Annotated[
    str, Field(max_length=2000, description="One line on what the result is (may be empty).")
]
Content = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200_000,
        description="The result in markdown, as the reviewer reads it. Link accepted memory "
        "you built on as [Title](record id) or a project document as [Decisions](decisions); "
        "only ids you have read.",
    ),
]
Collection = Annotated[
    str | None,
    Field(
        default=None,
        max_length=200,
        description="Where in the project's memory it belongs, a collection name from "
        "list_projects; the reviewer may change it.",
    ),
]
DocumentArg = Annotated[
    Document | None,
    Field(default=None, description="The project document it belongs in; offered on approval."),
]


class Reference(Args):
    kind: Literal["commit", "branch", "pull_request", "tests", "link"]
    value: str = Field(
        min_length=1,
        max_length=300,
        description="A commit SHA (7-64 hex), a branch, a test tally like '212 pass', a title.",
    )
    label: str | None = Field(
        default=None, max_length=120, description="A note: a commit message, before/after."
    )
    url: str | None = Field(
        default=None, max_length=500, description="An https link; shown as reported, not fetched."
    )


class ResultFields(Args):
    """A hand-in's fields besides its task (REST names the task in the path)."""

    workspace_id: WorkspaceId
    idempotency_key: str = Field(
        min_length=1,
        max_length=128,
        description="Stable key for this hand-in; a lost answer is retried with the same key.",
    )
    expected_revision: Revision = Field(
        description="The task revision you worked from (get_task or update_task)."
    )
    context_receipt_id: str | None = Field(
        max_length=200,
        description="The contextReceiptId of the get_task read you worked from; null when "
        "that read had none.",
    )
    title: Title
    summary: Summary = ""
    content: Content
    collection: Collection = None
    document: DocumentArg = None
    references: list[Reference] | None = Field(
        default=None,
        max_length=20,
        description="Up to 20 pieces of git evidence, shown to the reviewer as you report them.",
    )


class SubmitResult(ResultFields):
    project_id: str = Field(min_length=1, max_length=200, description="The task's project.")
    task_id: TaskRef


class DraftFields(Args):
    """A draft's fields besides its task."""

    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: str | None = Field(
        default=None, max_length=200, description="The project's workspace id, or null."
    )
    idempotency_key: str | None = Field(
        default=None, min_length=1, max_length=128, description="Optional retry key."
    )
    context_receipt_id: str | None = Field(
        default=None,
        max_length=200,
        description="The contextReceiptId of the get_task read this builds on; omit otherwise.",
    )
    title: Title
    summary: Summary = ""
    content: Content
    collection: Collection = None
    document: DocumentArg = None


class CreateDraft(DraftFields):
    task_id: TaskRef


def _reply(result: KeyedResult) -> Reply:
    notes = []
    if result.replayed:
        notes.append("This key was used before: this is the original answer.")
    body = result.body
    reason = body.get("taskNotMovedReason")
    if reason:
        notes.append(str(reason["message"]))
    if body.get("acceptedByRule"):
        notes.append("A project acceptance rule accepted it; a person may still undo that.")
    elif not result.replayed:
        notes.append("It waits for a person's review; it is not accepted memory until then.")
    return Reply(body, " ".join(notes) or None)


def submit_result(call: Call, args: SubmitResult) -> Reply:
    return _reply(
        drafts.submit_result(
            call.db,
            call.actor,
            project=args.project_id,
            workspace_id=args.workspace_id,
            task=args.task_id,
            idempotency_key=args.idempotency_key,
            expected_revision=args.expected_revision,
            context_receipt_id=args.context_receipt_id,
            title=args.title,
            summary=args.summary,
            content=args.content,
            collection=args.collection,
            document=args.document,
            references=[r.model_dump(exclude_none=True) for r in args.references or []],
        )
    )


def create_draft(call: Call, args: CreateDraft) -> Reply:
    return _reply(
        drafts.create_draft(
            call.db,
            call.actor,
            task=args.task_id,
            project=args.project_id,
            workspace_id=args.workspace_ref(),
            idempotency_key=args.idempotency_key,
            context_receipt_id=args.context_receipt_id,
            title=args.title,
            summary=args.summary,
            content=args.content,
            collection=args.collection,
            document=args.document,
        )
    )


TOOLS = (
    ToolDef(
        name="submit_result",
        title="Hand in a finished task",
        description=(
            "Hand in your finished work in one call: the result becomes a draft in the people's "
            "inbox, the task goes to review, and your git references (commits, branch, tests, "
            "pull request, links) are kept as you report them, unchecked. The task moves only "
            "from backlog, ready_for_ai or in_progress and only at the expectedRevision you "
            "read; otherwise the draft lands anyway and the answer explains why the task "
            "stayed. A person decides on the draft: you never approve it or write memory. "
            "Name the workspace (null for private), a stable idempotencyKey and the "
            "contextReceiptId of your get_task read (or null)."
        ),
        args=SubmitResult,
        toolset=Toolset.REVIEW,
        run=submit_result,
        scopes=(Scope.DRAFTS_CREATE, Scope.TASKS_MANAGE),
        read_only=False,
        idempotent=True,
    ),
    ToolDef(
        name="create_draft",
        title="Propose a draft",
        description=(
            "Put a result in front of the people as a draft for a task, leaving the task as it "
            "is. It waits for a person's review; you cannot accept it or write memory. If your "
            "token also manages tasks, submit_result is the better hand-in. An optional "
            "idempotencyKey makes a retry return the same draft."
        ),
        args=CreateDraft,
        toolset=Toolset.REVIEW,
        run=create_draft,
        scopes=(Scope.DRAFTS_CREATE,),
        read_only=False,
        idempotent=False,
    ),
)
