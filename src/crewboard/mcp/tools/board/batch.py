"""Board tools that change many tasks at once: planning fields, and statuses."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field, WithJsonSchema

from crewboard.domain.identity.access import Scope, Toolset
from crewboard.domain.validation import INT32_MAX
from crewboard.mcp.args import Args, Day, ProjectRef, WorkspaceId
from crewboard.mcp.render import Reply
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.mcp.tools.board.tasks import AssigneeType, Priority, Status, Tag, TaskRef
from crewboard.services.board import batch as task_batch
from crewboard.services.board.batch_checks import PLANNING_FIELDS

Key = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        description="A stable key for this write; retry a lost answer with the same key and arguments.",
    ),
]
REPLAYED = "This key was used before: this is the original answer, not the tasks as they are now."


class RelationshipChange(Args):
    type: Literal["blocks", "blocked_by", "related"] = Field(
        description="How each task of taskIds stands to taskId: it blocks it, is blocked by it, "
        "or is related to it."
    )
    task_id: TaskRef


class UpdateTasks(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId
    idempotency_key: Key
    task_ids: list[TaskRef] = Field(
        min_length=1, max_length=200, description="The tasks to change (ids or keys), 1-200."
    )
    assignee_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="A role id from list_team or a person's user id; null unassigns.",
    )
    assignee_type: AssigneeType | None = Field(
        default=None, description="Optional: taken from the assignee when omitted."
    )
    human_owner_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The person answerable for the tasks; null clears.",
    )
    # A task always has a priority: the schema offers no null (the service refuses one).
    priority: Annotated[
        Priority | None, WithJsonSchema({"type": "string", "enum": list(get_args(Priority))})
    ] = Field(default=None, description="Cannot be cleared.")
    story_points: int | None = Field(default=None, ge=0, le=1000)
    cycle: str | None = Field(default=None, max_length=64)
    start_date: Day | None = Field(default=None, description="YYYY-MM-DD; null clears it.")
    due_date: Day | None = Field(default=None, description="YYYY-MM-DD; null clears it.")
    add_labels: list[Tag] = Field(
        default_factory=list,
        max_length=20,
        description="Labels to add to each task; a task holds at most 20.",
    )
    remove_labels: list[Tag] = Field(
        default_factory=list, max_length=20, description="Labels to take off (any case)."
    )
    add_relationships: list[RelationshipChange] = Field(
        default_factory=list,
        max_length=50,
        description="Set how each task stands to another; replaces that pair's old relationship.",
    )
    remove_relationships: list[TaskRef] = Field(
        default_factory=list,
        max_length=50,
        description="Tasks (ids or keys) to unlink from each task, whatever the relationship.",
    )


class StatusChange(Args):
    task_id: TaskRef
    status: Status


class SetTaskStatus(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId
    idempotency_key: Key
    changes: list[StatusChange] = Field(
        min_length=1, max_length=200, description="Each task (id or key) and its new status."
    )
    expected_versions: (
        dict[
            Annotated[str, Field(min_length=1, max_length=200)],
            Annotated[int, Field(ge=1, le=INT32_MAX)],
        ]
        | None
    ) = Field(
        default=None,
        max_length=200,
        description="taskId (as in changes) → the revision you read; a task that moved on since "
        "is refused alone.",
    )


def update_tasks(call: Call, args: UpdateTasks) -> Reply:
    fields = args.model_dump(mode="json", include=set(PLANNING_FIELDS) & args.model_fields_set)
    result = task_batch.update_tasks(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_id,
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
        workspace_id=args.workspace_id,
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


TOOLS = (
    ToolDef(
        name="update_tasks",
        title="Plan several tasks",
        description=(
            "Make one planning change to 1-200 tasks of a project (taskIds: ids or keys): "
            "assigneeId/assigneeType, humanOwnerId, priority, storyPoints, cycle, startDate, "
            "dueDate (omit to keep, null to clear); addLabels/removeLabels (merged into each "
            "task's labels); addRelationships [{type: blocks|blocked_by|related, taskId}] and "
            "removeRelationships [taskId]. Two tasks share one relationship at most: a new one "
            "replaces the old, and the other task shows the inverse. Status and text stay as "
            "they are (set_task_status, update_task). All or nothing: one unknown task changes "
            "none. Keyed by idempotencyKey."
        ),
        args=UpdateTasks,
        toolset=Toolset.BOARD,
        run=update_tasks,
        scopes=(Scope.TASKS_MANAGE,),
        read_only=False,
        idempotent=True,
    ),
    ToolDef(
        name="set_task_status",
        title="Move tasks to new statuses",
        description=(
            "Change the status of 1-200 tasks: changes [{taskId, status}]. Pass expectedVersions "
            "{taskId: revision} with what you read, so a task changed since is left alone. Each "
            "task succeeds or fails by itself: the answer lists an outcome per task in the order "
            "given (ok, status and revision, or an error with its code) and the counts. In "
            "progress needs an assignee; only a person can set approved. Keyed by idempotencyKey."
        ),
        args=SetTaskStatus,
        toolset=Toolset.BOARD,
        run=set_task_status,
        scopes=(Scope.TASKS_MANAGE,),
        read_only=False,
        idempotent=True,
    ),
)
