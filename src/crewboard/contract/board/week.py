"""Board tools over time: the lifecycle events of tasks and the week view."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from crewboard.contract.args import Args, Day, Moment, WorkspaceId, also_named
from crewboard.contract.board.present_week import week_view
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import RESPONSE_BUDGET, Reply, compact, fit_rows
from crewboard.domain.identity.access import Toolset
from crewboard.services.board import week

EventType = Literal["assignment_changed", "status_changed", "blocker_changed"]


class ListTaskEvents(Args):
    task_id: str | None = Field(default=None, max_length=200)
    human_assignee_id: str | None = Field(
        default=None,
        max_length=200,
        # The name create_task and assign_task give the same person.
        validation_alias=also_named("humanAssigneeId", "humanOwnerId"),
        description="Changes leaving the task with this person.",
    )
    agent_assignee_id: str | None = Field(
        default=None,
        max_length=200,
        description="Changes leaving the task with this role.",
    )
    since: Moment | None = Field(default=None, description="Inclusive.")
    until: Moment | None = Field(default=None, description="Exclusive.")
    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: WorkspaceId = None
    event_types: list[EventType] | None = Field(default=None, max_length=3)
    limit: int = Field(default=50, ge=1, le=100)
    cursor: str | None = Field(
        default=None,
        max_length=200,
    )


class GetWeek(Args):
    week: Day | None = Field(
        default=None,
        description="Any day of it (default: this week).",
    )
    time_zone: str = Field(
        default="UTC",
        min_length=1,
        max_length=64,
        description="IANA zone (default UTC).",
    )
    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: WorkspaceId = None
    assignee_id: str | None = Field(default=None, max_length=200)


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
    read = week.get_week(
        call.db,
        call.actor,
        week=args.week,
        time_zone=args.time_zone,
        project=args.project_id,
        workspace_id=workspace,
        assignee_id=args.assignee_id,
    )
    body = week_view(read)
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


# The week and a task's history are how an agent plans: part of its loop.
BOARD = Area(Toolset.BOARD)

OPERATIONS = (
    BOARD.read(
        "list_task_events",
        "List task lifecycle events",
        "Task history, oldest first: assignment, status, blocker changes; coverage says if "
        "complete.",
        ListTaskEvents,
        list_task_events,
        Rest("GET", "/api/v1/tasks/{task}/events"),
        Cli(("task", "events")),
    ),
    BOARD.read(
        "get_week",
        "Read the week",
        "A Monday-Sunday week: tasks due each day, time in progress per assignee, undated open "
        "tasks.",
        GetWeek,
        get_week,
        Rest("GET", "/api/v1/projects/{project}/week"),
        Cli(("week", "show")),
    ),
)
