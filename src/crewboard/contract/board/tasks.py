"""Board tools: find, read, create and change tasks."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Literal

from pydantic import Field

from crewboard.contract.args import (
    UNLISTED,
    Args,
    BoardOrder,
    ClaimFence,
    Day,
    Moment,
    Offset,
    TaskNumber,
    WorkspaceId,
    also_named,
)
from crewboard.contract.board import present
from crewboard.contract.board.fitting import cut_fields, fit_task_answer
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import RESPONSE_BUDGET, Reply, fitted_answer
from crewboard.domain.board.reads import AgentBrief
from crewboard.domain.identity.access import Toolset
from crewboard.domain.validation import INT32_MAX
from crewboard.services.board import queries as task_queries
from crewboard.services.board import task_updates, tasks
from crewboard.services.text_windows import WINDOW_LIMIT

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
    "humanOwnerId",
    "startDate",
    "createdAt",
]
Id = Annotated[str, Field(min_length=1, max_length=200)]
Tag = Annotated[str, Field(min_length=1, max_length=48)]
TaskRef = Annotated[
    str,
    Field(min_length=1, max_length=200),
]


# Pencil names the person who owns a task (apart from its agent) humanAssigneeId.
HUMAN_OWNER = also_named("humanOwnerId", "humanAssigneeId")


class ContextRef(Args):
    id: Id
    kind: Literal["codex", "file", "external", "board", "context_pack"]
    ref_id: Id
    audience: list[Literal["human", "ai", "mcp"]] = Field(max_length=3)
    note: str | None = Field(default=None, max_length=2000)
    added_by: str | None = Field(default=None, max_length=200)
    created_at: Moment


class TaskPageArgs(Args):
    """Columns and paging, shared by list_tasks and list_assignee_tasks."""

    projection: Literal["compact", "preview", "summary", "board"] = Field(
        default="compact",
        description="board: an array a row; summary adds ids, dates; preview, text.",
    )
    fields: list[ListField] | None = Field(
        default=None,
        max_length=20,
        description="Columns instead of the projection's.",
    )
    order: Literal["asc", "desc"] = "asc"
    limit: int = Field(default=50, ge=1, le=500)  # over 200 only with projection board
    offset: Offset = 0
    cursor: str | None = Field(
        default=None,
        max_length=300,
    )


class ListTasks(TaskPageArgs):
    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: WorkspaceId = None
    status: Status | list[Status] | None = Field(default=None)
    number: TaskNumber | Annotated[list[TaskNumber], Field(max_length=200)] | None = Field(
        default=None
    )
    q: str | None = Field(
        default=None,
        max_length=200,
        description="Words in title, brief, description.",
    )
    parent_task_id: str | None = Field(default=None, max_length=200)
    tag: str | None = Field(default=None, max_length=48)
    label: str | None = Field(default=None, max_length=48)
    assignee: str | None = Field(
        default=None,
        max_length=200,
        # 'me': see ListAssigneeTasks (the default set's budget leaves no room here).
        description="'me' (+owned), 'none', role/user id",
        # The name list_assignee_tasks and get_week give the same filter.
        validation_alias=also_named("assignee", "assigneeId"),
    )
    cycle: str | None = Field(default=None, max_length=64)
    updated_since: Moment | None = Field(default=None)
    file: str | None = Field(default=None, max_length=600)
    include_details: bool = Field(default=False, description="+ brief, description.")


class ListAssigneeTasks(TaskPageArgs):
    assignee_id: str = Field(
        min_length=1,
        max_length=200,
        description="A role id (rol_…), a user id (usr_…) or 'me': assigned to you or owned by "
        "you; for an agent token, assigned to its seat.",
    )
    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: WorkspaceId = None
    status: Status | list[Status] | None = None


class GetTask(Args):
    task_id: str | None = Field(default=None, max_length=200)
    number: TaskNumber | None = Field(default=None, description="With projectId.")
    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: WorkspaceId = None
    include_context_pack: bool = Field(default=True, description="false: the task alone.")
    format: Literal["agent_brief"] | None = Field(
        default=None,
        description="Plain text for a subagent.",
    )
    text_field: Literal["brief", "description"] | None = Field(
        default=None, description="Read this text in windows."
    )
    text_offset: Offset = Field(default=0, description="In code points.")
    text_limit: int = Field(default=WINDOW_LIMIT, ge=1, le=WINDOW_LIMIT)


class TaskFields(Args):
    """The fields a task is created with; update_task's patch takes the same ones."""

    description: str | None = Field(default=None, max_length=200_000)
    brief: str | None = Field(default=None, max_length=200_000)
    type: TaskType | None = None
    status: Status | None = None
    priority: Priority | None = None
    assignee_id: str | None = Field(
        default=None, max_length=200, description="A role or user id from list_team."
    )
    assignee_type: AssigneeType | None = None
    human_owner_id: str | None = Field(default=None, max_length=200, validation_alias=HUMAN_OWNER)
    tags: list[Tag] | None = Field(default=None, max_length=20)
    labels: list[Tag] | None = Field(default=None, max_length=20)
    due_date: Day | None = Field(default=None)
    start_date: Day | None = None
    story_points: int | None = Field(default=None, ge=0, le=1000)
    cycle: str | None = Field(default=None, max_length=64)
    parent_task_id: str | None = Field(default=None, max_length=200)
    blocked_by_task_ids: list[Id] | None = Field(default=None, max_length=200)
    # Links a Pencil import carries; an agent's loop does not set them, so MCP does not list
    # them (taken all the same; REST, the CLI and OpenAPI show them).
    context_refs: Annotated[list[ContextRef] | None, UNLISTED] = Field(default=None, max_length=200)
    context_item_ids: Annotated[list[Id] | None, UNLISTED] = Field(default=None, max_length=200)
    external_reference_ids: Annotated[list[Id] | None, UNLISTED] = Field(
        default=None, max_length=200
    )
    output_destination: Annotated[str | None, UNLISTED] = Field(default=None, max_length=200)


class CreateTask(TaskFields):
    project_id: Id
    workspace_id: WorkspaceId = None
    idempotency_key: Annotated[str, Field(min_length=1, max_length=128)]
    title: str = Field(min_length=1, max_length=300)


class TaskPatch(TaskFields):
    title: str | None = Field(default=None, min_length=1, max_length=300)
    board_order: BoardOrder | None = Field(
        default=None, description="Smaller comes first in its column."
    )


class UpdateTask(Args):
    project_id: Id
    workspace_id: WorkspaceId = None
    idempotency_key: Annotated[str, Field(min_length=1, max_length=128)]
    task_id: TaskRef
    expected_revision: int = Field(ge=1, le=INT32_MAX)
    patch: TaskPatch
    claim_fence: ClaimFence = None


class AssignTask(Args):
    task_id: TaskRef
    workspace_id: WorkspaceId = None
    idempotency_key: Annotated[str, Field(min_length=1, max_length=128)]
    expected_revision: int = Field(ge=1, le=INT32_MAX)
    assignee_id: str | None = Field(default=None, max_length=200)
    assignee_type: AssigneeType | None = None
    human_owner_id: str | None = Field(default=None, max_length=200, validation_alias=HUMAN_OWNER)


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


def _page_reply(page: task_queries.TaskPage) -> Reply:
    body, text = fitted_answer(present.task_rows(page), partial(present.task_page_view, page))
    note = None
    if body["hasMore"]:
        note = (
            f"Showing {len(body['tasks'])} of {body['total']}. More follow: pass nextCursor as "
            "cursor with the same filters (or offset nextOffset)."
        )
    return Reply(body, note, text)


def list_tasks(call: Call, args: ListTasks) -> Reply:
    workspace = args.workspace_ref()
    page = task_queries.list_tasks(
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
        file=args.file,
        fields=list(args.fields) if args.fields else None,
        projection=args.projection,
        include_details=args.include_details,
        order=args.order,
        limit=args.limit,
        offset=args.offset,
        cursor=args.cursor,
    )
    return _page_reply(page)


def list_assignee_tasks(call: Call, args: ListAssigneeTasks) -> Reply:
    page = task_queries.list_assignee_tasks(
        call.db,
        call.actor,
        assignee=args.assignee_id,
        project=args.project_id,
        workspace_id=args.workspace_ref(),
        statuses=_as_list(args.status),
        fields=list(args.fields) if args.fields else None,
        projection=args.projection,
        order=args.order,
        limit=args.limit,
        offset=args.offset,
        cursor=args.cursor,
    )
    return _page_reply(page)


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
        text_field=args.text_field,
        text_offset=args.text_offset if args.given("text_offset") else None,
        text_limit=args.text_limit if args.given("text_limit") else None,
        pack_room=present.pack_room_within(RESPONSE_BUDGET),
    )
    answer = present.get_task_view(found, RESPONSE_BUDGET)
    if isinstance(found, AgentBrief):
        return Reply(answer, answer["text"])
    return Reply(answer, _text_note(answer))


def task_ack(body: dict[str, Any], note: str | None) -> Reply:
    """A write's answer carrying the task, its long texts cut to fit as get_task cuts them."""
    fitted = fit_task_answer(body, RESPONSE_BUDGET)
    cut = cut_fields(fitted)
    if cut:
        note = " ".join(
            filter(None, [note, f"Cut to fit: {' and '.join(cut)}; get_task textField reads it."])
        )
    return Reply(fitted, note)


def _text_note(found: dict[str, Any]) -> str | None:
    """How to read on: the next window, or the texts this answer cut."""
    if "field" in found:
        following = found["nextOffset"]
        if following is None:
            return None
        return f"Pass textOffset {following} for more of the {found['field']} ({found['length']} characters)."
    task = found["task"]
    notes = [
        f"The {name} was cut ({task[name + 'Length']} characters): read it with textField "
        f"{name}, textOffset {len(task[name])}."
        for name in cut_fields(found)
    ]
    records = [
        r["id"]
        for r in found.get("contextPack", {}).get("records", [])
        if r.get("contentTruncated")
    ]
    if records:
        notes.append(
            "Records marked contentTruncated were cut: read one whole with get_project_memory "
            f"ids [{records[0]}] and contentOffset."
        )
    return " ".join(notes) or None


def create_task(call: Call, args: CreateTask) -> Reply:
    fields = fields_of(args)
    for name in ("project_id", "workspace_id", "idempotency_key"):
        fields.pop(name, None)
    result = tasks.create_task(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_ref(),
        idempotency_key=args.idempotency_key,
        **fields,
    )
    return task_ack(
        result.body,
        "This key was used before: this is the original answer." if result.replayed else None,
    )


def update_task(call: Call, args: UpdateTask) -> Reply:
    result = task_updates.update_task(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_ref(),
        idempotency_key=args.idempotency_key,
        task_id=args.task_id,
        expected_revision=args.expected_revision,
        patch=fields_of(args.patch),
        claim_fence=args.claim_fence,
    )
    note = (
        "This key was used before: this is the original answer, not the task as it is now."
        if result.replayed
        else None
    )
    return task_ack(result.body, note)


def assign_task(call: Call, args: AssignTask) -> Reply:
    result = task_updates.assign_task(
        call.db,
        call.actor,
        workspace_id=args.workspace_ref(),
        idempotency_key=args.idempotency_key,
        task_id=args.task_id,
        expected_revision=args.expected_revision,
        assignment=args.model_dump(
            include=args.model_fields_set & set(task_updates.ASSIGNMENT_FIELDS)
        ),
    )
    note = (
        "This key was used before: this is the original answer, not the task as it is now."
        if result.replayed
        else None
    )
    return task_ack(result.body, note)


BOARD = Area(Toolset.BOARD)
PLANNING = Area(Toolset.PLANNING)

OPERATIONS = (
    BOARD.read(
        "list_tasks",
        "List tasks",
        "Find tasks; file: a tasks.md id or path. Whole board: projection board, limit 500.",
        ListTasks,
        list_tasks,
        Rest("GET", "/api/v1/projects/{project}/tasks"),
        Cli(("task", "list")),
    ),
    PLANNING.read(
        "list_assignee_tasks",
        "List an assignee's tasks",
        "The tasks of one assignee (an AI role, a person or 'me'), shaped and paged as in "
        "list_tasks.",
        ListAssigneeTasks,
        list_assignee_tasks,
        Rest("GET", "/api/v1/assignees/{assignee}/tasks"),
        Cli(("task", "list-assigned")),
    ),
    BOARD.read(
        "get_task",
        "Read a task",
        "A task and what you need to work on it. Pass its contextReceiptId to submit_result.",
        GetTask,
        get_task,
        Rest("GET", "/api/v1/tasks/{task}"),
        Cli(("task", "show")),
    ),
    BOARD.write(
        "create_task",
        "Create a task",
        "Create a task; an AI task names an AI role as assigneeId.",
        CreateTask,
        create_task,
        Rest.created("/api/v1/projects/{project}/tasks"),
        Cli(("task", "create")),
    ),
    BOARD.write(
        "update_task",
        "Update a task",
        "Patch a task from the revision you read: omitted stays, null clears; blockedByTaskIds "
        "replaces all.",
        UpdateTask,
        update_task,
        Rest("PATCH", "/api/v1/tasks/{task}"),
        Cli(("task", "update")),
    ),
    BOARD.write(
        "assign_task",
        "Assign a task",
        "Set who does a task (assigneeId: AI role or person) and who answers for it "
        "(humanOwnerId); null clears.",
        AssignTask,
        assign_task,
        Rest("POST", "/api/v1/tasks/{task}/assignment"),
        Cli(("task", "assign")),
    ),
)
