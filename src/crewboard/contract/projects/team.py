"""The team tool."""

from __future__ import annotations

from typing import Any

from crewboard.contract import args as a
from crewboard.contract.operation import Call, Operation, Rest
from crewboard.contract.reply import RESPONSE_BUDGET, Reply, compact
from crewboard.domain.identity.access import Toolset
from crewboard.services.projects import team
from crewboard.services.text_windows import leading_rows


def list_team(call: Call, args: a.ListTeam) -> Reply:
    workspace = args.workspace_ref()
    teams = team.list_team(call.db, call.actor, project=args.project_id, workspace_id=workspace)
    kept, cut = _fit(teams, RESPONSE_BUDGET - 2048)
    body: dict[str, Any] = {"teams": kept}
    if len(kept) < len(teams):
        body["teamsTotal"] = len(teams)
    note = "Cut to fit the answer: pass projectId for one project's team." if cut else None
    return Reply(body, note)


def _fit(teams: list[dict[str, Any]], room: int) -> tuple[list[dict[str, Any]], bool]:
    """The teams that fit in `room` bytes; a team too big keeps its leading roles (three
    quarters of what is left) and people, counting the rest in rolesTotal and peopleTotal."""
    kept: list[dict[str, Any]] = []
    for item in teams:
        size = len(compact(item).encode()) + 1
        if size <= room:
            kept.append(item)
            room -= size
            continue
        head = {k: v for k, v in item.items() if k not in ("roles", "people")}
        left = room - len(compact({**head, "roles": [], "people": []}).encode()) - 64
        if left <= 0:
            return kept, True
        roles = leading_rows(item["roles"], left * 3 // 4)
        people = leading_rows(item["people"], left - len(compact(roles).encode()))
        kept.append(
            {
                **head,
                "roles": roles,
                "rolesTotal": len(item["roles"]),
                "people": people,
                "peopleTotal": len(item["people"]),
            }
        )
        return kept, True
    return kept, False


OPERATIONS = (
    Operation(
        name="list_team",
        title="List the team",
        description=(
            "The team: roles (id, ai or human, model, effort, rank, level) and people with their "
            "project role (you: true is you)."
        ),
        args=a.ListTeam,
        toolset=Toolset.BOARD,
        run=list_team,
        rest=Rest("GET", "/api/v1/projects/{project}/team"),
        # (REST above, CLI below: the other doors of this operation)
        cli=None,
    ),
)
