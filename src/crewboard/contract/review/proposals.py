"""Proposal tools: inbox cards an agent leaves for a person to accept or dismiss."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from crewboard.contract.args import Args, IdempotencyKey, ProjectRef, WorkspaceId
from crewboard.contract.board.tasks import Priority, Status, TaskRef, TaskType
from crewboard.contract.operation import Call, Cli, NoDoor, Operation, Rest, keyed_write
from crewboard.contract.reply import Reply
from crewboard.contract.review.present_proposals import proposed_view
from crewboard.domain.board.tasks import MAX_LONG_TEXT, MAX_TITLE
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.services.idempotency import KeyedResult
from crewboard.services.projects.team import MAX_ROLE_NAME, MAX_ROLE_TEXT
from crewboard.services.review import proposal_cards, proposals

Reason = Annotated[
    str | None,
    Field(
        default=None,
        max_length=proposal_cards.MAX_REASON,
    ),
]
RoleHint = Annotated[
    str | None,
    Field(
        default=None,
        max_length=MAX_ROLE_NAME,
        description="A role's name (list_team), any case.",
    ),
]


class ProposeTask(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    title: str = Field(min_length=1, max_length=MAX_TITLE)
    description: str | None = Field(default=None, max_length=MAX_LONG_TEXT)
    type_hint: TaskType | None = Field(default=None)
    role_hint: RoleHint = None
    idempotency_key: IdempotencyKey = None


class TaskChanges(Args):
    title: str | None = Field(default=None, min_length=1, max_length=MAX_TITLE)
    description: str | None = Field(default=None, max_length=MAX_LONG_TEXT)
    status: Status | None = None
    priority: Priority | None = None
    type_hint: TaskType | None = Field(default=None)
    role_hint: RoleHint = None


class ProposeTaskUpdate(Args):
    task_id: TaskRef
    workspace_id: WorkspaceId = None
    changes: TaskChanges = Field()
    reason: Reason = None
    idempotency_key: IdempotencyKey = None


class ProposeTaskDelete(Args):
    task_id: TaskRef
    workspace_id: WorkspaceId = None
    reason: Reason = None
    idempotency_key: IdempotencyKey = None


class ProposeRole(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    name: str = Field(min_length=1, max_length=MAX_ROLE_NAME)
    role: str = Field(min_length=1, max_length=MAX_ROLE_TEXT)
    description: Reason = None
    idempotency_key: IdempotencyKey = None


class Seat(Args):
    role: str = Field(min_length=1, max_length=MAX_ROLE_TEXT)
    name: str | None = Field(default=None, min_length=1, max_length=MAX_ROLE_NAME)
    type_hint: Literal["ai", "human"] | None = Field(default=None)


class ProposeComposition(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
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
            workspace_id=args.workspace_ref(),
            title=args.title,
            description=args.description,
            type_hint=args.type_hint,
            role_hint=args.role_hint,
            idempotency_key=args.idempotency_key,
            answer=proposed_view,
        )
    )


def propose_task_update(call: Call, args: ProposeTaskUpdate) -> Reply:
    return _reply(
        proposals.propose_task_update(
            call.db,
            call.actor,
            task=args.task_id,
            workspace_id=args.workspace_ref(),
            changes=_sent(args.changes),
            reason=args.reason,
            idempotency_key=args.idempotency_key,
            answer=proposed_view,
        )
    )


def propose_task_delete(call: Call, args: ProposeTaskDelete) -> Reply:
    return _reply(
        proposals.propose_task_delete(
            call.db,
            call.actor,
            task=args.task_id,
            workspace_id=args.workspace_ref(),
            reason=args.reason,
            idempotency_key=args.idempotency_key,
            answer=proposed_view,
        )
    )


def propose_role(call: Call, args: ProposeRole) -> Reply:
    return _reply(
        proposals.propose_role(
            call.db,
            call.actor,
            project=args.project_id,
            workspace_id=args.workspace_ref(),
            name=args.name,
            role=args.role,
            description=args.description,
            idempotency_key=args.idempotency_key,
            answer=proposed_view,
        )
    )


def propose_composition(call: Call, args: ProposeComposition) -> Reply:
    return _reply(
        proposals.propose_composition(
            call.db,
            call.actor,
            project=args.project_id,
            workspace_id=args.workspace_ref(),
            seats=[_sent(seat) for seat in args.seats],
            rationale=args.rationale,
            idempotency_key=args.idempotency_key,
            answer=proposed_view,
        )
    )


def _card_tool(
    name: str,
    title: str,
    description: str,
    args: type[Args],
    run: Callable[[Call, Any], Reply],
    *,
    cli: Cli | NoDoor,
    team: bool = False,
    rest: Rest | NoDoor,
) -> Operation:
    """A proposal: a write (it adds a card) that is safe to retry with its idempotencyKey."""
    return keyed_write(
        name,
        title,
        description,
        args,
        run,
        toolset=Toolset.TEAM if team else Toolset.PLANNING,
        scopes=(Scope.TEAM_MANAGE if team else Scope.TASKS_MANAGE,),
        rest=rest,
        cli=cli,
    )


OPERATIONS = (
    _card_tool(
        "propose_task",
        "Propose a new task",
        "Suggest a new task as an inbox card; created in backlog if a person accepts.",
        ProposeTask,
        propose_task,
        rest=Rest("POST", "/api/v1/projects/{project}/proposals/task", status=201),
        cli=NoDoor("Agent protocol: an inbox card for people; a person runs `task create`."),
    ),
    _card_tool(
        "propose_task_update",
        "Propose a task change",
        (
            "Suggest changes to a task as an inbox card (now next to proposed); applied if a person"
            " accepts."
        ),
        ProposeTaskUpdate,
        propose_task_update,
        rest=Rest("POST", "/api/v1/tasks/{task}/proposals/update", status=201),
        cli=NoDoor("Agent protocol: an inbox card for people; a person runs `task update`."),
    ),
    _card_tool(
        "propose_task_delete",
        "Propose deleting a task",
        "Ask the people to delete a task; it goes only if a person accepts.",
        ProposeTaskDelete,
        propose_task_delete,
        rest=Rest("POST", "/api/v1/tasks/{task}/proposals/delete", status=201),
        cli=NoDoor("Agent protocol: an inbox card for people (proposal accept/dismiss)."),
    ),
    _card_tool(
        "propose_role",
        "Propose a team role",
        "Suggest a new team seat; an admin accepts it in the inbox (no AI is connected).",
        ProposeRole,
        propose_role,
        cli=NoDoor("Agent protocol: an inbox card for admins; an admin runs `team add-role`."),
        team=True,
        rest=Rest("POST", "/api/v1/projects/{project}/proposals/role", status=201),
    ),
    _card_tool(
        "propose_composition",
        "Propose a team",
        "Suggest the seats a project needs (1-12) as one inbox card; one accept adds them all.",
        ProposeComposition,
        propose_composition,
        cli=NoDoor("Agent protocol: a team proposal for admins; an admin runs `team add-role`."),
        team=True,
        rest=Rest("POST", "/api/v1/projects/{project}/proposals/composition", status=201),
    ),
)
