"""Wire forms of records (camelCase, ISO 8601 times), shared by every door and the ledger."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from crewboard.domain.identity.access import Role
from crewboard.domain.identity.naming import name_of
from crewboard.domain.identity.records import Actor, ApiToken, SeatState, TokenSeat, User
from crewboard.domain.projects import Project, Workspace, WorkspaceRole
from crewboard.services.seats import ai_seat_of
from crewboard.storage.uow import UnitOfWork


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def event_view(row: dict[str, Any]) -> dict[str, Any]:
    """An event of the log as outside clients get it (live streams, webhooks): its id, type,
    project and task, time, who, and payload."""
    return {
        "id": row["id"],
        "type": row["type"],
        "projectId": row["project_id"],
        "taskId": row.get("task_id"),
        "at": iso(row["created_at"]),
        "actor": row.get("actor"),
        "payload": row.get("payload"),
    }


def user_view(user: User) -> dict[str, Any]:
    return {
        "id": user.id,
        "email": user.email,
        "displayName": user.display_name,
        "isOwner": user.is_owner,
        "createdAt": iso(user.created_at),
    }


def project_view(project: Project, viewer_role: Role | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": project.id,
        "key": project.key,
        "workspaceId": project.workspace_id,
        "name": project.name,
        "goal": project.goal,
        "phase": project.phase,
        "status": str(project.status),
        "description": project.description,
        "type": str(project.type),
        "collections": list(project.collections),
        "archived": project.archived,
        "archivedAt": iso(project.archived_at),
        "createdAt": iso(project.created_at),
        "updatedAt": iso(project.updated_at),
    }
    if viewer_role is not None:
        view["viewerRole"] = str(viewer_role)
    return view


def token_view(token: ApiToken, seat: TokenSeat | None = None) -> dict[str, Any]:
    """A token on the wire; `seat` is how an agent token's seat stands (see services/seats),
    None for other tokens or when the caller did not look it up."""
    return {
        "id": token.id,
        "name": token.name,
        "kind": str(token.kind),
        "userId": token.user_id,
        "scopes": sorted(token.scopes),
        "projectId": token.project_id,
        "role": str(token.role) if token.role else None,
        "toolsets": [str(t) for t in token.toolsets],
        "prefix": token.display_prefix,
        "createdAt": iso(token.created_at),
        "lastUsedAt": iso(token.last_used_at),
        "revokedAt": iso(token.revoked_at),
        "seatId": token.seat_id,
        "seat": None
        if seat is None
        else {"state": str(seat.state), "id": seat.id, "name": seat.name},
    }


def seat_note(seat: TokenSeat) -> str:
    """How the CLI and the web app word an agent token's seat."""
    match seat.state:
        case SeatState.CHOSEN:
            return f"seat {seat.name}"
        case SeatState.ONLY:
            return f"no seat chosen: acts as {seat.name}, the project's only AI seat"
        case SeatState.REMOVED:
            return f"no seat: its seat {seat.name or seat.id} was removed"
    return "no seat: the project has no single AI seat"


def workspace_view(workspace: Workspace, role: WorkspaceRole | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": workspace.id,
        "name": workspace.name,
        "createdAt": iso(workspace.created_at),
    }
    if role is not None:
        view["viewerRole"] = str(role)
    return view


def actor_stamp(actor: Actor) -> dict[str, Any]:
    """Who did it, as records keep it: the person, and the token's name when one was used (an
    agent shows as its token, not only as the person who issued it)."""
    stamp = {**actor.as_payload(), "displayName": actor.display_name}
    if actor.token is not None:
        stamp["tokenName"] = actor.token.name
    return stamp


def who_of(stamp: dict[str, Any] | None) -> str:
    """How a message names who did something, from its stamp (the one rule: `name_of`)."""
    return name_of(stamp)


def actor_name(uow: UnitOfWork, actor: Actor) -> str:
    """How a notification or message names the one acting now: "Owner", "Owner via laptop",
    "night agent (for Owner)"."""
    return name_of(stamp_of(uow, actor))


def stamp_of(uow: UnitOfWork, actor: Actor) -> dict[str, Any]:
    """The author stamp of what an agent writes (hand-ins, questions, proposals, messages):
    `actor_stamp` plus the AI seat the token acts as, kept at write time so the card shows the
    seat even after the token is renamed or revoked."""
    stamp = actor_stamp(actor)
    seat = ai_seat_of(uow, actor)
    if seat is not None:
        stamp |= {"roleId": seat.id, "roleName": seat.name, "roleKind": str(seat.kind)}
    return stamp
