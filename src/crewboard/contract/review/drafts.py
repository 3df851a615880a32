"""Review tools: hand work in as a draft that waits for a person (or an acceptance rule)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from crewboard.contract.args import Args, ClaimFence, Revision, WorkspaceId
from crewboard.contract.board.tasks import TaskRef
from crewboard.contract.operation import Area, Call, NoDoor, Rest
from crewboard.contract.reply import Reply
from crewboard.contract.review.present import hand_in_view
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.services.idempotency import KeyedResult
from crewboard.services.review import drafts

Document = Literal["overview", "context", "decisions", "notes", "legal"]
Title = Annotated[str, Field(min_length=1, max_length=300)]
Summary = Annotated[str, Field(max_length=2000)]
Content = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200_000,
        description="Markdown for the reviewer; cite memory you used as [Title](record id).",
    ),
]
Collection = Annotated[
    str | None,
    Field(
        default=None,
        max_length=200,
        description="A memory collection (list_projects).",
    ),
]
DocumentArg = Annotated[
    Document | None,
    Field(default=None),
]


class Reference(Args):
    kind: Literal["commit", "branch", "pull_request", "tests", "link"]
    value: str = Field(
        min_length=1,
        max_length=300,
        description="A commit SHA, branch, test tally or title.",
    )
    label: str | None = Field(default=None, max_length=120)
    url: str | None = Field(default=None, max_length=500)


class ResultFields(Args):
    """A hand-in's fields besides its task (REST names the task in the path)."""

    workspace_id: WorkspaceId = None
    idempotency_key: str = Field(
        min_length=1,
        max_length=128,
    )
    expected_revision: Revision = Field()
    context_receipt_id: str | None = Field(
        max_length=200,
        description="From the get_task you worked from; null if none.",
    )
    title: Title
    summary: Summary = ""
    content: Content
    collection: Collection = None
    document: DocumentArg = None
    references: list[Reference] | None = Field(
        default=None,
        max_length=20,
        description="Git evidence.",
    )
    claim_fence: ClaimFence = None


class SubmitResult(ResultFields):
    project_id: str = Field(min_length=1, max_length=200)
    task_id: TaskRef


class DraftFields(Args):
    """A draft's fields besides its task."""

    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: WorkspaceId = None
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=128)
    context_receipt_id: str | None = Field(
        default=None,
        max_length=200,
        description="From the get_task read it builds on.",
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


def _written(args: ResultFields | DraftFields) -> dict[str, Any]:
    """What a hand-in and a draft both pass their service: the workspace, the draft's fields
    and the answer's view."""
    names = ("idempotency_key", "context_receipt_id", "title", "summary", "content", "collection",
             "document")  # fmt: skip
    given = {name: getattr(args, name) for name in names}
    return given | {"workspace_id": args.workspace_ref(), "answer": hand_in_view}


def submit_result(call: Call, args: SubmitResult) -> Reply:
    return _reply(
        drafts.submit_result(
            call.db, call.actor, project=args.project_id, task=args.task_id,
            expected_revision=args.expected_revision,
            references=[r.model_dump(exclude_none=True) for r in args.references or []],
            claim_fence=args.claim_fence, **_written(args),
        )
    )  # fmt: skip


def create_draft(call: Call, args: CreateDraft) -> Reply:
    return _reply(
        drafts.create_draft(
            call.db, call.actor, task=args.task_id, project=args.project_id, **_written(args)
        )
    )


# A hand-in needs drafts:create; submit_result also moves the task (tasks:manage). A second
# create_draft with no key makes a second draft: not idempotent.
REVIEW = Area(Toolset.REVIEW, write_scopes=(Scope.DRAFTS_CREATE,))
# Handing in ends an agent's loop: submit_result is listed with the board.
HAND_IN = Area(Toolset.BOARD, write_scopes=(Scope.DRAFTS_CREATE,))

OPERATIONS = (
    HAND_IN.write(
        "submit_result",
        "Hand in a finished task",
        "Hand in finished work: a draft for review and the task moved to review (else the answer "
        "says why), with git references.",
        SubmitResult,
        submit_result,
        Rest.created("/api/v1/tasks/{task}/results"),
        NoDoor("Agent protocol: an agent hands in work; people decide (review approve)."),
        scopes=(Scope.DRAFTS_CREATE, Scope.TASKS_MANAGE),
    ),
    REVIEW.write(
        "create_draft",
        "Propose a draft",
        "Hand a result in as a draft for review, leaving the task as it is (submit_result also "
        "moves it).",
        CreateDraft,
        create_draft,
        Rest.created("/api/v1/tasks/{task}/drafts"),
        NoDoor("Agent protocol: an agent hands in a draft; people decide (review approve)."),
        idempotent=False,
    ),
)
