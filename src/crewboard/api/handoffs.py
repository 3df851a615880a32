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
    OPTIONAL_WORKSPACE,
    Endpoint,
    model_without,
    parse_args,
    query_params,
    run_service,
)
from crewboard.api.operations import endpoint_for, keyed_endpoint, read_endpoint, run_made
from crewboard.contract.handoffs import handoffs, present
from crewboard.contract.handoffs.handoffs import (
    CreateActionItem,
    CreateHandoff,
    ListActionItems,
)
from crewboard.services.handoffs import queries

P = "/api/v1/projects/{project}"


async def get_handoff(request: Request) -> dict[str, Any]:
    query_params(request, NoQuery)
    ref = request.path_params["handoff"]
    return await run_service(
        request,
        lambda db, actor: present.handoff_answer(
            queries.get_handoff(db, actor, handoff_id=ref), actor
        ),
    )


async def project_items(request: Request) -> dict[str, Any]:
    query = query_params(request, DayItemsQuery)
    filters = {**query, "projectId": request.path_params["project"]}
    return await run_made(
        request, handoffs.action_items_page, parse_args(ListActionItems, filters, strict=False)
    )


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
    keyed_endpoint(
        "create_handoff",
        handoffs.create_handoff,
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
    read_endpoint(
        "list_handoff_action_items",
        handoffs.action_items_page,
        "A handoff's action items, oldest first (cursor)",
        query=ItemsQuery,
    ),
    keyed_endpoint(
        "create_handoff_action_item",
        handoffs.create_handoff_action_item,
        "Add an action item to a handoff (Idempotency-Key header)",
        ItemBody,
    ),
)
