"""The project state page tools."""

from __future__ import annotations

from crewboard.domain.identity.access import Scope, Toolset
from crewboard.mcp import args as a
from crewboard.mcp.render import Reply
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.services.projects import state


def get_project_state(call: Call, args: a.GetProjectState) -> Reply:
    workspace = args.workspace_ref()
    return Reply(
        state.get_project_state(
            call.db, call.actor, project=args.project_id, workspace_id=workspace
        )
    )


def update_project_state(call: Call, args: a.UpdateProjectState) -> Reply:
    saved = state.update_project_state(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_id,
        content=args.content,
        expected_revision=args.expected_revision,
    )
    note = "This save had already happened: this is its answer." if saved.get("replayed") else None
    return Reply(saved, note)


TOOLS = (
    ToolDef(
        name="get_project_state",
        title="Read the state page",
        description=(
            "Read the project's state page: where it stands, what is in progress and next, what "
            "waits for people, risks and working rules. Returns content, revision (0 while empty; "
            "pass it to update_project_state), who wrote it and when, canEdit and taskCounts. "
            "A working page, not accepted project memory."
        ),
        args=a.GetProjectState,
        toolset=Toolset.BOARD,
        run=get_project_state,
    ),
    ToolDef(
        name="update_project_state",
        title="Rewrite the state page",
        description=(
            "Replace the state page with the whole new text (at most 5000 characters), from the "
            "revision you read. If someone saved meanwhile it is refused with the current "
            "revision: read again and merge. Every version is kept. Retrying a lost answer with "
            "the same text and revision returns that save."
        ),
        args=a.UpdateProjectState,
        toolset=Toolset.BOARD,
        run=update_project_state,
        scopes=(Scope.TASKS_MANAGE,),
        read_only=False,
        idempotent=True,
    ),
)
