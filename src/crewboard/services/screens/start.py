"""The first-run page of a project: how far a new owner got in setting it up — an agent
connected (a token of theirs that has been used), a first task, a first hand-in."""

from __future__ import annotations

from dataclasses import dataclass

from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import Actor
from crewboard.services.identity.access import access_project, require_signed_in_person
from crewboard.services.identity.tokens import list_tokens
from crewboard.services.review.decisions import drafts_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork


@dataclass(frozen=True)
class StartScreen:
    """What the project has so far: tokens (made, and used by a client), tasks, hand-ins and
    the newest hand-in's id."""

    tokens: int
    used_tokens: int
    tasks: int
    hand_ins: int
    first_hand_in: str | None
    can_write: bool


def start_screen(db: Database, actor: Actor, *, project: str) -> StartScreen:
    """How far this project's setup got, for the person opening its first-run page.

    Raises:
        PermissionDenied: through a token. NotFound: the project is not open to the actor.
    """
    require_signed_in_person(actor, "Reading the first-run page")

    def work(uow: UnitOfWork) -> tuple[str, int, int, str | None, bool]:
        access = access_project(uow, actor, project)
        found = access.project
        tasks = sum(uow.tasks.count_by_status(found.id).values())
        rows, total = drafts_of(uow).page([found.id], statuses=None, limit=1, offset=0)
        writes = access.role.includes(Role.WRITE)
        return found.id, tasks, total, (rows[0].id if rows else None), writes

    project_id, tasks, hand_ins, first, can_write = db.read(work)
    mine = [t.token for t in list_tokens(db, actor) if t.token.project_id in (None, project_id)]
    return StartScreen(
        tokens=len(mine),
        used_tokens=sum(1 for t in mine if t.last_used_at is not None),
        tasks=tasks,
        hand_ins=hand_ins,
        first_hand_in=first,
        can_write=can_write,
    )
