"""Handoff tools: a person's end-of-shift handoff of a project (one per day), its action
items, and reading both. Every one needs a person's identity: agent tokens are refused."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from crewboard.contract.args import (
    Args,
    IdempotencyKey,
    Offset,
    ProjectRef,
    WorkspaceId,
    also_named,
)
from crewboard.contract.handoffs import present
from crewboard.contract.operation import Area, Call, Cli, Rest, keyed
from crewboard.contract.reply import ROWS_BUDGET, Reply, paged_reply
from crewboard.domain.handoffs import (
    MAX_BODY,
    MAX_ITEM_TEXT,
    MAX_LINKED_TASKS,
    MAX_RECIPIENTS,
    Bodies,
    ItemStatus,
)
from crewboard.domain.identity.access import Toolset
from crewboard.services.handoffs import commands, queries
from crewboard.services.idempotency import KeyedResult

HandoffRef = Field(min_length=1, max_length=64, description="The handoff's id (hof_…).")
ItemRef = Field(min_length=1, max_length=64, description="The action item's id (hai_…).")
Day = Field(default=None, min_length=10, max_length=10, description="YYYY-MM-DD.")
Person = Field(default=None, min_length=1, max_length=320, description="A user id or email.")
Expected = Field(
    min_length=1, max_length=64, description="The updatedAt of a fresh read, as it came."
)
Body = Field(default=None, max_length=MAX_BODY)
TaskRefs = Field(default=None, max_length=MAX_LINKED_TASKS, description="Task ids or keys.")
People = Field(
    default=None, max_length=MAX_RECIPIENTS, description="People of the project (ids or emails)."
)
Status = Field(default=None, description="open, in_progress, done or cancelled.")
# What a person may use and an agent token may not is said once, in the server instructions.


# Pencil calls the project a handoff belongs to its team (teamId).
TEAM = also_named("projectId", "teamId")


class CreateHandoff(Args):
    project_id: ProjectRef = Field(validation_alias=TEAM)
    workspace_id: WorkspaceId = None
    completed: str = Field(default="", max_length=MAX_BODY, description="What got done.")
    in_progress: str = Field(default="", max_length=MAX_BODY, description="What is under way.")
    blockers: str = Field(default="", max_length=MAX_BODY, description="What stands in the way.")
    next_steps: str = Field(
        default="", max_length=MAX_BODY, description="What the next shift does."
    )
    date: str | None = Field(
        default=None,
        min_length=10,
        max_length=10,
        description="YYYY-MM-DD; today in the source time zone if left out.",
    )
    source_time_zone: str | None = Field(
        default=None, max_length=64, description="Defaults to the project's shift A zone."
    )
    destination_time_zone: str | None = Field(
        default=None, max_length=64, description="Defaults to the project's shift B zone."
    )
    linked_task_ids: list[str] = Field(
        default_factory=list, max_length=MAX_LINKED_TASKS, description="Task ids or keys."
    )
    recipients: list[str] = Field(
        default_factory=list,
        max_length=MAX_RECIPIENTS,
        description="People of the project to hand over to (ids or emails).",
    )
    send_notification: bool = Field(
        default=False, description="Tell the recipients in the app (as their settings allow)."
    )
    send_email: bool = Field(
        default=False, description="Email the recipients (as their settings allow)."
    )
    idempotency_key: IdempotencyKey = None


class UpdateHandoff(Args):
    handoff_id: str = HandoffRef
    workspace_id: WorkspaceId = None
    expected_updated_at: str = Expected
    completed: str | None = Body
    in_progress: str | None = Body
    blockers: str | None = Body
    next_steps: str | None = Body
    linked_task_ids: list[str] | None = TaskRefs
    recipients: list[str] | None = People

    def changes(self) -> dict[str, Any]:
        """The fields sent (null included: it clears), by their service names."""
        names = ("completed", "in_progress", "blockers", "next_steps", "linked_task_ids",
                 "recipients")  # fmt: skip
        return {name: getattr(self, name) for name in names if self.given(name)}


class ListHandoffs(Args):
    project_id: ProjectRef = Field(validation_alias=TEAM)
    author: str | None = Person
    recipient: str | None = Person
    since: str | None = Field(
        default=None, min_length=10, max_length=10, description="YYYY-MM-DD, inclusive."
    )
    until: str | None = Field(
        default=None, min_length=10, max_length=10, description="YYYY-MM-DD, inclusive."
    )
    limit: int = Field(default=present.DEFAULT_PAGE, ge=1, le=present.MAX_PAGE)
    offset: Offset = 0


class GetHandoff(Args):
    handoff_id: str = HandoffRef


class ListActionItems(Args):
    handoff_id: str | None = Field(default=None, min_length=1, max_length=64)
    project_id: str | None = Field(
        default=None, min_length=1, max_length=200, validation_alias=TEAM
    )
    date: str | None = Day
    cursor: str | None = Field(default=None, min_length=1, max_length=500)
    limit: int = Field(default=present.DEFAULT_PAGE, ge=1, le=present.MAX_PAGE)


class GetActionItem(Args):
    action_item_id: str = ItemRef


class CreateActionItem(Args):
    handoff_id: str = HandoffRef
    workspace_id: WorkspaceId = None
    text: str = Field(min_length=1, max_length=MAX_ITEM_TEXT)
    assignee: str | None = Person
    status: ItemStatus = ItemStatus.OPEN
    due_date: str | None = Day
    idempotency_key: IdempotencyKey = None


class UpdateActionItem(Args):
    action_item_id: str = ItemRef
    workspace_id: WorkspaceId = None
    expected_updated_at: str = Expected
    text: str | None = Field(default=None, min_length=1, max_length=MAX_ITEM_TEXT)
    assignee: str | None = Person
    status: ItemStatus | None = Status
    due_date: str | None = Day

    def changes(self) -> dict[str, Any]:
        names = ("text", "assignee", "status", "due_date")
        return {
            name: (v.value if isinstance(v := getattr(self, name), ItemStatus) else v)
            for name in names
            if self.given(name)
        }


def create_handoff(call: Call, args: CreateHandoff) -> KeyedResult:
    return commands.create_handoff(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        bodies=Bodies(args.completed, args.in_progress, args.blockers, args.next_steps),
        day=args.date, source_time_zone=args.source_time_zone,
        destination_time_zone=args.destination_time_zone, linked_task_ids=args.linked_task_ids,
        recipients=args.recipients, idempotency_key=args.idempotency_key,
        send_notification=args.send_notification, send_email=args.send_email,
        answer=present.made_view(call.actor),
    )  # fmt: skip


def update_handoff(call: Call, args: UpdateHandoff) -> Reply:
    read = commands.update_handoff(
        call.db, call.actor, handoff_id=args.handoff_id, workspace_id=args.workspace_ref(),
        expected_updated_at=args.expected_updated_at, changes=args.changes(),
    )  # fmt: skip
    return Reply(present.handoff_answer(read, call.actor))


def list_handoffs(call: Call, args: ListHandoffs) -> Reply:
    page = queries.list_handoffs(
        call.db, call.actor, project=args.project_id, author=args.author,
        recipient=args.recipient, since=args.since, until=args.until, limit=args.limit,
        offset=args.offset,
    )  # fmt: skip
    return paged_reply(present.handoff_page_view(page), "handoffs", args.offset)


def _more_items(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    return "More action items: list_handoff_action_items with this cursor continues."


def get_handoff(call: Call, args: GetHandoff) -> Reply:
    read = queries.get_handoff(call.db, call.actor, handoff_id=args.handoff_id)
    body = present.handoff_answer(read, call.actor, ROWS_BUDGET)
    notes = [_more_items(body["handoff"]["actionItemsCursor"])]
    if body["handoff"].get("truncated"):
        notes.append(
            f"Too large for one answer: {', '.join(body['handoff']['truncated'])} cut short here. "
            f"GET /api/v1/handoffs/{args.handoff_id} (REST) or the web app shows it whole."
        )
    return Reply(body, " ".join(n for n in notes if n) or None)


def action_items_page(call: Call, args: ListActionItems, room: int | None = None) -> dict[str, Any]:
    """A page of action items, whole (as REST gives it) or within `room` bytes."""
    page = queries.list_handoff_action_items(
        call.db, call.actor, handoff_id=args.handoff_id, project=args.project_id, day=args.date,
        cursor=args.cursor, limit=args.limit,
    )  # fmt: skip
    return present.item_page_view(page, call.actor, room)


def list_handoff_action_items(call: Call, args: ListActionItems) -> Reply:
    body = action_items_page(call, args, ROWS_BUDGET)
    return Reply(body, _more_items(body["nextCursor"]))


def get_handoff_action_item(call: Call, args: GetActionItem) -> Reply:
    read = queries.get_handoff_action_item(call.db, call.actor, item_id=args.action_item_id)
    return Reply(present.item_answer(read))


def create_handoff_action_item(call: Call, args: CreateActionItem) -> KeyedResult:
    return commands.create_handoff_action_item(
        call.db, call.actor, handoff_id=args.handoff_id, workspace_id=args.workspace_ref(),
        text=args.text, assignee=args.assignee, status=args.status.value, due_date=args.due_date,
        idempotency_key=args.idempotency_key, answer=present.item_answer,
    )  # fmt: skip


def update_handoff_action_item(call: Call, args: UpdateActionItem) -> Reply:
    read = commands.update_handoff_action_item(
        call.db, call.actor, item_id=args.action_item_id, workspace_id=args.workspace_ref(),
        expected_updated_at=args.expected_updated_at, changes=args.changes(),
    )  # fmt: skip
    return Reply(present.item_answer(read))


# A handoff speaks in a person's name: agent tokens are refused, so never shown these tools.
HANDOFFS = Area(Toolset.HANDOFFS, people_only=True)

OPERATIONS = (
    HANDOFFS.write(
        "create_handoff",
        "Write a shift handoff",
        "Your handoff of a project for a day (one per person, project and day; the day is "
        "today in the source time zone, the project's shift A unless you name another): "
        f"completed, inProgress, blockers, nextSteps (each up to {MAX_BODY} characters), "
        "linked tasks and recipients (told only with sendNotification or sendEmail). A second "
        "one for the same day is refused with HANDOFF_ALREADY_EXISTS naming it: change that "
        "one with update_handoff.",
        CreateHandoff,
        keyed(create_handoff),
        Rest.created("/api/v1/projects/{project}/handoffs"),
        Cli(("handoff", "create")),
    ),
    HANDOFFS.edit(
        "update_handoff",
        "Change a handoff",
        "Change a handoff: fields left out stay, null clears one. Only its author changes "
        "the four bodies; anyone who may write on the project may change linkedTaskIds and "
        "recipients. expectedUpdatedAt is the updatedAt you read: if it changed since, "
        "nothing is written.",
        UpdateHandoff,
        update_handoff,
        Rest("PATCH", "/api/v1/handoffs/{handoff}"),
        Cli(("handoff", "update")),
    ),
    HANDOFFS.read(
        "list_handoffs",
        "List handoffs",
        "A project's handoffs, newest day first, without their bodies: filter by author, "
        "recipient and inclusive since/until dates.",
        ListHandoffs,
        list_handoffs,
        Rest("GET", "/api/v1/projects/{project}/handoffs"),
        Cli(("handoff", "list")),
    ),
    HANDOFFS.read(
        "get_handoff",
        "Read a handoff",
        "A handoff's bodies, the linked tasks you may open, and its first action items "
        "(actionItemsCursor continues).",
        GetHandoff,
        get_handoff,
        Rest("GET", "/api/v1/handoffs/{handoff}"),
        Cli(("handoff", "show")),
    ),
    HANDOFFS.read(
        "list_handoff_action_items",
        "List handoff action items",
        "Action items oldest first: one handoff's (handoffId), or those of a project's "
        "handoffs on one date (projectId and date). nextCursor continues.",
        ListActionItems,
        list_handoff_action_items,
        Rest("GET", "/api/v1/handoffs/{handoff}/action-items"),
        Cli(("action-item", "list")),
    ),
    HANDOFFS.read(
        "get_handoff_action_item",
        "Read an action item",
        "One handoff action item: text, assignee, status, due date.",
        GetActionItem,
        get_handoff_action_item,
        Rest("GET", "/api/v1/handoff-action-items/{item}"),
        Cli(("action-item", "show")),
    ),
    HANDOFFS.write(
        "create_handoff_action_item",
        "Add an action item",
        "A follow-up on a handoff: text, an assignee from the project, status (open, "
        "in_progress, done, cancelled) and a due date.",
        CreateActionItem,
        keyed(create_handoff_action_item),
        Rest.created("/api/v1/handoffs/{handoff}/action-items"),
        Cli(("handoff", "add-item")),
    ),
    HANDOFFS.edit(
        "update_handoff_action_item",
        "Change an action item",
        "Change an action item's text, assignee, status or due date (null clears the assignee "
        "or the due date). expectedUpdatedAt is the updatedAt you read.",
        UpdateActionItem,
        update_handoff_action_item,
        Rest("PATCH", "/api/v1/handoff-action-items/{item}"),
        Cli(("action-item", "update")),
    ),
)
