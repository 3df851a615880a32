"""The project state page tools."""

from __future__ import annotations

from crewboard.contract import args as a
from crewboard.contract.operation import Call, Cli, Operation, Rest
from crewboard.contract.projects import present
from crewboard.contract.reply import Reply
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.services.projects import state


def get_project_state(call: Call, args: a.GetProjectState) -> Reply:
    workspace = args.workspace_ref()
    return Reply(
        present.get_project_state(
            call.db, call.actor, project=args.project_id, workspace_id=workspace
        )
    )


def update_project_state(call: Call, args: a.UpdateProjectState) -> Reply:
    saved = state.update_project_state(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_ref(),
        content=args.content,
        expected_revision=args.expected_revision,
    )
    note = "This save had already happened: this is its answer." if saved.replayed else None
    return Reply(present.state_saved_view(saved), note)


OPERATIONS = (
    Operation(
        name="get_project_state",
        title="Read the state page",
        description=(
            "Read the state page: where the project stands, what is next, what waits for people. "
            "Start here. revision is 0 while it is empty."
        ),
        args=a.GetProjectState,
        toolset=Toolset.BOARD,
        run=get_project_state,
        rest=Rest("GET", "/api/v1/projects/{project}/state"),
        cli=Cli(("state", "show")),
    ),
    Operation(
        name="update_project_state",
        title="Rewrite the state page",
        description=(
            "Replace the state page with the whole new text from the revision you read. On a "
            "conflict, read it again and merge. Every version is kept."
        ),
        args=a.UpdateProjectState,
        toolset=Toolset.BOARD,
        run=update_project_state,
        scopes=(Scope.TASKS_MANAGE,),
        read_only=False,
        idempotent=True,
        rest=Rest("PUT", "/api/v1/projects/{project}/state"),
        cli=Cli(("state", "write")),
    ),
)
