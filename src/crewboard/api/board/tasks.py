"""REST routes of the task board: list, create, read and change tasks, and a task's events.

Queries and bodies are checked by the board tools' argument models (camelCase, as on MCP),
so a bad value is refused with the same code and field. Writes need an `Idempotency-Key`
header; a change names the revision it read in `If-Match: "3"` (412 when stale) or as
`expectedRevision` in the body (409 when stale).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from pydantic import Field
from starlette.requests import Request

from crewboard.api.common import (
    IDEMPOTENCY_KEY_REQUIRED,
    IF_MATCH_REVISION,
    Created,
    Endpoint,
    created,
    expected_revision,
    guard_precondition,
    model_without,
    parse_args,
    query_list,
    read_body,
    reads_headers,
    refuse_carried,
    run_service,
)
from crewboard.api.operations import endpoint_for
from crewboard.contract.args import Args, ProjectRef, Revision
from crewboard.contract.board import present
from crewboard.contract.board.tasks import CreateTask, GetTask, ListTasks, TaskPatch, fields_of
from crewboard.contract.board.week import ListTaskEvents
from crewboard.contract.reply import RESPONSE_BUDGET, fit_rows
from crewboard.domain.board.tasks import TaskStatus
from crewboard.domain.identity.access import parse_enum_list
from crewboard.domain.validation import parse_whole
from crewboard.errors import ValidationFailed
from crewboard.services.board import queries as task_queries
from crewboard.services.board import task_updates, tasks, week
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef


class _McpPatch(Args):
    """update_task's body as MCP takes it (the task and key come from the path and header)."""

    project_id: ProjectRef | None = None
    patch: TaskPatch


LIST_QUERY = (
    "status",
    "number",
    "q",
    "tag",
    "label",
    "parentTaskId",
    "assignee",
    "cycle",
    "updatedSince",
    "file",
    "includeDetails",
    "fields",
    "projection",
    "order",
    "limit",
    "offset",
    "cursor",
    "workspaceId",
)
REPEATABLE = frozenset({"status", "number", "fields", "eventTypes"})


# --- the query string and headers ----------------------------------------------------------


def _query(request: Request, accepted: Collection[str]) -> dict[str, Any]:
    """The query parameters as a dict; repeatable ones (also comma lists) as lists.

    Raises:
        ValidationFailed: a parameter this route does not take.
    """
    params = request.query_params
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValidationFailed.field(unknown[0], "is not a parameter of this route.", [*accepted])
    values: dict[str, Any] = {}
    for name in params:
        if name in REPEATABLE:
            values[name] = query_list(request, name)
        else:
            values[name] = params[name]
    return values


def _idempotency_key(request: Request) -> str:
    """The key: these routes declare the header required, so json_route refused a request
    without it before the handler ran."""
    return request.headers.get("idempotency-key", "")


def _workspace(data: dict[str, Any]) -> WorkspaceRef:
    """An optional `workspaceId`: a string or null; omitted means the task's own workspace."""
    if "workspaceId" not in data:
        return ANY_WORKSPACE
    value = data.pop("workspaceId")
    if value in ("", "null"):
        return None
    if value is not None and (not isinstance(value, str) or len(value) > 200):
        raise ValidationFailed.field("workspaceId", "must be a workspace id, or null.")
    return value


def _project_and_patch(data: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The project named (or None) and the checked patch, from either body: the patch's
    fields at the top, or MCP's `{"patch": {...}, "projectId": ...}`, so a call copied from
    update_task works here too.

    Raises:
        ValidationFailed: a field beside `patch` in MCP's shape, or a bad patch field.
    """
    if "patch" not in data:
        return None, fields_of(parse_args(TaskPatch, data))
    envelope = parse_args(_McpPatch, data)
    return envelope.project_id, fields_of(envelope.patch)


def _aware(field: str, value: datetime | None) -> None:
    if value is not None and value.tzinfo is None:
        raise ValidationFailed.field(
            field, "needs a UTC offset, e.g. 2026-03-01T09:00:00Z or +02:00."
        )


def _numbers(values: list[str]) -> list[int] | None:
    return [parse_whole("number", v, minimum=1) for v in values] or None


# --- handlers -------------------------------------------------------------------------------


async def list_tasks(request: Request) -> dict[str, Any]:
    query = _query(request, LIST_QUERY)
    workspace = _workspace(query)
    statuses = parse_enum_list(query.pop("status", []), TaskStatus, "status")
    numbers = _numbers(query.pop("number", []))
    args = parse_args(
        ListTasks, {**query, "projectId": request.path_params["project"]}, strict=False
    )
    _aware("updatedSince", args.updated_since)
    page: task_queries.TaskPage = await run_service(
        request,
        lambda db, actor: task_queries.list_tasks(
            db,
            actor,
            project=args.project_id,
            workspace_id=workspace,
            statuses=[s.value for s in statuses] or None,
            numbers=numbers,
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
        ),
    )
    return present.task_page_view(page, fit_rows(present.task_rows(page)))


@reads_headers(IDEMPOTENCY_KEY_REQUIRED)
async def create_task(request: Request) -> Created:
    data = await read_body(request)
    refuse_carried(
        data, ("projectId", "idempotencyKey"), "the path names the project, the header the key"
    )
    args = parse_args(
        CreateTask,
        {
            **data,
            "projectId": request.path_params["project"],
            "idempotencyKey": _idempotency_key(request),
        },
    )
    fields = fields_of(args)
    for name in ("project_id", "workspace_id", "idempotency_key"):
        fields.pop(name, None)
    result = await run_service(
        request,
        lambda db, actor: tasks.create_task(
            db,
            actor,
            project=args.project_id,
            workspace_id=args.workspace_ref(),
            idempotency_key=args.idempotency_key,
            **fields,
        ),
    )
    return created(result)


async def get_task(request: Request) -> dict[str, Any]:
    query = _query(
        request,
        ("includeContextPack", "format", "workspaceId", "textField", "textOffset", "textLimit"),
    )
    workspace = _workspace(query)
    args = parse_args(GetTask, {**query, "taskId": request.path_params["task"]}, strict=False)
    found = await run_service(
        request,
        lambda db, actor: task_queries.get_task(
            db,
            actor,
            task=args.task_id,
            workspace_id=workspace,
            include_context_pack=args.include_context_pack,
            format=args.format,
            text_field=args.text_field,
            text_offset=args.text_offset if args.given("text_offset") else None,
            text_limit=args.text_limit if args.given("text_limit") else None,
            pack_room=present.pack_room_within(RESPONSE_BUDGET),
        ),
    )
    return present.get_task_view(found, RESPONSE_BUDGET)


@reads_headers(IDEMPOTENCY_KEY_REQUIRED, IF_MATCH_REVISION)
async def update_task(request: Request) -> dict[str, Any]:
    data = await read_body(request)
    key = _idempotency_key(request)
    expected, via_header = expected_revision(request, data)
    data.pop("expectedRevision", None)
    workspace = _workspace(data)
    project, patch = _project_and_patch(data)
    ref = request.path_params["task"]
    result = await guard_precondition(
        lambda: run_service(
            request,
            lambda db, actor: task_updates.update_task(
                db,
                actor,
                # The id or key names the task and so its project; access_task checks it,
                # and the project named beside it when there is one.
                project=project,
                workspace_id=workspace,
                idempotency_key=key,
                task_id=ref,
                expected_revision=expected,
                patch=patch,
            ),
        ),
        via_header,
    )
    return {**result.body, "replayed": result.replayed}


async def list_task_events(request: Request) -> dict[str, Any]:
    query = _query(request, ("eventTypes", "since", "until", "limit", "cursor", "workspaceId"))
    workspace = _workspace(query)
    args = parse_args(
        ListTaskEvents, {**query, "taskId": request.path_params["task"]}, strict=False
    )
    page = await run_service(
        request,
        lambda db, actor: week.list_task_events(
            db,
            actor,
            task=args.task_id,
            since=args.since,
            until=args.until,
            workspace_id=workspace,
            event_types=list(args.event_types) if args.event_types else None,
            limit=args.limit,
            cursor=args.cursor,
        ),
    )
    kept = fit_rows(page.events)
    more = page.has_more or len(kept) < len(page.events)
    return {
        "events": kept,
        "nextCursor": page.cursor_after(kept[-1]["id"]) if more else None,
        "hasMore": more,
        "coverage": page.coverage(kept),
    }


# --- what OpenAPI shows of the bodies ---------------------------------------------------------


CreateTaskBody = model_without("CreateTaskBody", CreateTask, drop=("project_id", "idempotency_key"))
UpdateTaskBody = model_without(
    "UpdateTaskBody",
    TaskPatch,
    drop=(),
    workspace_id=(str | None, Field(default=None, max_length=200)),
    expected_revision=(
        Revision | None,
        Field(default=None, description='The revision you read; or send If-Match: "N".'),
    ),
    project_id=(ProjectRef | None, Field(default=None, description="With patch, as MCP sends.")),
    patch=(
        TaskPatch | None,
        Field(default=None, description="The fields under one key, as MCP sends; not both."),
    ),
)

# The query strings, for OpenAPI: the tools' models without what the path names or the
# route does not take (the handlers refuse any other parameter).
ListTasksQuery = model_without("ListTasksQuery", ListTasks, drop=("project_id",))
GetTaskQuery = model_without("GetTaskQuery", GetTask, drop=("task_id", "number", "project_id"))
TaskEventsQuery = model_without(
    "TaskEventsQuery",
    ListTaskEvents,
    drop=("task_id", "human_assignee_id", "agent_assignee_id", "project_id"),
)

P = "/api/v1/projects/{project}"
T = "/api/v1/tasks/{task}"
ENDPOINTS: tuple[Endpoint, ...] = (
    endpoint_for(
        "list_tasks", list_tasks, "Tasks of a project, filtered and paged", query=ListTasksQuery
    ),
    endpoint_for(
        "create_task", create_task, "Create a task (Idempotency-Key header)", CreateTaskBody
    ),
    endpoint_for(
        "get_task",
        get_task,
        "One task by id or key (CRW-12), with its context pack; a cut text in windows (textField)",
        query=GetTaskQuery,
    ),
    endpoint_for(
        "update_task",
        update_task,
        "Change a task's fields (Idempotency-Key; If-Match or expectedRevision)",
        UpdateTaskBody,
    ),
    endpoint_for(
        "list_task_events",
        list_task_events,
        "A task's lifecycle events, oldest first",
        query=TaskEventsQuery,
    ),
)
