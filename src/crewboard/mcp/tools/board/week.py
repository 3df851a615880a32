"""Board tools over time: the lifecycle events of tasks and the week view."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from crewboard.domain.identity.access import Toolset
from crewboard.mcp.args import Args, Day, Moment
from crewboard.mcp.render import RESPONSE_BUDGET, Reply, compact, fit_rows
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.services.board import week

EventType = Literal["assignment_changed", "status_changed", "blocker_changed"]


class ListTaskEvents(Args):
    task_id: str | None = Field(
        default=None, max_length=200, description="Only this task: its id (tsk_…) or key (CRW-12)."
    )
    human_assignee_id: str | None = Field(
        default=None,
        max_length=200,
        description="Only events after which this person was the task's human owner or assignee.",
    )
    agent_assignee_id: str | None = Field(
        default=None,
        max_length=200,
        description="Only events after which this AI role held the task.",
    )
    since: Moment | None = Field(
        default=None, description="From this moment on, inclusive (ISO 8601 with an offset)."
    )
    until: Moment | None = Field(
        default=None, description="Up to this moment, exclusive (ISO 8601 with an offset)."
    )
    project_id: str | None = Field(
        default=None, max_length=200, description="Only this project (id or key)."
    )
    workspace_id: str | None = Field(
        default=None, max_length=200, description="The project's workspace id, or null for private."
    )
    event_types: list[EventType] | None = Field(
        default=None, max_length=3, description="Only these kinds of event."
    )
    limit: int = Field(default=50, ge=1, le=100, description="Events per page (1-100, default 50).")
    cursor: str | None = Field(
        default=None,
        max_length=200,
        description="nextCursor from the previous page; send the same filters with it.",
    )


class GetWeek(Args):
    week: Day | None = Field(
        default=None,
        description="Any day of the week to show, YYYY-MM-DD. Default: this week in timeZone.",
    )
    time_zone: str = Field(
        default="UTC",
        min_length=1,
        max_length=64,
        description=(
            "IANA time zone in which days start and end (e.g. Europe/Berlin); default UTC. "
            "Due dates have no time zone."
        ),
    )
    project_id: str | None = Field(
        default=None, max_length=200, description="Only this project (id or key)."
    )
    workspace_id: str | None = Field(
        default=None, max_length=200, description="The project's workspace id, or null for private."
    )
    assignee_id: str | None = Field(
        default=None,
        max_length=200,
        description="Only this role's or person's plan and work (a role id or a user id).",
    )


def list_task_events(call: Call, args: ListTaskEvents) -> Reply:
    workspace = args.workspace_ref()
    page = week.list_task_events(
        call.db,
        call.actor,
        task=args.task_id,
        human_assignee_id=args.human_assignee_id,
        agent_assignee_id=args.agent_assignee_id,
        since=args.since,
        until=args.until,
        project=args.project_id,
        workspace_id=workspace,
        event_types=list(args.event_types) if args.event_types else None,
        limit=args.limit,
        cursor=args.cursor,
    )
    body = page.answer(fit_rows(page.events))
    note = (
        "More events follow: call again with cursor set to nextCursor and the same filters."
        if body["hasMore"]
        else None
    )
    return Reply(body, note)


def get_week(call: Call, args: GetWeek) -> Reply:
    workspace = args.workspace_ref()
    body = week.get_week(
        call.db,
        call.actor,
        week=args.week,
        time_zone=args.time_zone,
        project=args.project_id,
        workspace_id=workspace,
        assignee_id=args.assignee_id,
    )
    cut = _fit_week(body)
    parts = []
    if cut:
        parts.append(
            f"{cut} rows were left out to stay within the answer size; narrow the week with "
            "projectId or assigneeId. The minute totals still count everything."
        )
    shown_due = sum(len(day["due"]) for day in body["days"])
    if body["dueTotal"] > shown_due:
        parts.append(
            f"{body['dueTotal']} tasks are due this week and {shown_due} are shown; "
            "list_tasks finds the others."
        )
    if body["undatedTotal"] > len(body["undated"]):
        parts.append(
            f"{body['undatedTotal']} open tasks have no due date; list_tasks finds the rest."
        )
    return Reply(body, " ".join(parts) or None)


def _fit_week(body: dict[str, Any]) -> int:
    """Cut rows so the answer fits the budget: stretches first, then due tasks, then undated.

    Returns how many rows were left out (the totals are untouched).
    """
    lists: list[list[Any]] = [day["inProgress"] for day in body["days"]]
    lists += [day["due"] for day in body["days"]] + [body["undated"]]
    saved = [list(rows) for rows in lists]
    for rows in lists:
        rows.clear()
    room = RESPONSE_BUDGET - 2048 - len(compact(body).encode())
    dropped = 0
    for rows, full in zip(lists, saved, strict=True):
        kept = fit_rows(full, room) if room > 0 else []
        rows.extend(kept)
        room -= sum(len(compact(row).encode()) + 1 for row in kept)
        dropped += len(full) - len(kept)
    if dropped:
        body["truncated"] = True
    return dropped


TOOLS = (
    ToolDef(
        name="list_task_events",
        title="List task lifecycle events",
        description=(
            "The recorded history of tasks, oldest first: assignment_changed, status_changed and "
            "blocker_changed events, each with when, who, what changed and the status after it. "
            "Bound every request by taskId, humanAssigneeId, agentAssigneeId, or both since "
            "(inclusive) and until (exclusive). Narrow with projectId and eventTypes. Pages of up "
            "to 100 (limit); while hasMore, pass nextCursor as cursor with the same filters. "
            "coverage says whether the listed tasks' history is complete."
        ),
        args=ListTaskEvents,
        toolset=Toolset.BOARD,
        run=list_task_events,
    ),
    ToolDef(
        name="get_week",
        title="Read the week",
        description=(
            "One week, Monday to Sunday: for each day the tasks due then (the plan) and the time "
            "tasks spent in progress, per assignee, with local start and end (a stretch still in "
            "progress runs to now). Minutes are given per stretch, per day and per week, split "
            "between people and AI; they measure time in progress, nights included, not hours "
            "worked. Also lists open tasks without a due date. Days follow timeZone (default "
            "UTC), so a day when clocks change has 23 or 25 hours. To plan a task onto a day, "
            "update_task with patch.dueDate and the revision shown here."
        ),
        args=GetWeek,
        toolset=Toolset.BOARD,
        run=get_week,
    ),
)
