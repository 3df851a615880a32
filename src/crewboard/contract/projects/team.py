"""The team tool."""

from __future__ import annotations

from typing import Any

from crewboard.contract import args as a
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.projects import present
from crewboard.contract.reply import RESPONSE_BUDGET, Reply
from crewboard.domain.identity.access import Toolset


def list_team(call: Call, args: a.ListTeam) -> Reply:
    workspace = args.workspace_ref()
    teams = present.list_team(call.db, call.actor, project=args.project_id, workspace_id=workspace)
    kept, cut = present.fit_teams(teams, RESPONSE_BUDGET - 2048)
    body: dict[str, Any] = {"teams": kept}
    if len(kept) < len(teams):
        body["teamsTotal"] = len(teams)
    note = "Cut to fit the answer: pass projectId for one project's team." if cut else None
    return Reply(body, note)


BOARD = Area(Toolset.BOARD)

OPERATIONS = (
    BOARD.read(
        "list_team",
        "List the team",
        "AI and human roles, and people with their project role (you: true is you).",
        a.ListTeam,
        list_team,
        Rest("GET", "/api/v1/projects/{project}/team"),
        Cli(("team", "list")),
    ),
)
