"""The check-in tool: what concerns the caller since its last check-in, in a few bytes when
nothing does. The rules of what concerns whom are in `domain/board/updates.py`."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from crewboard.contract.args import Args, WorkspaceId
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import Reply
from crewboard.domain.board.updates import CheckIn, HeldClaim, Update
from crewboard.domain.identity.access import Role, Toolset
from crewboard.services.board import updates
from crewboard.services.views import iso


class GetUpdates(Args):
    project_id: str | None = Field(default=None, max_length=200)
    workspace_id: WorkspaceId = None
    cursor: str | None = Field(default=None, max_length=300)


def update_row(update: Update, names: dict[str, str]) -> dict[str, Any]:
    """One update on the wire: its kind, its task, who did it, then what it says."""
    row: dict[str, Any] = {"kind": str(update.kind)}
    if update.task_key:
        row["task"] = update.task_key
    values: dict[str, Any] = {
        "title": update.title,
        "priority": update.priority,
        "changed": list(update.changed) or None,
        "status": update.status,
        "text": update.text,
        "refId": update.ref_id,
        "by": names.get(update.by or "", update.by),
        "at": iso(update.at),
    }
    row |= {name: value for name, value in values.items() if value is not None}
    return row


def held_row(held: HeldClaim) -> dict[str, Any]:
    return {"task": held.task_key, "claimFence": held.fence, "expiresAt": iso(held.expires_at)}


def check_in_answer(check_in: CheckIn, cursor: str) -> dict[str, Any]:
    """The check-in's answer, in the shape of the other cursor lists (`hasMore`,
    `nextCursor`). Idle, it is the empty list and the cursor: nothing else."""
    names = dict(check_in.names)
    body: dict[str, Any] = {"updates": [update_row(u, names) for u in check_in.updates]}
    if check_in.held:
        body["claims"] = [held_row(h) for h in check_in.held]
    body["hasMore"] = check_in.more
    body["nextCursor"] = cursor
    return body


def get_updates(call: Call, args: GetUpdates) -> Reply:
    found, cursor = updates.get_updates(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_ref(),
        cursor=args.cursor,
    )
    note = "More updates wait: check in again with nextCursor." if found.more else None
    return Reply(check_in_answer(found, cursor), note)


BOARD = Area(Toolset.BOARD)

# A check-in reads, and renews the caller's claims (where it may write): a write that is safe
# to repeat, open to every caller that may read the project.
OPERATIONS = (
    BOARD.write(
        "get_updates",
        "Check in",
        "What concerns you since cursor: your tasks changed, answers, decisions, messages, "
        "mentions, lost claims, tasks free for you. Renews your claims. Keep nextCursor.",
        GetUpdates,
        get_updates,
        Rest("POST", "/api/v1/projects/{project}/updates"),
        Cli(("task", "updates")),
        scopes=(),
        write_role=Role.READ,
    ),
)
