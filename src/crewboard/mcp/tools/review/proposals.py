"""Proposal tools: inbox cards an agent leaves for a person to accept or dismiss."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from crewboard.domain.board.tasks import MAX_LONG_TEXT, MAX_TITLE
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.mcp.args import Args, IdempotencyKey, ProjectRef, WorkspaceId
from crewboard.mcp.render import Reply
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.mcp.tools.board.tasks import Priority, Status, TaskRef, TaskType
from crewboard.services.idempotency import KeyedResult
from crewboard.services.projects.team import MAX_ROLE_NAME, MAX_ROLE_TEXT
from crewboard.services.review import proposal_cards, proposals

Reason = Annotated[
    str | None,
    Field(
        default=None,
        max_length=proposal_cards.MAX_REASON,
        description="Why, shown on the card (at most 2000 characters).",
    ),
]
RoleHint = Annotated[
    str | None,
    Field(
        default=None,
        max_length=MAX_ROLE_NAME,
        description="A team role's name or role (list_team); matched ignoring case on accept.",
    ),
]


class ProposeTask(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId
    title: str = Field(min_length=1, max_length=MAX_TITLE)
    description: str | None = Field(default=None, max_length=MAX_LONG_TEXT)
    type_hint: TaskType | None = Field(default=None, description="The task type to give it.")
    role_hint: RoleHint = None
    idempotency_key: IdempotencyKey = None


class TaskChanges(Args):
    title: str | None = Field(default=None, min_length=1, max_length=MAX_TITLE)
    description: str | None = Field(default=None, max_length=MAX_LONG_TEXT)
    status: Status | None = None
    priority: Priority | None = None
    type_hint: TaskType | None = Field(default=None, description="The new task type.")
    role_hint: RoleHint = None


class ProposeTaskUpdate(Args):
    task_id: TaskRef
    workspace_id: WorkspaceId
    changes: TaskChanges = Field(description="Only the fields to change; at least one.")
    reason: Reason = None
    idempotency_key: IdempotencyKey = None


class ProposeTaskDelete(Args):
    task_id: TaskRef
    workspace_id: WorkspaceId
    reason: Reason = None
    idempotency_key: IdempotencyKey = None


class ProposeRole(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId
    name: str = Field(min_length=1, max_length=MAX_ROLE_NAME, description="The seat's name.")
    role: str = Field(
        min_length=1, max_length=MAX_ROLE_TEXT, description="What it is, e.g. Editor."
    )
    description: Reason = None
    idempotency_key: IdempotencyKey = None


class Seat(Args):
    role: str = Field(min_length=1, max_length=MAX_ROLE_TEXT, description="e.g. Illustrator.")
    name: str | None = Field(
        default=None, min_length=1, max_length=MAX_ROLE_NAME, description="Default: the role."
    )
    type_hint: Literal["ai", "human"] | None = Field(
        default=None, description="Labels the seat; no AI is connected by accepting."
    )


class ProposeComposition(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId
    seats: list[Seat] = Field(min_length=1, max_length=proposal_cards.MAX_SEATS)
    rationale: Reason = None
    idempotency_key: IdempotencyKey = None


def _reply(result: KeyedResult) -> Reply:
    note = (
        "This key was used before: this is the original answer."
        if result.replayed
        else "The card waits in the people's inbox; nothing changes until a person accepts it."
    )
    return Reply(result.body, note)


def _sent(model: Args) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True)


def propose_task(call: Call, args: ProposeTask) -> Reply:
    return _reply(
        proposals.propose_task(
            call.db,
            call.actor,
            project=args.project_id,
            workspace_id=args.workspace_id,
            title=args.title,
            description=args.description,
            type_hint=args.type_hint,
            role_hint=args.role_hint,
            idempotency_key=args.idempotency_key,
        )
    )


def propose_task_update(call: Call, args: ProposeTaskUpdate) -> Reply:
    return _reply(
        proposals.propose_task_update(
            call.db,
            call.actor,
            task=args.task_id,
            workspace_id=args.workspace_id,
            changes=_sent(args.changes),
            reason=args.reason,
            idempotency_key=args.idempotency_key,
        )
    )


def propose_task_delete(call: Call, args: ProposeTaskDelete) -> Reply:
    return _reply(
        proposals.propose_task_delete(
            call.db,
            call.actor,
            task=args.task_id,
            workspace_id=args.workspace_id,
            reason=args.reason,
            idempotency_key=args.idempotency_key,
        )
    )


def propose_role(call: Call, args: ProposeRole) -> Reply:
    return _reply(
        proposals.propose_role(
            call.db,
            call.actor,
            project=args.project_id,
            workspace_id=args.workspace_id,
            name=args.name,
            role=args.role,
            description=args.description,
            idempotency_key=args.idempotency_key,
        )
    )


def propose_composition(call: Call, args: ProposeComposition) -> Reply:
    return _reply(
        proposals.propose_composition(
            call.db,
            call.actor,
            project=args.project_id,
            workspace_id=args.workspace_id,
            seats=[_sent(seat) for seat in args.seats],
            rationale=args.rationale,
            idempotency_key=args.idempotency_key,
        )
    )


def _card_tool(
    name: str,
    title: str,
    description: str,
    args: type[Args],
    run: Callable[[Call, Any], Reply],
    *,
    team: bool = False,
) -> ToolDef:
    """A proposal: a write (it adds a card) that is safe to retry with its idempotencyKey."""
    return ToolDef(
        name=name,
        title=title,
        description=description,
        args=args,
        toolset=Toolset.TEAM if team else Toolset.REVIEW,
        run=run,
        scopes=(Scope.TEAM_MANAGE if team else Scope.TASKS_MANAGE,),
        read_only=False,
        idempotent=True,
    )


TOOLS = (
    _card_tool(
        "propose_task",
        "Propose a new task",
        "Suggest a task as a card in the people's inbox instead of creating it yourself "
        "(create_task does it at once). On accept it is created in backlog; typeHint sets its "
        "type (an unknown one is refused) and roleHint assigns it to the team role with that "
        "name or role, else it stays unassigned. Optional idempotencyKey.",
        ProposeTask,
        propose_task,
    ),
    _card_tool(
        "propose_task_update",
        "Propose a task change",
        "Suggest changes to an existing task (taskId or key, e.g. CRW-12) for a person to accept. "
        "changes holds only the fields to change (title, description, status, priority, "
        "typeHint, roleHint; at least one); the card shows each field's value now next to "
        "yours. On accept they apply to the task as it is then; a roleHint that matches no "
        "role leaves the assignee. Add a reason. Optional idempotencyKey.",
        ProposeTaskUpdate,
        propose_task_update,
    ),
    _card_tool(
        "propose_task_delete",
        "Propose deleting a task",
        "Ask the people to delete an existing task: a warning card in their inbox. You cannot "
        "delete a task yourself; it goes only when a person accepts, and dismissing keeps it "
        "as it is. Say why in reason. Optional idempotencyKey.",
        ProposeTaskDelete,
        propose_task_delete,
    ),
    _card_tool(
        "propose_role",
        "Propose a team role",
        "Suggest one new seat for a project's team (name, role, optional description). A "
        "project admin accepts it in the inbox; the seat is then added as a human seat nobody "
        "holds yet, with no AI connected. Optional idempotencyKey.",
        ProposeRole,
        propose_role,
        team=True,
    ),
    _card_tool(
        "propose_composition",
        "Propose a team",
        "Suggest the whole set of seats a project needs (1 to 12, each a role with an optional "
        "name and an ai or human typeHint) as a single inbox card, with a rationale. One accept "
        "by a project admin adds every seat, unfilled; typeHint only labels the seat and "
        "connects no AI. Optional idempotencyKey.",
        ProposeComposition,
        propose_composition,
        team=True,
    ),
)
