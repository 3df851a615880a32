"""The activity stream and inbox messages."""

from __future__ import annotations

from pydantic import Field

from crewboard.contract.args import Args, IdempotencyKey, ProjectRef, WorkspaceId
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import Reply, fit_rows
from crewboard.contract.review.present_activity import entry_view
from crewboard.contract.review.present_inbox import posted_view
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.services.review import activity, messages


class ListActivity(Args):
    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: WorkspaceId = None
    limit: int = Field(default=20, ge=1, le=activity.MAX_LIMIT)
    since: str | None = Field(
        default=None,
        min_length=1,
        max_length=activity.MAX_CURSOR,
        description="A cursor: only what came after it, oldest first.",
    )
    mine: bool = Field(
        default=False,
        description="Your hand-ins and what people answered you.",
    )
    task_id: str | None = Field(default=None, max_length=200)


class PostMessage(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId = None
    participant_id: str = Field(
        min_length=1,
        max_length=200,
        description="A role or user id from list_team.",
    )
    body: str = Field(
        min_length=1,
        max_length=messages.MAX_BODY,
    )
    task_id: str | None = Field(default=None, max_length=200)
    idempotency_key: IdempotencyKey = None


def list_activity(call: Call, args: ListActivity) -> Reply:
    found = activity.list_activity(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        limit=args.limit, since=args.since, mine=args.mine, task=args.task_id,
    )  # fmt: skip
    entries = [entry_view(e) for e in found.entries]
    kept = fit_rows(entries)
    cursor = found.cursor
    if len(kept) < len(entries) and args.since is not None:
        cursor = activity.next_cursor(found.entries[: len(kept)], args.since, oldest_first=True)
    note = (
        f"cursor: {cursor}\nPass it as since to get only what comes after, oldest first; "
        "keep passing the cursor each answer gives."
    )
    return Reply({"entries": kept, "cursor": cursor}, note)


def post_message(call: Call, args: PostMessage) -> Reply:
    result = messages.post_message(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        participant_id=args.participant_id, body=args.body, task=args.task_id,
        idempotency_key=args.idempotency_key, answer=posted_view,
    )  # fmt: skip
    note = "This key was used before: this is the original answer." if result.replayed else None
    return Reply(result.body, note)


# Reading the stream needs only `read`; a message needs messages:write.
REVIEW = Area(Toolset.REVIEW, write_scopes=(Scope.MESSAGES_WRITE,))

OPERATIONS = (
    REVIEW.read(
        "list_activity",
        "Follow the activity",
        "What happened, newest first: task changes, notes, proposals, messages, hand-ins with "
        "people's decisions. mine: your hand-ins and what people answered you. Pass the cursor "
        "as since for what is new.",
        ListActivity,
        list_activity,
        Rest("GET", "/api/v1/projects/{project}/activity"),
        Cli(("activity", "list")),
    ),
    REVIEW.write(
        "post_message",
        "Message a participant",
        "Write into a participant's inbox thread (a role or person from list_team), optionally "
        "about a task. It changes nothing else.",
        PostMessage,
        post_message,
        Rest.created("/api/v1/projects/{project}/messages"),
        Cli(("message", "send")),
    ),
)
