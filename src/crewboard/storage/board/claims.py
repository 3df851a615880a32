"""SQL for task claims: one row per task, taken, renewed and ended by conditional writes.

Every change to a claim is one statement whose own condition decides it, so two callers (or
two nodes) racing for one task never both win: `take` is an upsert that overwrites the row
only while it holds no live claim, and `extend` and `end` change it only while it is still the
claim the caller named (its fence) and still in the state the caller saw. On PostgreSQL an
upsert or update waits for a competing writer of the row and re-checks its condition against
what that writer committed; on SQLite writers run one at a time anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, case, exists, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql.elements import ColumnElement

from crewboard.domain.board.claims import (
    Claim,
    ClaimEnd,
    HeldClaim,
    Holder,
    lease_until,
    renewed_until,
)
from crewboard.domain.board.tasks import Priority, Task, TaskStatus
from crewboard.storage.board import tables as t
from crewboard.storage.board.claim_tables import task_claims
from crewboard.storage.board.tasks import task_from_row
from crewboard.storage.identity.tables import api_tokens, users
from crewboard.storage.projects.tables import team_roles

_C = task_claims.c
_T = t.tasks.c
_L = t.task_links.c
_FINISHED = (TaskStatus.APPROVED.value, TaskStatus.DONE.value)
_PRIORITY_ORDER = case(
    {Priority.HIGH.value: 0, Priority.MEDIUM.value: 1}, value=_T.priority, else_=2
)


def claim_from_row(row: Row[Any]) -> Claim:
    return Claim(
        task_id=row.task_id,
        project_id=row.project_id,
        fence=row.fence,
        holder=Holder(user_id=row.user_id, token_id=row.token_id, role_id=row.role_id),
        claimed_at=row.claimed_at,
        expires_at=row.expires_at,
        lease_seconds=row.lease_seconds,
        released_at=row.released_at,
        end=ClaimEnd(row.ended_as) if row.ended_as else None,
    )


# The live claims of one caller, built once: the check-in asks on every call.
_NOW = bindparam("now", type_=_C.expires_at.type)
_LIVE_NOW = and_(_C.released_at.is_(None), _C.expires_at > _NOW)
_ORDER = (_C.claimed_at, _C.task_id)
_LIVE_OF_TOKEN = (
    select(task_claims).where(_C.token_id == bindparam("token_id"), _LIVE_NOW).order_by(*_ORDER)
)
_LIVE_OF_PERSON = (
    select(task_claims)
    .where(_C.user_id == bindparam("user_id"), _C.token_id.is_(None), _LIVE_NOW)
    .order_by(*_ORDER)
)


def _live(now: datetime) -> ColumnElement[bool]:
    return and_(_C.released_at.is_(None), _C.expires_at > now)


class ClaimRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._postgresql = conn.dialect.name == "postgresql"

    def get(self, task_id: str) -> Claim | None:
        row = self.conn.execute(select(task_claims).where(_C.task_id == task_id)).first()
        return claim_from_row(row) if row else None

    def get_many(self, task_ids: Sequence[str]) -> dict[str, Claim]:
        if not task_ids:
            return {}
        rows = self.conn.execute(select(task_claims).where(_C.task_id.in_(list(task_ids))))
        return {row.task_id: claim_from_row(row) for row in rows}

    def held(self, task_ids: Sequence[str], now: datetime) -> dict[str, HeldClaim]:
        """The live claims on these tasks with their holders' names, by task id: one
        statement, however many tasks a page shows."""
        if not task_ids:
            return {}
        query = (
            select(
                task_claims,
                users.c.display_name.label("person"),
                api_tokens.c.name.label("token_name"),
                team_roles.c.name.label("seat_name"),
                api_tokens.c.kind.label("token_kind"),
            )
            .join(users, users.c.id == _C.user_id)
            .outerjoin(api_tokens, api_tokens.c.id == _C.token_id)
            .outerjoin(team_roles, team_roles.c.id == _C.role_id)
            .where(_C.task_id.in_(list(task_ids)), _live(now))
        )
        return {
            row.task_id: HeldClaim(
                claim_from_row(row), row.person, row.token_name, row.seat_name, row.token_kind
            )
            for row in self.conn.execute(query)
        }

    def named(self, claim: Claim) -> HeldClaim:
        """`claim` with its holder's names (the person, the token, the seat), live or not."""
        holder = claim.holder
        person = self.conn.execute(
            select(users.c.display_name).where(users.c.id == holder.user_id)
        ).scalar()
        token = (
            self.conn.execute(
                select(api_tokens.c.name, api_tokens.c.kind).where(
                    api_tokens.c.id == holder.token_id
                )
            ).first()
            if holder.token_id
            else None
        )
        seat = (
            holder.role_id
            and self.conn.execute(
                select(team_roles.c.name).where(team_roles.c.id == holder.role_id)
            ).scalar()
        )
        return HeldClaim(
            claim, person or "someone", token.name if token else None, seat or None,
            str(token.kind) if token else None,
        )  # fmt: skip

    def take(self, task: Task, holder: Holder, now: datetime, seconds: int) -> Claim | None:
        """Claim `task` for `holder` with the next fence, unless a live claim holds it (then
        None). One INSERT … ON CONFLICT DO UPDATE … WHERE: the row's latest committed state
        decides, under its row lock on PostgreSQL."""
        dialect: Any = postgresql if self._postgresql else sqlite
        values = {
            "user_id": holder.user_id,
            "token_id": holder.token_id,
            "role_id": holder.role_id,
            "claimed_at": now,
            "expires_at": lease_until(now, seconds),
            "lease_seconds": seconds,
            "released_at": None,
            "ended_as": None,
        }
        statement = dialect.insert(task_claims).values(
            task_id=task.id, project_id=task.project_id, fence=1, **values
        )
        statement = statement.on_conflict_do_update(
            index_elements=[_C.task_id],
            set_={**values, "fence": _C.fence + 1},
            where=or_(_C.released_at.is_not(None), _C.expires_at <= now),
        ).returning(*task_claims.c)
        row = self.conn.execute(statement).first()
        return claim_from_row(row) if row else None

    def extend(self, claim: Claim, now: datetime) -> bool:
        """Renew `claim` (as given: its lease length may be new) from `now`, while it is still
        live and still that claim; False otherwise."""
        result = self.conn.execute(
            update(task_claims)
            .where(_C.task_id == claim.task_id, _C.fence == claim.fence, _live(now))
            .values(expires_at=renewed_until(claim, now), lease_seconds=claim.lease_seconds)
        )
        return result.rowcount == 1

    def end(self, claim: Claim, how: ClaimEnd, now: datetime) -> bool:
        """End `claim` (released, broken: while live; lapsed: once its lease ran out and no
        one ended it). False when it was no longer in that state: another writer (a holder, a
        person, another node's sweeper) got there first."""
        state = (
            and_(_C.released_at.is_(None), _C.expires_at <= now)
            if how is ClaimEnd.LAPSED
            else _live(now)
        )
        result = self.conn.execute(
            update(task_claims)
            .where(_C.task_id == claim.task_id, _C.fence == claim.fence, state)
            .values(released_at=now, ended_as=how.value)
        )
        return result.rowcount == 1

    def live_of(self, holder: Holder, now: datetime) -> list[Claim]:
        """The live claims `holder` holds, oldest first."""
        if holder.token_id is not None:
            rows = self.conn.execute(_LIVE_OF_TOKEN, {"token_id": holder.token_id, "now": now})
        else:
            rows = self.conn.execute(_LIVE_OF_PERSON, {"user_id": holder.user_id, "now": now})
        return [claim_from_row(row) for row in rows]

    def lapsed(self, now: datetime, limit: int) -> list[Claim]:
        """Claims whose lease ran out that no one has ended yet, the longest gone first."""
        rows = self.conn.execute(
            select(task_claims)
            .where(_C.released_at.is_(None), _C.expires_at <= now)
            .order_by(_C.expires_at)
            .limit(limit)
        )
        return [claim_from_row(row) for row in rows]

    def next_candidate(
        self,
        project_id: str,
        now: datetime,
        *,
        assignees: Sequence[str],
        ready: Sequence[str],
        resumable: Sequence[str],
        skip: Sequence[str],
    ) -> Task | None:
        """The first task claim_next_task may take: in a `ready` status (or in a `resumable`
        one with its last claim lapsed or broken: work its holder left), assigned to no one or
        to one of `assignees`, with no live claim and no unfinished blocker, by priority then
        age; tasks in `skip` left out.

        On PostgreSQL the row is locked (FOR NO KEY UPDATE SKIP LOCKED), so concurrent callers
        each find a different task instead of queueing on the same one; `take` still decides.
        """
        query = (
            select(t.tasks)
            .where(_takeable(project_id, now, assignees, ready, resumable))
            .order_by(_PRIORITY_ORDER, _T.created_at, _T.number)
            .limit(1)
        )
        if skip:
            query = query.where(_T.id.not_in(list(skip)))
        if self._postgresql:
            query = query.with_for_update(of=t.tasks, skip_locked=True, key_share=True)
        row = self.conn.execute(query).first()
        return task_from_row(row) if row else None

    def takeable(
        self,
        project_id: str,
        now: datetime,
        *,
        assignees: Sequence[str],
        ready: Sequence[str],
        resumable: Sequence[str],
        among: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[Task]:
        """Tasks `next_candidate` could take now (of `among` only, when given), best first;
        nothing is locked."""
        query = select(t.tasks).where(_takeable(project_id, now, assignees, ready, resumable))
        if among is not None:
            if not among:
                return []
            query = query.where(_T.id.in_(list(among)))
        query = query.order_by(_PRIORITY_ORDER, _T.created_at, _T.number).limit(limit)
        return [task_from_row(row) for row in self.conn.execute(query)]


def _takeable(
    project_id: str,
    now: datetime,
    assignees: Sequence[str],
    ready: Sequence[str],
    resumable: Sequence[str],
) -> ColumnElement[bool]:
    """A task of the project in a `ready` status (or in a `resumable` one with its last claim
    lapsed or broken: work its holder left), assigned to no one or to one of `assignees`, with
    no live claim and no unfinished blocker."""
    claimed = exists().where(_C.task_id == _T.id, _live(now))
    left = exists().where(
        _C.task_id == _T.id,
        or_(
            _C.ended_as.in_((ClaimEnd.LAPSED.value, ClaimEnd.BROKEN.value)),
            and_(_C.released_at.is_(None), _C.expires_at <= now),
        ),
    )
    blocker = t.tasks.alias("blocker")
    blocked = exists().where(
        _L.type == "blocks",
        or_(_L.low_id == _T.id, _L.high_id == _T.id),
        _L.blocker_id != _T.id,
        blocker.c.id == _L.blocker_id,
        blocker.c.status.not_in(_FINISHED),
    )
    return and_(
        _T.project_id == project_id,
        or_(_T.status.in_(list(ready)), and_(_T.status.in_(list(resumable)), left)),
        or_(_T.assignee_id.is_(None), _T.assignee_id.in_(list(assignees))),
        ~claimed,
        ~blocked,
    )
