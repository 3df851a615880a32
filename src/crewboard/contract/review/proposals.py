"""Proposal tools: inbox cards an agent leaves for a person to accept or dismiss."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from crewboard.contract.args import Args, IdempotencyKey, ProjectRef, WorkspaceId
from crewboard.contract.board.tasks import Priority, Status, TaskRef, TaskType
from crewboard.contract.operation import Area, Call, NoDoor, Rest
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


def _card(propose: Callable[..., KeyedResult], call: Call, args: Any, **fields: Any) -> Reply:
    """Leave a card with `propose`: what every proposal passes besides its own `fields`
    (the caller, the workspace, the key and the card's view), and the same notes after."""
    return _reply(
        propose(
            call.db, call.actor, workspace_id=args.workspace_ref(),
            idempotency_key=args.idempotency_key, answer=proposed_view, **fields,
        )
    )  # fmt: skip


def propose_task(call: Call, args: ProposeTask) -> Reply:
    return _card(
        proposals.propose_task, call, args, project=args.project_id, title=args.title,
        description=args.description, type_hint=args.type_hint, role_hint=args.role_hint,
    )  # fmt: skip


def propose_task_update(call: Call, args: ProposeTaskUpdate) -> Reply:
    return _card(
        proposals.propose_task_update, call, args, task=args.task_id,
        changes=_sent(args.changes), reason=args.reason,
    )  # fmt: skip


def propose_task_delete(call: Call, args: ProposeTaskDelete) -> Reply:
    return _card(proposals.propose_task_delete, call, args, task=args.task_id, reason=args.reason)


def propose_role(call: Call, args: ProposeRole) -> Reply:
    return _card(
        proposals.propose_role, call, args, project=args.project_id, name=args.name,
        role=args.role, description=args.description,
    )  # fmt: skip


def propose_composition(call: Call, args: ProposeComposition) -> Reply:
    return _card(
        proposals.propose_composition, call, args, project=args.project_id,
        seats=[_sent(seat) for seat in args.seats], rationale=args.rationale,
    )  # fmt: skip


# A proposal adds a card and is safe to retry with its idempotencyKey; a team's seats need
# team:manage, a task's tasks:manage.
PLANNING = Area(Toolset.PLANNING)
TEAM = Area(Toolset.TEAM, write_scopes=(Scope.TEAM_MANAGE,))

OPERATIONS = (
    PLANNING.write(
        "propose_task",
        "Propose a new task",
        "Suggest a new task as an inbox card; created in backlog if a person accepts.",
        ProposeTask,
        propose_task,
        Rest.created("/api/v1/projects/{project}/proposals/task"),
        NoDoor("Agent protocol: an inbox card for people; a person runs `task create`."),
    ),
    PLANNING.write(
        "propose_task_update",
        "Propose a task change",
        "Suggest changes to a task as an inbox card (now next to proposed); applied if a person"
        " accepts.",
        ProposeTaskUpdate,
        propose_task_update,
        Rest.created("/api/v1/tasks/{task}/proposals/update"),
        NoDoor("Agent protocol: an inbox card for people; a person runs `task update`."),
    ),
    PLANNING.write(
        "propose_task_delete",
        "Propose deleting a task",
        "Ask the people to delete a task; it goes only if a person accepts.",
        ProposeTaskDelete,
        propose_task_delete,
        Rest.created("/api/v1/tasks/{task}/proposals/delete"),
        NoDoor("Agent protocol: an inbox card for people (proposal accept/dismiss)."),
    ),
    TEAM.write(
        "propose_role",
        "Propose a team role",
        "Suggest a new team seat; an admin accepts it in the inbox (no AI is connected).",
        ProposeRole,
        propose_role,
        Rest.created("/api/v1/projects/{project}/proposals/role"),
        NoDoor("Agent protocol: an inbox card for admins; an admin runs `team add-role`."),
    ),
    TEAM.write(
        "propose_composition",
        "Propose a team",
        "Suggest the seats a project needs (1-12) as one inbox card; one accept adds them all.",
        ProposeComposition,
        propose_composition,
        Rest.created("/api/v1/projects/{project}/proposals/composition"),
        NoDoor("Agent protocol: a team proposal for admins; an admin runs `team add-role`."),
    ),
)
