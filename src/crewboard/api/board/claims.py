"""REST for claims where a route takes its arguments its own way: letting go of a claim is a
DELETE whose optional arguments come as a JSON body, as on the other DELETE routes (a write's
arguments never ride in a query string)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from crewboard.api.common import Endpoint, parse_args, read_body, run_service, workspace_of
from crewboard.api.operations import endpoint_for
from crewboard.contract.args import Args, ClaimFence, WorkspaceId
from crewboard.contract.board.claims import claimed
from crewboard.services.board import claims


class ReleaseBody(Args):
    """The optional body of DELETE /api/v1/tasks/{task}/claim."""

    workspace_id: WorkspaceId = None
    claim_fence: ClaimFence = None


async def release_task(request: Request) -> dict[str, Any]:
    data = await read_body(request)
    body = parse_args(ReleaseBody, data)
    task = request.path_params["task"]
    return await run_service(
        request,
        lambda db, actor: {
            "claim": claimed(
                claims.release_task(
                    db, actor, task=task, workspace_id=workspace_of(data),
                    claim_fence=body.claim_fence,
                )
            )
        },
    )  # fmt: skip


ENDPOINTS: tuple[Endpoint, ...] = (
    endpoint_for(
        "release_task",
        release_task,
        "Let go of your claim on a task (optional body: workspaceId, claimFence)",
        ReleaseBody,
    ),
)
