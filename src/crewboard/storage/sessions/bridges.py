"""Code bridges and code calls: a person's `crewboard reverse` per project, and the tool calls
a turn's model sends it. Rows come back as plain mappings (the service shapes them)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, delete, func, insert, null, or_, select, text, update

from crewboard.storage.sessions.tables import code_bridges, code_calls

_b, _c = code_bridges.c, code_calls.c
QUEUED, TAKEN, ANSWERED, FAILED = "queued", "taken", "answered", "failed"


# Other nodes' waiters hear what a commit here did for them on this channel (PostgreSQL NOTIFY,
# sent at commit; the live broker's LISTEN connection hands each payload to the bell).
BRIDGE_CHANNEL = "crewboard_bridges"


def notify_nodes(conn: Connection, keys: Collection[str]) -> None:
    """Tell the other nodes, when this transaction commits, the bell keys it rang (nothing on
    SQLite: one node)."""
    if conn.dialect.name != "postgresql":
        return
    for key in keys:
        conn.execute(text("SELECT pg_notify(:channel, :key)"), {"channel": BRIDGE_CHANNEL,
                                                                "key": key})  # fmt: skip


def _current() -> Any:
    return and_(_b.closed_at.is_(None), _b.replaced_at.is_(None))


class BridgeRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def get(self, bridge_id: str, *, for_update: bool = False) -> dict[str, Any] | None:
        query = select(code_bridges).where(_b.id == bridge_id)
        row = self.conn.execute(query.with_for_update() if for_update else query).first()
        return dict(row._mapping) if row else None

    def add(self, values: dict[str, Any]) -> None:
        self.conn.execute(insert(code_bridges).values(**values))

    def replace_current(self, user_id: str, project_id: str, now: datetime) -> list[str]:
        """Mark the person's current bridges of the project replaced (locking them first, so
        an exchange of theirs taking calls right now finishes before or sees it); their ids."""
        ids = list(
            self.conn.execute(
                select(_b.id)
                .where(_b.user_id == user_id, _b.project_id == project_id, _current())
                .with_for_update()
            ).scalars()
        )
        if ids:
            self.conn.execute(update(code_bridges).where(_b.id.in_(ids)).values(replaced_at=now))
        return ids

    def prune(self, user_id: str, project_id: str, seen_before: datetime) -> None:
        """Forget the person's bridges of the project not seen since `seen_before`, but for the
        current one (a closed or replaced one answers 410 or 409 until then)."""
        self.conn.execute(
            delete(code_bridges).where(
                _b.user_id == user_id,
                _b.project_id == project_id,
                _b.last_seen_at < seen_before,
                or_(_b.closed_at.is_not(None), _b.replaced_at.is_not(None)),
            )
        )

    def seen(self, bridge_id: str, now: datetime) -> None:
        self.conn.execute(update(code_bridges).where(_b.id == bridge_id).values(last_seen_at=now))

    def close(self, bridge_id: str, now: datetime) -> None:
        self.conn.execute(
            update(code_bridges)
            .where(_b.id == bridge_id, _b.closed_at.is_(None))
            .values(closed_at=now)
        )

    def live(self, user_id: str, project_id: str, seen_since: datetime) -> dict[str, Any] | None:
        """The person's current bridge of the project, when it was seen since `seen_since`."""
        row = self.conn.execute(
            select(code_bridges)
            .where(
                _b.user_id == user_id,
                _b.project_id == project_id,
                _current(),
                _b.last_seen_at >= seen_since,
            )
            .order_by(_b.connected_at.desc())
            .limit(1)
        ).first()
        return dict(row._mapping) if row else None


class CallRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def next_seq(self, turn_id: str) -> int:
        found = self.conn.execute(select(func.max(_c.seq)).where(_c.turn_id == turn_id)).scalar()
        return int(found or 0) + 1

    def add(self, values: dict[str, Any]) -> None:
        self.conn.execute(insert(code_calls).values(**values))

    def get(self, call_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(select(code_calls).where(_c.id == call_id)).first()
        return dict(row._mapping) if row else None

    def of_session(self, session_id: str) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            select(code_calls)
            .where(_c.session_id == session_id)
            .order_by(_c.created_at, _c.turn_id, _c.seq)
        )
        return [dict(row._mapping) for row in rows]

    def of_ids(self, call_ids: Collection[str]) -> dict[str, dict[str, Any]]:
        rows = self.conn.execute(select(code_calls).where(_c.id.in_(list(call_ids))))
        return {row.id: dict(row._mapping) for row in rows}

    @staticmethod
    def _takeable(user_id: str, project_id: str, taken_before: datetime) -> Any:
        return and_(
            _c.user_id == user_id,
            _c.project_id == project_id,
            or_(_c.status == QUEUED, and_(_c.status == TAKEN, _c.taken_at < taken_before)),
        )

    def any_takeable(self, user_id: str, project_id: str, taken_before: datetime) -> bool:
        """Whether a call waits for the person's bridge (a read, before a write takes it)."""
        where = self._takeable(user_id, project_id, taken_before)
        return self.conn.execute(select(_c.id).where(where).limit(1)).first() is not None

    def take(
        self,
        user_id: str,
        project_id: str,
        *,
        bridge_id: str,
        now: datetime,
        taken_before: datetime,
        limit: int,
    ) -> list[dict[str, Any]]:
        """Hand the bridge up to `limit` of the person's queued calls in the project, and those
        another take left unanswered since `taken_before`, oldest first.

        On PostgreSQL rows another node is taking are skipped (SKIP LOCKED), so no call is
        handed out twice; SQLite runs one write at a time."""
        where = self._takeable(user_id, project_id, taken_before)
        ids = list(
            self.conn.execute(
                select(_c.id)
                .where(where)
                .order_by(_c.created_at, _c.seq)
                .limit(limit)
                .with_for_update(skip_locked=True)
            ).scalars()
        )
        if not ids:
            return []
        self.conn.execute(
            update(code_calls)
            .where(_c.id.in_(ids))
            .values(status=TAKEN, bridge_id=bridge_id, taken_at=now)
        )
        rows = self.conn.execute(select(code_calls).where(_c.id.in_(ids)))
        return sorted((dict(r._mapping) for r in rows), key=lambda r: (r["created_at"], r["seq"]))

    def requeue(self, bridge_ids: Collection[str]) -> int:
        """Put the calls these bridges took but did not answer back in the queue."""
        if not bridge_ids:
            return 0
        done = self.conn.execute(
            update(code_calls)
            .where(_c.bridge_id.in_(list(bridge_ids)), _c.status == TAKEN)
            .values(status=QUEUED, bridge_id=None, taken_at=None)
        )
        return int(done.rowcount)

    def answer(
        self,
        call_id: str,
        bridge_id: str,
        *,
        answer: dict[str, Any],
        summary: dict[str, Any],
        now: datetime,
    ) -> bool:
        """Store the bridge's answer to a call it holds; False when the call no longer waits
        for it (the turn gave up on it, or it went back to the queue)."""
        done = self.conn.execute(
            update(code_calls)
            .where(_c.id == call_id, _c.bridge_id == bridge_id, _c.status == TAKEN)
            .values(status=ANSWERED, answer=answer, summary=summary, answered_at=now)
        )
        return done.rowcount > 0

    def fail(self, call_id: str, summary: dict[str, Any], now: datetime) -> bool:
        """Give up on a call no bridge answered; False when an answer came first."""
        done = self.conn.execute(
            update(code_calls)
            .where(_c.id == call_id, _c.status.in_([QUEUED, TAKEN]))
            .values(status=FAILED, summary=summary, answered_at=now)
        )
        return done.rowcount > 0

    def forget_answer(self, call_id: str) -> None:
        """Keep only the summary: the answer (the person's code) leaves the database (SQL
        NULL, not JSON null)."""
        self.conn.execute(update(code_calls).where(_c.id == call_id).values(answer=null()))

    def forget_unread(self, session_id: str, answered_before: datetime) -> None:
        """Drop answers no turn read (its node stopped mid-turn), once they are old."""
        self.conn.execute(
            update(code_calls)
            .where(
                _c.session_id == session_id,
                _c.answer.is_not(None),
                _c.answered_at < answered_before,
            )
            .values(answer=null())
        )
