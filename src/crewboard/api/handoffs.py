"""REST for shift handoffs where the answer has a shape of its own: the creates (201 with
`replayed`), a handoff whole (MCP's answer is cut to its budget), a handoff's action items and
a project's of one day. The list, the changes and one action item are served from their
declarations by api/operations.py. Like the tools, every route needs a person: a personal
token or a session; agent tokens get 403 HUMAN_IDENTITY_REQUIRED. Creates take an
Idempotency-Key header.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from starlette.requests import Request

from crewboard.api.common import (
    IDEMPOTENCY_KEY,
    OPTIONAL_WORKSPACE,
    Created,
    Endpoint,
    created,
    keyed_body,
    model_without,
    parse_args,
    query_params,
    reads_headers,
    refuse_carried,
    run_service,
    workspace_of,
)
from crewboard.api.operations import endpoint_for
from crewboard.contract.handoffs import present
from crewboard.contract.handoffs.handoffs import (
    CreateActionItem,
    CreateHandoff,
    ListActionItems,
)
from crewboard.domain.handoffs import Bodies

P = "/api/v1/projects/{project}"


def _carried(data: dict[str, Any], *names: str) -> dict[str, Any]:
    return refuse_carried(data, names, "the path names it")


@reads_headers(IDEMPOTENCY_KEY)
async def create_handoff(request: Request) -> Created:
    data = _carried(await keyed_body(request), "projectId")
    workspace = workspace_of(data)
    args = parse_args(
        CreateHandoff, {"workspaceId": None, **data, "projectId": request.path_params["project"]}
    )
    result = await run_service(
        request,
        lambda db, actor: present.create_handoff(
            db,
            actor,
            project=args.project_id,
            workspace_id=workspace,
            bodies=Bodies(args.completed, args.in_progress, args.blockers, args.next_steps),
            day=args.date,
            source_time_zone=args.source_time_zone,
            destination_time_zone=args.destination_time_zone,
            linked_task_ids=args.linked_task_ids,
            recipients=args.recipients,
            idempotency_key=args.idempotency_key,
            send_notification=args.send_notification,
            send_email=args.send_email,
        ),
    )
    return created(result)


async def get_handoff(request: Request) -> dict[str, Any]:
    query_params(request, NoQuery)
    ref = request.path_params["handoff"]
    return await run_service(
        request, lambda db, actor: present.get_handoff(db, actor, handoff_id=ref)
    )


async def _items(request: Request, filters: dict[str, Any]) -> dict[str, Any]:
    args = parse_args(ListActionItems, filters, strict=False)
    return await run_service(
        request,
        lambda db, actor: present.list_handoff_action_items(
            db,
            actor,
            handoff_id=args.handoff_id,
            project=args.project_id,
            day=args.date,
            cursor=args.cursor,
            limit=args.limit,
        ),
    )


async def handoff_items(request: Request) -> dict[str, Any]:
    query = query_params(request, ItemsQuery)
    return await _items(request, {**query, "handoffId": request.path_params["handoff"]})


async def project_items(request: Request) -> dict[str, Any]:
    query = query_params(request, DayItemsQuery)
    return await _items(request, {**query, "projectId": request.path_params["project"]})


@reads_headers(IDEMPOTENCY_KEY)
async def create_item(request: Request) -> Created:
    data = _carried(await keyed_body(request), "handoffId")
    workspace = workspace_of(data)
    args = parse_args(
        CreateActionItem,
        {"workspaceId": None, **data, "handoffId": request.path_params["handoff"]},
    )
    result = await run_service(
        request,
        lambda db, actor: present.create_handoff_action_item(
            db,
            actor,
            handoff_id=args.handoff_id,
            workspace_id=workspace,
            text=args.text,
            assignee=args.assignee,
            status=args.status.value,
            due_date=args.due_date,
            idempotency_key=args.idempotency_key,
        ),
    )
    return created(result)


# --- what OpenAPI shows of the queries and bodies ----------------------------------------------

NoQuery = model_without("NoQuery", ListActionItems, drop=tuple(ListActionItems.model_fields))


def _day(description: str, *, required: bool = False) -> Any:
    """A YYYY-MM-DD query value, typed as a date in OpenAPI (the route reads it as one)."""
    field = Field(
        default=... if required else None,
        min_length=10,
        max_length=10,
        description=description,
        json_schema_extra={"format": "date"},
    )
    return (str if required else str | None, field)


ItemsQuery = model_without(
    "HandoffItemsQuery", ListActionItems, drop=("handoff_id", "project_id", "date")
)
# The day is what this route lists by, so it is required here (the tool takes a handoff instead).
DayItemsQuery = model_without(
    "DayItemsQuery",
    ListActionItems,
    drop=("handoff_id", "project_id"),
    date=_day("YYYY-MM-DD: the day to list.", required=True),
)
CreateBody = model_without(
    "HandoffCreateBody", CreateHandoff, drop=("project_id",), workspace_id=OPTIONAL_WORKSPACE
)
ItemBody = model_without(
    "ActionItemCreateBody", CreateActionItem, drop=("handoff_id",), workspace_id=OPTIONAL_WORKSPACE
)

ENDPOINTS: tuple[Endpoint, ...] = (
    endpoint_for(
        "create_handoff",
        create_handoff,
        "Write your handoff of the project for a day (one per person and day; Idempotency-Key "
        "header; a person only)",
        CreateBody,
    ),
    Endpoint(
        f"{P}/handoff-action-items",
        "GET",
        project_items,
        "The action items of the project's handoffs of one date (date required; cursor)",
        query=DayItemsQuery,
    ),
    endpoint_for("get_handoff", get_handoff, "A handoff with its bodies and first action items"),
    endpoint_for(
        "list_handoff_action_items",
        handoff_items,
        "A handoff's action items, oldest first (cursor)",
        query=ItemsQuery,
    ),
    endpoint_for(
        "create_handoff_action_item",
        create_item,
        "Add an action item to a handoff (Idempotency-Key header)",
        ItemBody,
    ),
)
