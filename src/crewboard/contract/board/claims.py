"""Board tools for sharing a board between agents: claims on tasks, held by a lease."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from crewboard.contract.args import Args, ClaimFence, WorkspaceId
from crewboard.contract.board.tasks import TaskRef
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import Reply
from crewboard.domain.board.claims import LEASE_DEFAULT, LEASE_MAX, LEASE_MIN, ClaimedTask
from crewboard.domain.identity.access import Toolset
from crewboard.services.board import claims

LeaseSeconds = Annotated[int, Field(ge=LEASE_MIN, le=LEASE_MAX)]


class ClaimTask(Args):
    task_id: TaskRef
    workspace_id: WorkspaceId = None
    lease_seconds: LeaseSeconds = LEASE_DEFAULT


class ReleaseTask(Args):
    task_id: TaskRef
    workspace_id: WorkspaceId = None
    claim_fence: ClaimFence = None


class RenewClaims(Args):
    task_id: str | None = Field(default=None, max_length=200)
    workspace_id: WorkspaceId = None


class ClaimNextTask(Args):
    project_id: str = Field(min_length=1, max_length=200)
    workspace_id: WorkspaceId = None
    lease_seconds: LeaseSeconds = LEASE_DEFAULT


def claimed(found: ClaimedTask) -> dict[str, Any]:
    """A claim as the claim tools answer it: the task, the fence to send with writes, the
    holder and the lease."""
    view = claims.claim_view(found.claim)
    return {"taskId": found.claim.task_id, "key": found.key, "title": found.title, **view}


def claim_task(call: Call, args: ClaimTask) -> Reply:
    found = claims.claim_task(
        call.db,
        call.actor,
        task=args.task_id,
        workspace_id=args.workspace_ref(),
        lease_seconds=args.lease_seconds,
    )
    return Reply({"claim": claimed(found)}, _RENEW)


def release_task(call: Call, args: ReleaseTask) -> Reply:
    found = claims.release_task(
        call.db,
        call.actor,
        task=args.task_id,
        workspace_id=args.workspace_ref(),
        claim_fence=args.claim_fence,
    )
    return Reply({"claim": claimed(found)})


def renew_claims(call: Call, args: RenewClaims) -> Reply:
    found = claims.renew_claims(
        call.db,
        call.actor,
        workspace_id=args.workspace_ref(),
        task=args.task_id,
    )
    return Reply({"claims": [claimed(c) for c in found]})


def claim_next_task(call: Call, args: ClaimNextTask) -> Reply:
    found = claims.claim_next_task(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_ref(),
        lease_seconds=args.lease_seconds,
    )
    if found is None:
        return Reply({"claim": None}, "No task is free for you now; try again later.")
    return Reply({"claim": claimed(found)}, _RENEW)


_RENEW = (
    "Check in with get_updates (or renew_claims) before expiresAt to keep it; send claimFence "
    "with your writes."
)


# A claim tool is a board write of the agent's loop, not keyed: claiming, renewing or
# releasing again changes nothing more; claiming the next task again takes another one.
BOARD = Area(Toolset.BOARD)
# The check-in renews an agent's leases; renewing by hand is for a caller without it.
PLANNING = Area(Toolset.PLANNING)

# fmt: off
OPERATIONS = (
    BOARD.write("claim_task", "Claim a task",
                "Hold a task so no other agent takes it; send its fence as claimFence.",
                ClaimTask, claim_task, Rest("POST", "/api/v1/tasks/{task}/claim"),
                Cli(("task", "claim"))),
    BOARD.write("release_task", "Release a claim", "Let go of your claim on a task.",
                ReleaseTask, release_task, Rest("DELETE", "/api/v1/tasks/{task}/claim"),
                Cli(("task", "release"))),
    PLANNING.write("renew_claims", "Renew claims", "Renew your live claims (one task's, or all).",
                RenewClaims, renew_claims, Rest("POST", "/api/v1/claims/renew"),
                Cli(("task", "renew"))),
    BOARD.write("claim_next_task", "Claim next task", "Claim the best free task your role may do.",
                ClaimNextTask, claim_next_task,
                Rest("POST", "/api/v1/projects/{project}/claims/next"), Cli(("task", "claim-next")),
                idempotent=False),
)
# fmt: on
