"""The check-in (`get_updates`): what concerns the caller in a project since its cursor.

One call answers what the caller did not know yet (the rules are in `domain/board/updates.py`)
and renews the leases of its live claims, so an agent that checks in keeps the tasks it
works. With nothing new the answer is a few hundred bytes: a read of the events after the
cursor (an indexed range, usually empty) and of the caller's live claims, nothing more.

The first check-in (no cursor) starts at the newest event and names the best tasks free for
the caller and the claims it holds, so an agent knows where it stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from crewboard.domain.board.claims import Claim, ClaimedTask, Holder
from crewboard.domain.board.tasks import Task
from crewboard.domain.board.updates import (
    FIRST_READY,
    SCAN_EVENTS,
    CheckIn,
    Context,
    HeldClaim,
    Seen,
    Update,
    UpdateKind,
    Watcher,
    gather,
)
from crewboard.domain.identity.records import Actor
from crewboard.domain.notifications import mentions
from crewboard.domain.projects import Project
from crewboard.errors import ValidationFailed
from crewboard.services.board.claims import READY, RESUMABLE, renew_claims
from crewboard.services.board.views import task_key
from crewboard.services.cursors import seal, unseal
from crewboard.services.identity.access import WorkspaceRef, check_project_access
from crewboard.services.seats import ai_seat_of
from crewboard.storage.board.check_ins import first_look
from crewboard.storage.board.claims import ClaimRepository
from crewboard.storage.board.notes import NoteRepository
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

_CURSOR_KIND = "u1"


@dataclass(frozen=True)
class _Read:
    check_in: CheckIn
    live: list[Claim]


def get_updates(
    db: Database,
    actor: Actor,
    *,
    project: str | None,
    workspace_id: WorkspaceRef,
    cursor: str | None = None,
) -> tuple[CheckIn, str]:
    """What concerns the caller in `project` since `cursor` (none: start now), and the cursor
    to send next time. Renews the caller's live claims.

    Raises:
        ValidationFailed: no project named and the token is not bound to one; a cursor of
            another caller, project or kind.
        NotFound, PermissionDenied: the project is not open to the caller.
    """
    ref = project or actor.project_cap
    if ref is None:
        raise ValidationFailed.field(
            "projectId", "is required: this token is not bound to one project."
        )
    binding = {"project": ref}
    after = None
    if cursor is not None:
        match unseal(
            _CURSOR_KIND, cursor, caller=actor.principal, binding=binding, tool="get_updates"
        ):
            case [int(position)] if position >= 0:
                after = position
            case _:
                raise ValidationFailed.field(
                    "cursor", "is not a current cursor from get_updates; start without one."
                )

    def read(uow: UnitOfWork) -> _Read:
        holder = Holder(actor.user_id, actor.token.id if actor.token else None)
        look = None if "\x00" in ref else first_look(
            uow.conn, ref, after=after or 0, holder=holder, now=uow.now
        )  # fmt: skip
        found = look.found if look is not None else None
        proj = check_project_access(actor, ref, found, workspace_id=workspace_id).project
        assert look is not None  # noqa: S101 - check_project_access refused a missing project
        if after is not None and not look.news and not look.holds:
            return _Read(CheckIn([], after, False, []), [])  # idle: one statement, nothing more
        live = [
            c for c in ClaimRepository(uow.conn).live_of(holder, uow.now) if c.project_id == proj.id
        ]
        if after is None:
            return _Read(_first(uow, actor, proj), live)
        events = (
            uow.events.list_after(project_id=proj.id, after_id=after, limit=SCAN_EVENTS)
            if look.news
            else []
        )
        if not events:
            return _Read(CheckIn([], after, False, []), live)
        seen = [_seen(row) for row in events]
        watcher = _watcher(uow, actor)
        context, tasks = _context(uow, watcher, proj, seen, held={c.task_id for c in live})
        updates, last, more = gather(seen, watcher, context)
        updates = [_named(u, tasks) for u in updates]
        more = more or len(events) == SCAN_EVENTS
        return _Read(CheckIn(updates, last or after, more, [], _names(uow, updates)), live)

    found = db.read(read)
    check_in = found.check_in
    # The claims it holds are answered as the renewal leaves them (none held: none told).
    if found.live:
        renewed = renew_claims(db, actor, workspace_id=workspace_id)
        check_in = CheckIn(
            check_in.updates,
            check_in.position,
            check_in.more,
            [_held_of(c) for c in renewed if c.claim.project_id == found.live[0].project_id],
            check_in.names,
        )
    if cursor is not None and check_in.position == after:
        return check_in, cursor  # nothing read past it: the same cursor goes on
    next_cursor = seal(_CURSOR_KIND, (check_in.position,), caller=actor.principal, binding=binding)
    return check_in, next_cursor


def _seen(row: dict[str, object]) -> Seen:
    return Seen(
        id=int(row["id"]),  # type: ignore[call-overload]
        type=str(row["type"]),
        actor=row["actor"] or {},  # type: ignore[arg-type]
        payload=row["payload"] or {},  # type: ignore[arg-type]
        task_id=row["task_id"],  # type: ignore[arg-type]
        token_id=row["token_id"],  # type: ignore[arg-type]
        created_at=row["created_at"],  # type: ignore[arg-type]
    )


def _watcher(uow: UnitOfWork, actor: Actor) -> Watcher:
    seat = ai_seat_of(uow, actor)
    names = {actor.token.name} if actor.token is not None else set()
    if seat is not None:
        names |= {seat.name, seat.role}
    return Watcher(
        user_id=actor.user_id,
        token_id=actor.token.id if actor.token else None,
        seat_id=seat.id if seat else None,
        names=frozenset(n.strip().casefold() for n in names if n.strip()),
    )


def _context(
    uow: UnitOfWork, watcher: Watcher, project: Project, seen: list[Seen], *, held: set[str]
) -> tuple[Context, dict[str, Task]]:
    """The state the rules read: which of the events' tasks are the caller's (`held`: the
    tasks of its live claims, already read), which it may claim now, which comments name it;
    and those tasks."""
    ids = {e.task_id for e in seen if e.task_id}
    tasks = uow.tasks.get_many(ids)
    mine = {
        task.id
        for task in tasks.values()
        if task.assignee_id in watcher.assignees
        or (watcher.token_id is None and task.human_owner_id == watcher.user_id)
        or task.id in held
    }
    free = ClaimRepository(uow.conn).takeable(
        project.id, uow.now, assignees=watcher.assignees, ready=READY, resumable=RESUMABLE,
        among=sorted(ids),
    )  # fmt: skip
    context = Context(
        mine=mine,
        free={task.id for task in free},
        mentioned=_mentioning(uow, watcher, seen),
        keys={task.id: task_key(project, task) for task in tasks.values()},
    )
    return context, tasks


def _named(update: Update, tasks: dict[str, Task]) -> Update:
    """A free task's row names its title and priority, as the first check-in's do."""
    task = tasks.get(update.task_id or "")
    if update.kind is not UpdateKind.READY or task is None:
        return update
    return replace(update, title=task.title, priority=str(task.priority))


def _mentioning(uow: UnitOfWork, watcher: Watcher, seen: Sequence[Seen]) -> set[str]:
    """The comments among `seen` (by others) whose whole text names the caller."""
    if not watcher.names:
        return set()
    ids = {
        str(e.payload["commentId"])
        for e in seen
        if e.type == "task.comment_posted"
        and e.payload.get("commentId")
        and not watcher.did(e.actor)
    }
    texts = NoteRepository(uow.conn).comment_texts(ids)
    return {cid for cid, text in texts.items() if watcher.names & set(mentions(text))}


def _names(uow: UnitOfWork, updates: list[Update]) -> dict[str, str]:
    """Who did each thing, by name: a token by its name, a person by theirs."""
    ids = {u.by for u in updates if u.by}
    names = {uid: user.display_name or user.email for uid, user in uow.users.get_many(ids).items()}
    for token_id in ids - names.keys():
        token = uow.tokens.get(token_id)
        if token is not None:
            names[token_id] = token.name
    return names


def _first(uow: UnitOfWork, actor: Actor, project: Project) -> CheckIn:
    """The first check-in: start at the newest event; name the best free tasks."""
    watcher = _watcher(uow, actor)
    free = ClaimRepository(uow.conn).takeable(
        project.id, uow.now, assignees=watcher.assignees, ready=READY, resumable=RESUMABLE,
        limit=FIRST_READY,
    )  # fmt: skip
    ready = [
        Update(
            kind=UpdateKind.READY,
            at=task.updated_at,
            task_id=task.id,
            task_key=task_key(project, task),
            title=task.title,
            priority=str(task.priority),
        )
        for task in free
    ]
    return CheckIn(ready, uow.events.latest(project.id), False, [])


def _held_of(found: ClaimedTask) -> HeldClaim:
    return HeldClaim(found.claim.task_id, found.key, found.claim.fence, found.claim.expires_at)
