"""Claims with leases: an agent (or a person) holds a task for a while, so no one else works it.

`claim_task` takes one task, `claim_next_task` the best one the caller's seat may do, both in
one write transaction whose conditional upsert (`ClaimRepository.take`) decides who gets a
task: on PostgreSQL the candidate row is locked with SKIP LOCKED so concurrent callers spread
over the ready tasks, and the upsert re-checks the claim row under its lock; on SQLite write
transactions run one at a time (BEGIN IMMEDIATE). `renew_claims` moves leases on; a lease not
renewed lapses (`claim_lapses.py` records it). Writes that send `claimFence` are checked here
(`check_claim_fence`): a fence that is not the task's live claim is refused with CLAIM_LOST.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from crewboard.domain.board.claims import (
    Claim,
    ClaimedTask,
    ClaimEnd,
    Holder,
    check_lease_seconds,
    fence_holds,
    renewed_until,
)
from crewboard.domain.board.tasks import Task, TaskStatus
from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.errors import AlreadyExists, ClaimLost, NotFound, PermissionDenied
from crewboard.services.board.task_lookup import access_task
from crewboard.services.board.views import task_key
from crewboard.services.identity.access import (
    WorkspaceRef,
    access_project,
    require_signed_in_person,
)
from crewboard.services.notifications.notify import notify
from crewboard.services.seats import ai_seat_of
from crewboard.services.views import actor_name, iso, stamp_of
from crewboard.storage.board.claims import ClaimRepository
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

# What claim_next_task takes: tasks ready for an agent, and tasks in progress whose holder
# left them (its claim lapsed or was broken).
READY = (TaskStatus.READY_FOR_AI.value,)
RESUMABLE = (TaskStatus.IN_PROGRESS.value,)
MAX_TRIES = 50  # candidates one claim_next_task looks at before it answers "none"


def claim_holder(uow: UnitOfWork, actor: Actor) -> Holder:
    """The caller as a claim names it: its person, its token, and its AI seat if it has one."""
    seat = ai_seat_of(uow, actor)
    return Holder(
        user_id=actor.user_id,
        token_id=actor.token.id if actor.token else None,
        role_id=seat.id if seat else None,
    )


def holder_view(holder: Holder) -> dict[str, Any]:
    return {"userId": holder.user_id, "tokenId": holder.token_id, "roleId": holder.role_id}


def claim_view(claim: Claim) -> dict[str, Any]:
    """A claim on the wire (events and answers)."""
    view: dict[str, Any] = {
        "fence": claim.fence,
        "holder": holder_view(claim.holder),
        "claimedAt": iso(claim.claimed_at),
        "expiresAt": iso(claim.expires_at),
    }
    if claim.released_at is not None:
        view["releasedAt"] = iso(claim.released_at)
        view["ended"] = claim.end.value if claim.end else None
    return view


def record_claim_event(
    uow: UnitOfWork, type_: str, actor: Actor | None, project: Project, task: Task, *,
    claim: Claim,
) -> None:  # fmt: skip
    """A claim's event in the project's log, in the transaction that changed the claim: who
    did it (`by`: None for the system, a lapse), and the claim with its holder's names."""
    held = ClaimRepository(uow.conn).named(claim)
    names = {"by": held.name, "person": held.person, "tokenName": held.token_name,
             "seatName": held.seat_name}  # fmt: skip
    view = claim_view(claim)
    view["holder"] |= names
    uow.record_event(
        type_,
        actor=_SYSTEM if actor is None else actor.as_payload(),
        payload={
            **({} if actor is None else {"by": stamp_of(uow, actor)}),
            "task": {
                "id": task.id,
                "key": task_key(project, task),
                "number": task.number,
                "title": task.title,
                "status": task.status.value,
                "assigneeId": task.assignee_id,
                "revision": task.revision,
            },
            "claim": view,
        },
        project_id=project.id,
        workspace_id=project.workspace_id,
    )


def claim_lost(task: Task, claim: Claim | None, sent: int | None, now: datetime) -> ClaimLost:
    """CLAIM_LOST for a write or a release that is not the task's live claim's."""
    live = claim is not None and claim.live(now)
    holder = holder_view(claim.holder) if claim is not None and live else None
    why = "another caller holds it now" if holder else "no one holds it now"
    return ClaimLost(
        f"Your claim on this task is gone ({why}): its lease lapsed, a person broke it or it was "
        "released. Nothing was written; claim_task or claim_next_task claims it again.",
        {
            "taskId": task.id,
            "claimFence": sent,
            "currentFence": claim.fence if claim is not None else None,
            "holder": holder,
            "expiresAt": iso(claim.expires_at) if claim is not None and live else None,
        },
    )


def check_claim_fence(uow: UnitOfWork, actor: Actor, task: Task, fence: int | None) -> None:
    """A write that sent `claimFence` goes ahead only from the task's live claim.

    Raises:
        ClaimLost: the fence is not the live claim's, or another caller holds it.
    """
    if fence is None:
        return
    claim = ClaimRepository(uow.conn).get(task.id)
    if not fence_holds(claim, fence, claim_holder(uow, actor), uow.now):
        raise claim_lost(task, claim, fence, uow.now)


def let_go_on_hand_in(uow: UnitOfWork, actor: Actor, project: Project, task: Task) -> None:
    """A hand-in that moved its task to review ends the caller's live claim on it (released):
    the work is with the reviewers, and a check-in no longer keeps the task held."""
    claim = ClaimRepository(uow.conn).get(task.id)
    if claim is not None and claim.held_by(claim_holder(uow, actor), uow.now):
        _end(uow, actor, project, task, claim=claim, how=ClaimEnd.RELEASED)


def _answer(project: Project, task: Task, claim: Claim) -> ClaimedTask:
    return ClaimedTask(claim=claim, key=task_key(project, task), title=task.title)


def end_if_lapsed(uow: UnitOfWork, project: Project, task: Task, claim: Claim | None) -> bool:
    """Record the lapse of `claim` if its lease ran out and no one has yet: once, whichever
    node or caller gets there first (the conditional update decides). True when this did."""
    if claim is None or claim.released_at is not None or claim.live(uow.now):
        return False
    if not ClaimRepository(uow.conn).end(claim, ClaimEnd.LAPSED, uow.now):
        return False
    ended = replace(claim, released_at=uow.now, end=ClaimEnd.LAPSED)
    record_claim_event(uow, "task.claim_lapsed", None, project, task, claim=ended)
    _tell_lapsed(uow, project, task, ended)
    return True


def _tell_lapsed(uow: UnitOfWork, project: Project, task: Task, claim: Claim) -> None:
    """The task's owner, or else the project's writers, hear that its holder went silent."""
    people = (
        [task.human_owner_id]
        if task.human_owner_id
        else [
            user.id for user, role in uow.projects.members(project.id) if role.includes(Role.WRITE)
        ]
    )
    key = task_key(project, task)
    holder = ClaimRepository(uow.conn).named(claim).said
    notify(
        uow, recipients=people, kind="task.claim_lapsed", project_id=project.id,
        title=f"The claim of {holder} on {key} lapsed: it was not renewed in time",
        body=f"{key} “{task.title[:200]}” is free again for another agent or a person.",
        link=f"/p/{project.key}/tasks/{key}", source=f"claim:{task.id}:{claim.fence}",
        in_app=True, email=False,
    )  # fmt: skip


_SYSTEM: dict[str, Any] = {"kind": "system", "userId": None, "tokenId": None}


def _take(
    uow: UnitOfWork, actor: Actor, project: Project, task: Task, *, holder: Holder, seconds: int
) -> Claim | None:
    """Claim `task` for `holder`, recording the lapse of the claim it replaces; None when a
    live claim holds it."""
    repo = ClaimRepository(uow.conn)
    end_if_lapsed(uow, project, task, repo.get(task.id))
    claim = repo.take(task, holder, uow.now, seconds)
    if claim is not None:
        record_claim_event(uow, "task.claimed", actor, project, task, claim=claim)
    return claim


def claim_task(
    db: Database,
    actor: Actor,
    *,
    task: str,
    project: str | None = None,
    workspace_id: WorkspaceRef,
    lease_seconds: int | None = None,
) -> ClaimedTask:
    """Claim one task for `lease_seconds`; claiming a task the caller holds renews it.

    Raises:
        AlreadyExists: another caller's live claim holds it (details name the holder).
        ValidationFailed: leaseSeconds out of range. NotFound, PermissionDenied.
    """
    seconds = check_lease_seconds(lease_seconds)

    def work(uow: UnitOfWork) -> ClaimedTask:
        found, proj = access_task(
            uow, actor, task, project=project, scope=Scope.TASKS_MANAGE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip
        holder = claim_holder(uow, actor)
        repo = ClaimRepository(uow.conn)
        current = repo.get(found.id)
        if current is not None and current.held_by(holder, uow.now):
            renewed = replace(current, lease_seconds=seconds)
            return _answer(proj, found, _extend(uow, found, renewed))
        claim = _take(uow, actor, proj, found, holder=holder, seconds=seconds)
        if claim is None:
            raise _taken(proj, found, repo.get(found.id))
        return _answer(proj, found, claim)

    return db.write(work)


def _extend(uow: UnitOfWork, task: Task, claim: Claim) -> Claim:
    """Renew `claim` by its lease from now.

    Raises:
        ClaimLost: it ended since it was read (on PostgreSQL, by a concurrent writer)."""
    if not ClaimRepository(uow.conn).extend(claim, uow.now):
        raise claim_lost(task, ClaimRepository(uow.conn).get(task.id), claim.fence, uow.now)
    return replace(claim, expires_at=renewed_until(claim, uow.now))


def _taken(project: Project, task: Task, claim: Claim | None) -> AlreadyExists:
    return AlreadyExists(
        f"{task_key(project, task)} is claimed by another caller until its lease runs out or "
        "it is released; claim_next_task finds a free task.",
        {
            "taskId": task.id,
            "holder": holder_view(claim.holder) if claim else None,
            "currentFence": claim.fence if claim else None,
            "expiresAt": iso(claim.expires_at) if claim else None,
        },
    )


def claim_next_task(
    db: Database,
    actor: Actor,
    *,
    project: str,
    workspace_id: WorkspaceRef,
    lease_seconds: int | None = None,
) -> ClaimedTask | None:
    """Claim the best task the caller may do now (None when there is none), in one transaction.

    Best: ready for an agent (or in progress and left by its last holder), assigned to no one
    or to the caller's seat or person, with no live claim and no unfinished blocker; the
    highest priority first, then the oldest.

    Raises:
        ValidationFailed: leaseSeconds out of range. NotFound, PermissionDenied.
    """
    seconds = check_lease_seconds(lease_seconds)

    def work(uow: UnitOfWork) -> ClaimedTask | None:
        proj = access_project(
            uow, actor, project, scope=Scope.TASKS_MANAGE, role=Role.WRITE,
            workspace_id=workspace_id,
        ).project  # fmt: skip
        holder = claim_holder(uow, actor)
        # An agent does its seat's tasks; a person (or their personal token) their own too.
        person = None if actor.is_agent else holder.user_id
        assignees = [x for x in (holder.role_id, person) if x]
        repo = ClaimRepository(uow.conn)
        tried: list[str] = []
        while len(tried) < MAX_TRIES:
            found = repo.next_candidate(
                proj.id, uow.now, assignees=assignees, ready=READY, resumable=RESUMABLE,
                skip=tried,
            )  # fmt: skip
            if found is None:
                return None
            claim = _take(uow, actor, proj, found, holder=holder, seconds=seconds)
            if claim is not None:
                return _answer(proj, found, claim)
            tried.append(found.id)  # taken by a concurrent caller since the look-up
        return None

    return db.write(work)


def release_task(
    db: Database,
    actor: Actor,
    *,
    task: str,
    project: str | None = None,
    workspace_id: WorkspaceRef,
    claim_fence: int | None = None,
) -> ClaimedTask:
    """Let go of the caller's claim on a task (the one `claim_fence` names, when sent).

    Raises:
        ClaimLost: the caller holds no live claim on it, or not that one.
        NotFound, PermissionDenied, ValidationFailed.
    """

    def work(uow: UnitOfWork) -> ClaimedTask:
        found, proj = access_task(
            uow, actor, task, project=project, scope=Scope.TASKS_MANAGE, role=Role.WRITE,
            workspace_id=workspace_id,
        )  # fmt: skip
        claim = ClaimRepository(uow.conn).get(found.id)
        held = claim is not None and claim.held_by(claim_holder(uow, actor), uow.now)
        if claim is None or not held or claim_fence not in (None, claim.fence):
            raise claim_lost(found, claim, claim_fence, uow.now)
        return _end(uow, actor, proj, found, claim=claim, how=ClaimEnd.RELEASED)

    return db.write(work)


def break_claim(
    db: Database, actor: Actor, *, task: str, project: str | None = None, fence: int | None = None
) -> ClaimedTask:
    """A person (write role) takes a task's live claim away from its holder: the task is free
    again, and the holder's next write with that fence is refused (CLAIM_LOST). With `fence`,
    only that claim (a page shows the claim it read).

    Raises:
        PermissionDenied: through a token (a person decides), or below the write role.
        NotFound: no such task, or it has no live claim (with that fence).
    """
    require_signed_in_person(actor, "Breaking a claim")

    def work(uow: UnitOfWork) -> ClaimedTask:
        found, proj = access_task(
            uow, actor, task, project=project, scope=Scope.TASKS_MANAGE, role=Role.WRITE
        )
        claim = ClaimRepository(uow.conn).get(found.id)
        if claim is None or not claim.live(uow.now) or fence not in (None, claim.fence):
            raise NotFound(
                f"{task_key(proj, found)} has no live claim to break"
                + (" with that fence." if fence is not None else "."),
                {"resource": "claim", "taskId": found.id, "currentFence": claim and claim.fence},
            )
        return _end(uow, actor, proj, found, claim=claim, how=ClaimEnd.BROKEN)

    return db.write(work)


def _end(
    uow: UnitOfWork, actor: Actor, project: Project, task: Task, *, claim: Claim, how: ClaimEnd
) -> ClaimedTask:
    if not ClaimRepository(uow.conn).end(claim, how, uow.now):
        raise claim_lost(task, ClaimRepository(uow.conn).get(task.id), claim.fence, uow.now)
    ended = replace(claim, released_at=uow.now, end=how)
    event = "task.claim_broken" if how is ClaimEnd.BROKEN else "task.claim_released"
    record_claim_event(uow, event, actor, project, task, claim=ended)
    if how is ClaimEnd.BROKEN and claim.holder.user_id != actor.user_id:
        _tell_broken(uow, actor, project, task, ended)
    return _answer(project, task, ended)


def _tell_broken(uow: UnitOfWork, actor: Actor, project: Project, task: Task, claim: Claim) -> None:
    """The person behind a broken claim (the one whose token held it) hears who broke it."""
    key = task_key(project, task)
    holder = ClaimRepository(uow.conn).named(claim).said
    notify(
        uow, recipients=[claim.holder.user_id], kind="task.claim_broken", project_id=project.id,
        title=f"{actor_name(uow, actor)} broke the claim of {holder} on {key}",
        body=f"{key} “{task.title[:200]}” is free again; a write sent with claim "
        f"{claim.fence} is refused.",
        link=f"/p/{project.key}/tasks/{key}", source=f"claim:{task.id}:{claim.fence}",
        in_app=True, email=False,
    )  # fmt: skip


def renew_claims(
    db: Database,
    actor: Actor,
    *,
    workspace_id: WorkspaceRef,
    task: str | None = None,
) -> list[ClaimedTask]:
    """Renew the caller's live claims, each by its own lease from now: one task's, or all of
    them. A lease that already ran out is not brought back.

    Raises:
        ClaimLost: `task` named and the caller holds no live claim on it.
        NotFound, PermissionDenied, ValidationFailed.
    """

    def work(uow: UnitOfWork) -> list[ClaimedTask]:
        holder = claim_holder(uow, actor)
        if task is None:
            live = ClaimRepository(uow.conn).live_of(holder, uow.now)
            return _renew_all(uow, actor, live)
        found, proj = access_task(
            uow, actor, task, scope=Scope.TASKS_MANAGE, role=Role.WRITE, workspace_id=workspace_id
        )
        claim = ClaimRepository(uow.conn).get(found.id)
        if claim is None or not claim.held_by(holder, uow.now):
            raise claim_lost(found, claim, None, uow.now)
        return [_answer(proj, found, _extend(uow, found, claim))]

    return db.write(work)


def _renew_all(uow: UnitOfWork, actor: Actor, claims: list[Claim]) -> list[ClaimedTask]:
    """Renew each claim in a project the caller may still write to."""
    tasks = uow.tasks.get_many(c.task_id for c in claims)
    projects: dict[str, Project | None] = {}
    renewed = []
    for claim in claims:
        if claim.project_id not in projects:
            projects[claim.project_id] = _writable(uow, actor, claim.project_id)
        proj, found = projects[claim.project_id], tasks.get(claim.task_id)
        if proj is not None and found is not None:
            renewed.append(_answer(proj, found, _extend(uow, found, claim)))
    return renewed


def _writable(uow: UnitOfWork, actor: Actor, project_id: str) -> Project | None:
    try:
        return access_project(
            uow, actor, project_id, scope=Scope.TASKS_MANAGE, role=Role.WRITE
        ).project
    except (NotFound, PermissionDenied):
        return None
