"""The activity stream and inbox messages."""

from __future__ import annotations

from pydantic import Field

from crewboard.domain.identity.access import Scope, Toolset
from crewboard.mcp.args import Args, IdempotencyKey, ProjectRef, WorkspaceId
from crewboard.mcp.render import Reply, fit_rows
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.services.review import activity, messages


class ListActivity(Args):
    project_id: str | None = Field(
        default=None, max_length=200, description="Only this project (id or key)."
    )
    workspace_id: str | None = Field(
        default=None, max_length=200, description="The project's workspace id, or null for private."
    )
    limit: int = Field(
        default=20, ge=1, le=activity.MAX_LIMIT, description="Entries (1-100, default 20)."
    )
    since: str | None = Field(
        default=None,
        min_length=1,
        max_length=activity.MAX_CURSOR,
        description="A cursor from an earlier list_activity: only what came after it, oldest first.",
    )
    mine: bool = Field(
        default=False, description="Only your own hand-ins and the decisions about them."
    )
    task_id: str | None = Field(
        default=None, max_length=200, description="Only entries about this task (id or key)."
    )


class PostMessage(Args):
    project_id: ProjectRef
    workspace_id: WorkspaceId
    participant_id: str = Field(
        min_length=1,
        max_length=200,
        description="Whose thread: a team role id (rol_…) or a member's user id (usr_…) from list_team.",
    )
    body: str = Field(
        min_length=1,
        max_length=messages.MAX_BODY,
        description="Markdown, at most 20,000 characters.",
    )
    task_id: str | None = Field(
        default=None, max_length=200, description="A task of the same project it is about."
    )
    idempotency_key: IdempotencyKey = None


def list_activity(call: Call, args: ListActivity) -> Reply:
    entries, cursor = activity.list_activity(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_ref(),
        limit=args.limit,
        since=args.since,
        mine=args.mine,
        task=args.task_id,
    )
    kept = fit_rows(entries)
    if len(kept) < len(entries) and args.since is not None:
        cursor = activity.next_cursor(kept, args.since, oldest_first=True)
    note = (
        f"cursor: {cursor}\nPass it as since to get only what comes after, oldest first; "
        "keep passing the cursor each answer gives."
    )
    return Reply({"entries": kept, "cursor": cursor}, note)


def post_message(call: Call, args: PostMessage) -> Reply:
    result = messages.post_message(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_id,
        participant_id=args.participant_id,
        body=args.body,
        task=args.task_id,
        idempotency_key=args.idempotency_key,
    )
    note = "This key was used before: this is the original answer." if result.replayed else None
    return Reply(result.body, note)


TOOLS = (
    ToolDef(
        name="list_activity",
        title="Follow the activity",
        description=(
            "What happened lately in your projects, newest first: task changes, notes, proposals, "
            "messages, and AI hand-ins with what a person decided about each (approved, rejected, "
            "revision requested with its follow-up task and a comment preview, saved to memory, "
            "accepted by a rule or returned to review, superseded by a newer hand-in). Hand-in "
            "entries give draftId, its current draftStatus and mine; your own also their "
            "idempotencyKey; never the draft text. Filter by projectId, taskId, or mine: true. "
            "The second text part gives a cursor: pass it as since for only newer entries, "
            "oldest first. limit 1-100, default 20."
        ),
        args=ListActivity,
        toolset=Toolset.REVIEW,
        run=list_activity,
    ),
    ToolDef(
        name="post_message",
        title="Message a participant",
        description=(
            "Write into one participant's inbox thread on a project: a team role id or a "
            "member's user id from list_team, optionally about a task of that project (taskId). "
            "Signed with who you are; it changes no task, role or memory. Name the project's "
            "workspace (null when private); in a shared workspace an idempotencyKey is required, "
            "and a retry with it returns the first answer."
        ),
        args=PostMessage,
        toolset=Toolset.REVIEW,
        run=post_message,
        scopes=(Scope.MESSAGES_WRITE,),
        read_only=False,
        idempotent=True,
    ),
)
