"""Board tools: find, read, create and change tasks."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from crewboard.domain.identity.access import Scope, Toolset
from crewboard.domain.validation import INT32_MAX
from crewboard.mcp.args import (
    Args,
    BoardOrder,
    Day,
    Moment,
    Offset,
    TaskNumber,
    WorkspaceId,
)
from crewboard.mcp.render import Reply, fit_rows, page_note
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.services.board import queries as task_queries
from crewboard.services.board import tasks

Status = Literal["backlog", "ready_for_ai", "in_progress", "blocked", "review", "approved", "done"]
Priority = Literal["low", "medium", "high"]
TaskType = Literal[
    "writing",
    "visual",
    "game_design",
    "development",
    "marketing",
    "review",
    "research",
    "production",
    "worldbuilding",
    "general",
]
AssigneeType = Literal["ai", "human"]
ListField = Literal[
    "number",
    "key",
    "boardOrder",
    "tags",
    "labels",
    "dueDate",
    "parentTaskId",
    "blockedByTaskIds",
    "title",
    "status",
    "priority",
    "type",
    "assigneeId",
    "assigneeType",
    "updatedAt",
    "revision",
    "brief",
    "description",
]
Id = Annotated[str, Field(min_length=1, max_length=200)]
Tag = Annotated[str, Field(min_length=1, max_length=48)]
TaskRef = Annotated[
    str,
    Field(min_length=1, max_length=200, description="The task's id (tsk_…) or key (e.g. CRW-12)."),
]


class ContextRef(Args):
    id: Id
    kind: Literal["codex", "file", "external", "board", "context_pack"]
    ref_id: Id
    audience: list[Literal["human", "ai", "mcp"]] = Field(max_length=3)
    note: str | None = Field(default=None, max_length=2000)
    added_by: str | None = Field(default=None, max_length=200)
    created_at: Moment


class ListTasks(Args):
    project_id: str | None = Field(
        default=None, max_length=200, description="Only this project (id or key)."
    )
    workspace_id: str | None = Field(default=None, max_length=200)
    status: Status | list[Status] | None = Field(default=None, description="One status or several.")
    number: TaskNumber | Annotated[list[TaskNumber], Field(max_length=200)] | None = Field(
        default=None, description="Task numbers (#12 is 12), up to 200."
    )
    q: str | None = Field(
        default=None,
        max_length=200,
        description="Words that must all appear in the title, brief or description.",
    )
    parent_task_id: str | None = Field(
        default=None, max_length=200, description="Only direct subtasks of this task (id or key)."
    )
    tag: str | None = Field(
        default=None, max_length=48, description="Only tasks with this tag (any case)."
    )
    label: str | None = Field(default=None, max_length=48)
    assignee: str | None = Field(
        default=None,
        max_length=200,
        description="A role or user id, 'me' for yourself, or 'none' for unassigned.",
    )
    cycle: str | None = Field(default=None, max_length=64)
    updated_since: Moment | None = Field(
        default=None, description="Only tasks changed after this moment (ISO 8601 with offset)."
    )
    fields: list[ListField] | None = Field(
        default=None, max_length=20, description="Columns besides id, projectId and workspaceId."
    )
    order: Literal["asc", "desc"] = Field(
        default="asc", description="By task number; desc puts the newest first."
    )
    limit: int = Field(default=50, ge=1, le=200)
    offset: Offset = 0


class GetTask(Args):
    task_id: str | None = Field(
        default=None, max_length=200, description="The task's id or key (CRW-12)."
    )
    number: TaskNumber | None = Field(
        default=None, description="The project-local number; add projectId."
    )
    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: str | None = Field(default=None, max_length=200)
    include_context_pack: bool = Field(
        default=True, description="false: the task alone, no context handed out."
    )
    format: Literal["agent_brief"] | None = Field(
        default=None,
        description="agent_brief: plain text (at most 3000 characters) for a subagent.",
    )


class TaskFields(Args):
    """The fields a task is created with; update_task's patch takes the same ones."""

    description: str | None = Field(default=None, max_length=200_000)
    brief: str | None = Field(default=None, max_length=200_000)
    type: TaskType | None = None
    status: Status | None = None
    priority: Priority | None = None
    assignee_id: str | None = Field(
        default=None, max_length=200, description="A role id from list_team or a person's user id."
    )
    assignee_type: AssigneeType | None = None
    human_owner_id: str | None = Field(
        default=None, max_length=200, description="The person answerable for the task."
    )
    tags: list[Tag] | None = Field(default=None, max_length=20)
    labels: list[Tag] | None = Field(default=None, max_length=20)
    due_date: Day | None = Field(default=None, description="YYYY-MM-DD; null clears it.")
    start_date: Day | None = None
    story_points: int | None = Field(default=None, ge=0, le=1000)
    cycle: str | None = Field(default=None, max_length=64)
    parent_task_id: str | None = Field(default=None, max_length=200)
    blocked_by_task_ids: list[Id] | None = Field(default=None, max_length=200)
    context_refs: list[ContextRef] | None = Field(default=None, max_length=200)
    context_item_ids: list[Id] | None = Field(default=None, max_length=200)
    external_reference_ids: list[Id] | None = Field(default=None, max_length=200)
    output_destination: str | None = Field(default=None, max_length=200)


class CreateTask(TaskFields):
    project_id: Id
    workspace_id: WorkspaceId
    idempotency_key: Annotated[str, Field(min_length=1, max_length=128)]
    title: str = Field(min_length=1, max_length=300)


class TaskPatch(TaskFields):
    title: str | None = Field(default=None, min_length=1, max_length=300)
    board_order: BoardOrder | None = Field(
        default=None, description="Position in its column, smaller first (-1e12 to 1e12)."
    )


class UpdateTask(Args):
    project_id: Id
    workspace_id: WorkspaceId
    idempotency_key: Annotated[str, Field(min_length=1, max_length=128)]
    task_id: TaskRef
    expected_revision: int = Field(
        ge=1, le=INT32_MAX, description="The revision you read with get_task."
    )
    patch: TaskPatch


def fields_of(model: TaskFields) -> dict[str, Any]:
    """The fields the caller sent, snake_case, nested models as plain JSON."""
    values = model.model_dump(mode="json", include=model.model_fields_set)
    if "context_refs" in values and values["context_refs"] is not None:
        values["context_refs"] = [
            ref.model_dump(mode="json", by_alias=True) for ref in model.context_refs or []
        ]
    return values


def _as_list(value: Any) -> list[Any] | None:
    if value is None:
        return None
    return value if isinstance(value, list) else [value]


def list_tasks(call: Call, args: ListTasks) -> Reply:
    workspace = args.workspace_ref()
    rows, total = task_queries.list_tasks(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=workspace,
        statuses=_as_list(args.status),
        numbers=_as_list(args.number),
        q=args.q,
        parent_task_id=args.parent_task_id,
        tag=args.tag,
        label=args.label,
        assignee=args.assignee,
        cycle=args.cycle,
        updated_since=args.updated_since,
        fields=list(args.fields) if args.fields else None,
        order=args.order,
        limit=args.limit,
        offset=args.offset,
    )
    kept = fit_rows(rows)
    following = args.offset + len(kept)
    body = {"tasks": kept, "total": total, "nextOffset": following if following < total else None}
    return Reply(body, page_note(shown=len(kept), offset=args.offset, total=total))


def get_task(call: Call, args: GetTask) -> Reply:
    workspace = args.workspace_ref()
    found = task_queries.get_task(
        call.db,
        call.actor,
        task=args.task_id,
        number=args.number,
        project=args.project_id,
        workspace_id=workspace,
        include_context_pack=args.include_context_pack,
        format=args.format,
    )
    if isinstance(found, str):
        return Reply({"format": "agent_brief", "text": found}, found)
    return Reply(found)


def create_task(call: Call, args: CreateTask) -> Reply:
    fields = fields_of(args)
    for name in ("project_id", "workspace_id", "idempotency_key"):
        fields.pop(name, None)
    result = tasks.create_task(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_id,
        idempotency_key=args.idempotency_key,
        **fields,
    )
    return Reply(
        result.body,
        "This key was used before: this is the original answer." if result.replayed else None,
    )


def update_task(call: Call, args: UpdateTask) -> Reply:
    result = tasks.update_task(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_id,
        idempotency_key=args.idempotency_key,
        task_id=args.task_id,
        expected_revision=args.expected_revision,
        patch=fields_of(args.patch),
    )
    note = (
        "This key was used before: this is the original answer, not the task as it is now."
        if result.replayed
        else None
    )
    return Reply(result.body, note)


TOOLS = (
    ToolDef(
        name="list_tasks",
        title="List tasks",
        description=(
            "Find tasks on the board, by task number (desc: newest first). Filter by status (one or "
            "several), number, q (every word must appear in the title, brief or description), "
            "parentTaskId, tag, label, assignee ('me', 'none' or an id), cycle or updatedSince; "
            "choose columns with fields (revision lets you update without reading). Rows show a "
            "500-character description preview. Paged: limit up to 200 and offset."
        ),
        args=ListTasks,
        toolset=Toolset.BOARD,
        run=list_tasks,
    ),
    ToolDef(
        name="get_task",
        title="Read a task",
        description=(
            "Read one task by taskId (or its key, e.g. CRW-12) or by number with projectId: the "
            "task, its lifecycle summary, checklist, relationships, subtasks, readiness to finish "
            "and its context pack: brief, parent, blockers, the accepted memory records it names "
            "or matches in full, an index of the others (read them with get_project_memory ids), "
            "the state page. The pack is read now, not a snapshot. A token that can hand in also "
            "gets contextReceiptId (pass it to submit_result: a later change to these inputs is "
            "flagged to the reviewer) or contextReceiptUnavailable with the reason. "
            "includeContextPack false rereads the task alone and hands out no context; format "
            "agent_brief returns plain text (at most 3000 characters) for a subagent. "
            "assigneeRole names the model, effort and rank the assigned role asks for: run the "
            "task (or the subagent you give it to) on that model."
        ),
        args=GetTask,
        toolset=Toolset.BOARD,
        run=get_task,
    ),
    ToolDef(
        name="create_task",
        title="Create a task",
        description=(
            "Create a task on the board. Name the workspace (null for private) and a stable "
            "idempotencyKey. A task for AI names one of the project's AI roles as assigneeId; a "
            "task created in progress names who does it. Only a person can set approved."
        ),
        args=CreateTask,
        toolset=Toolset.BOARD,
        run=create_task,
        scopes=(Scope.TASKS_MANAGE,),
        read_only=False,
        idempotent=True,
    ),
    ToolDef(
        name="update_task",
        title="Update a task",
        description=(
            "Change a task's fields with patch, from the revision you read (expectedRevision). "
            "Omitted fields stay; null clears (dueDate null removes the date; blockedByTaskIds "
            "replaces the blockers). A stale revision is refused with the current one, who changed "
            "it and when. Keyed by idempotencyKey. Only a person can set approved."
        ),
        args=UpdateTask,
        toolset=Toolset.BOARD,
        run=update_task,
        scopes=(Scope.TASKS_MANAGE,),
        read_only=False,
        idempotent=True,
    ),
)
