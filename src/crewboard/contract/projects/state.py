"""The project state page tools."""

from __future__ import annotations

from crewboard.contract import args as a
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.projects import present
from crewboard.contract.reply import Reply
from crewboard.domain.identity.access import Toolset
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
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        content=args.content, expected_revision=args.expected_revision,
    )  # fmt: skip
    note = "This save had already happened: this is its answer." if saved.replayed else None
    return Reply(present.state_saved_view(saved), note)


BOARD = Area(Toolset.BOARD)
PLANNING = Area(Toolset.PLANNING)

OPERATIONS = (
    BOARD.read(
        "get_project_state",
        "Read the state page",
        "Where the project stands and what is next. Start here; revision 0 means empty.",
        a.GetProjectState,
        get_project_state,
        Rest("GET", "/api/v1/projects/{project}/state"),
        Cli(("state", "show")),
    ),
    PLANNING.write(
        "update_project_state",
        "Rewrite the state page",
        "Replace the state page with the whole new text from the revision you read. On a "
        "conflict, read it again and merge. Every version is kept.",
        a.UpdateProjectState,
        update_project_state,
        Rest("PUT", "/api/v1/projects/{project}/state"),
        Cli(("state", "write")),
    ),
)
