"""Board tools that change many tasks at once: planning fields, and statuses."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field, WithJsonSchema

from crewboard.contract.args import Args, Day, ProjectRef, WorkspaceId
from crewboard.contract.board.tasks import HUMAN_OWNER, AssigneeType, Priority, Status, Tag, TaskRef
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import Reply
from crewboard.domain.identity.access import Toolset
from crewboard.domain.validation import INT32_MAX
from crewboard.services.board import batch as task_batch
from crewboard.services.board.batch_checks import PLANNING_FIELDS

Key = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
    ),
]
REPLAYED = "This key was used before: this is the original answer, not the tasks as they are now."


class RelationshipChange(Args):
    type: Literal["blocks", "blocked_by", "related"] = Field(
        description="How each of taskIds stands to taskId."
    )
    task_id: TaskRef


class UpdateTasks(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    idempotency_key: Key
    task_ids: list[TaskRef] = Field(min_length=1, max_length=200)
    assignee_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="A role or user id; null unassigns.",
    )
    assignee_type: AssigneeType | None = Field(
        default=None, description="Default: from the assignee."
    )
    human_owner_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        validation_alias=HUMAN_OWNER,
    )
    # A task always has a priority: the schema offers no null (the service refuses one).
    priority: Annotated[
        Priority | None, WithJsonSchema({"type": "string", "enum": list(get_args(Priority))})
    ] = Field(default=None)
    story_points: int | None = Field(default=None, ge=0, le=1000)
    cycle: str | None = Field(default=None, max_length=64)
    start_date: Day | None = Field(default=None)
    due_date: Day | None = Field(default=None)
    add_labels: list[Tag] = Field(
        default_factory=list,
        max_length=20,
    )
    remove_labels: list[Tag] = Field(default_factory=list, max_length=20)
    add_relationships: list[RelationshipChange] = Field(
        default_factory=list,
        max_length=50,
        description="Replaces that pair's old relationship.",
    )
    remove_relationships: list[TaskRef] = Field(
        default_factory=list,
        max_length=50,
        description="Tasks to unlink from each.",
    )


class StatusChange(Args):
    task_id: TaskRef
    status: Status


class SetTaskStatus(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    idempotency_key: Key
    changes: list[StatusChange] = Field(min_length=1, max_length=200)
    expected_versions: (
        dict[
            Annotated[str, Field(min_length=1, max_length=200)],
            Annotated[int, Field(ge=1, le=INT32_MAX)]
            | Annotated[str, Field(min_length=1, max_length=200)],
        ]
        | None
    ) = Field(
        default=None,
        max_length=200,
        description=(
            "taskId → the revision read; a tasks.md sourceFileId (spf_…) → its contentVersion."
        ),
    )


def update_tasks(call: Call, args: UpdateTasks) -> Reply:
    fields = args.model_dump(mode="json", include=set(PLANNING_FIELDS) & args.model_fields_set)
    result = task_batch.update_tasks(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_ref(),
        idempotency_key=args.idempotency_key,
        task_ids=list(args.task_ids),
        fields=fields,
        add_labels=list(args.add_labels),
        remove_labels=list(args.remove_labels),
        add_relationships=[
            item.model_dump(mode="json", by_alias=True) for item in args.add_relationships
        ],
        remove_relationships=list(args.remove_relationships),
    )
    return Reply(result.body, REPLAYED if result.replayed else None)


def set_task_status(call: Call, args: SetTaskStatus) -> Reply:
    result = task_batch.set_task_status(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_ref(),
        idempotency_key=args.idempotency_key,
        changes=[item.model_dump(mode="json", by_alias=True) for item in args.changes],
        expected_versions=args.expected_versions,
    )
    notes = [REPLAYED] if result.replayed else []
    if result.body["failed"]:
        notes.append(
            f"{result.body['failed']} of {len(result.body['outcomes'])} tasks were not changed; "
            "each failed outcome says why. The others were saved."
        )
    return Reply(result.body, " ".join(notes) or None)


BOARD = Area(Toolset.BOARD)
PLANNING = Area(Toolset.PLANNING)

OPERATIONS = (
    PLANNING.write(
        "update_tasks",
        "Plan several tasks",
        "One planning change to 1-200 tasks: assignee, owner, priority, points, cycle, dates, "
        "labels and relationships added or removed (the other task shows the inverse). All or "
        "nothing.",
        UpdateTasks,
        update_tasks,
        Rest("POST", "/api/v1/projects/{project}/tasks/bulk-update"),
        Cli(("task", "plan")),
    ),
    BOARD.write(
        "set_task_status",
        "Move tasks to new statuses",
        "Move 1-200 tasks to new statuses, each checked against expectedVersions on its own. "
        "in_progress needs an assignee.",
        SetTaskStatus,
        set_task_status,
        Rest("POST", "/api/v1/projects/{project}/tasks/bulk-status"),
        Cli(("task", "move")),
    ),
)
