"""The team tool."""

from __future__ import annotations

from crewboard.domain.identity.access import Toolset
from crewboard.mcp import args as a
from crewboard.mcp.render import Reply
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.services.projects import team


def list_team(call: Call, args: a.ListTeam) -> Reply:
    workspace = args.workspace_ref()
    teams = team.list_team(call.db, call.actor, project=args.project_id, workspace_id=workspace)
    return Reply({"teams": teams})


TOOLS = (
    ToolDef(
        name="list_team",
        title="List the team",
        description=(
            "Each project's team (or one project's): its active roles (id, name, role, kind ai or "
            "human, memberUserId for a seat a person holds, model, effort, rank, level, xp) and "
            "the people who can open it (userId, displayName, projectRole, you: true for yourself)."
        ),
        args=a.ListTeam,
        toolset=Toolset.BOARD,
        run=list_team,
    ),
)
