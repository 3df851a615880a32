"""get_board_summary: how the board looks, in one small answer."""

from __future__ import annotations

from typing import Any

from crewboard.contract import args as a
from crewboard.contract.board.present import board_cut
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import Reply
from crewboard.domain.identity.access import Toolset
from crewboard.services.board import summary
from crewboard.services.board.queries import BoardLine
from crewboard.services.views import iso

TITLE_CHARS = 80  # a listed task's title, cut (ending in "…")


class GetBoardSummary(a.Args):
    project_id: a.ProjectRef
    workspace_id: a.WorkspaceId = None


def board_summary_view(found: summary.BoardSummary) -> dict[str, Any]:
    """The summary as every door answers it (a few kilobytes whatever the board's size)."""
    key, names = found.project.key, found.names

    def name(assignee_id: str | None) -> str | None:
        return assignee_id and names.get(assignee_id, assignee_id)

    def task(line: BoardLine) -> dict[str, Any]:
        return {
            "key": f"{key}-{line.number}",
            "title": board_cut(line.title, TITLE_CHARS),
            "status": line.status,
            "assignee": name(line.assignee_id),
            "updatedAt": iso(line.updated_at),
        }

    assigned = [load for load in found.loads if load.assignee_id is not None]
    unassigned = next((load.open for load in found.loads if load.assignee_id is None), 0)
    return {
        "project": key,
        "total": sum(found.columns.values()),
        "columns": found.columns,
        "open": sum(load.open for load in found.loads),
        "overdue": found.overdue,
        "unassignedOpen": unassigned,
        "assignees": [
            {
                "id": load.assignee_id,
                "name": name(load.assignee_id),
                "open": load.open,
                "byStatus": load.by_status,
            }
            for load in assigned[: summary.ASSIGNEES]
        ],
        "assigneesTotal": len(assigned),
        "oldest": [task(line) for line in found.oldest],
        "blocked": [
            {**task(line), "blockedBy": [f"{key}-{n}" for n in found.blockers.get(line.id, [])]}
            for line in found.blocked
        ],
        "blockedTotal": found.blocked_total,
    }


def get_board_summary(call: Call, args: GetBoardSummary) -> Reply:
    found = summary.board_summary(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref()
    )
    body = board_summary_view(found)
    note = None
    if body["blockedTotal"] > len(body["blocked"]):
        note = (
            f"{body['blockedTotal']} tasks are held up; the first {len(body['blocked'])} by "
            "number are listed: list_tasks with status blocked finds those in the column."
        )
    return Reply(body, note)


PLANNING = Area(Toolset.PLANNING)

OPERATIONS = (
    PLANNING.read(
        "get_board_summary",
        "Summarise the board",
        "How the board looks in one small answer: tasks per column and per assignee, overdue, "
        "the longest untouched and the held-up tasks.",
        GetBoardSummary,
        get_board_summary,
        Rest("GET", "/api/v1/projects/{project}/board/summary"),
        Cli(("board", "summary")),
    ),
)
