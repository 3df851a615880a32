"""The handoff repository: handoffs by id and by slot, filtered lists, recipients, and action
items; updates are compare-and-set on `updated_at` (the version a writer read)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, delete, func, insert, or_, select, update

from crewboard.domain.handoffs import ActionItem, Handoff, ItemStatus
from crewboard.storage.handoffs.tables import (
    handoff_action_items,
    handoff_counts,
    handoff_recipients,
    handoffs,
)
from crewboard.storage.rows import record_from_row, record_values

_h = handoffs.c
_r = handoff_recipients.c
_i = handoff_action_items.c
_BY_ID = select(handoffs).where(_h.id == bindparam("id"))
_BY_SLOT = select(handoffs).where(
    _h.project_id == bindparam("project_id"),
    _h.author_user_id == bindparam("author_user_id"),
    _h.day == bindparam("day"),
)
_RECIPIENTS = select(_r.user_id).where(_r.handoff_id == bindparam("id")).order_by(_r.user_id)
_COUNT = select(handoff_counts.c.total).where(
    handoff_counts.c.project_id == bindparam("project_id")
)
_ITEM_BY_ID = select(handoff_action_items).where(_i.id == bindparam("id"))


def _handoff(row: Row[Any], recipients: Sequence[str]) -> Handoff:
    return record_from_row(
        Handoff,
        row,
        linked_task_ids=tuple(row.linked_task_ids),
        recipient_user_ids=tuple(recipients),
    )


def _item(row: Row[Any]) -> ActionItem:
    return record_from_row(ActionItem, row, status=ItemStatus(row.status))


def _handoff_values(item: Handoff) -> dict[str, Any]:
    """Every column but the id, which never changes."""
    values = record_values(item, handoffs, linked_task_ids=list(item.linked_task_ids))
    del values["id"]
    return values


def _item_values(item: ActionItem) -> dict[str, Any]:
    """Every column but the id, which never changes."""
    values = record_values(item, handoff_action_items, status=item.status.value)
    del values["id"]
    return values


class HandoffRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- handoffs --------------------------------------------------------------------------

    def _with_recipients(self, row: Row[Any] | None) -> Handoff | None:
        if row is None:
            return None
        recipients = self.conn.execute(_RECIPIENTS, {"id": row.id}).scalars().all()
        return _handoff(row, recipients)

    def get(self, handoff_id: str, *, for_update: bool = False) -> Handoff | None:
        query = _BY_ID.with_for_update() if for_update else _BY_ID
        return self._with_recipients(self.conn.execute(query, {"id": handoff_id}).first())

    def in_slot(self, project_id: str, author_user_id: str, day: date) -> Handoff | None:
        row = self.conn.execute(
            _BY_SLOT, {"project_id": project_id, "author_user_id": author_user_id, "day": day}
        ).first()
        return self._with_recipients(row)

    def add(self, item: Handoff) -> None:
        self.conn.execute(insert(handoffs).values(id=item.id, **_handoff_values(item)))
        self._set_recipients(item.id, item.recipient_user_ids)
        counted = self.conn.execute(
            update(handoff_counts)
            .where(handoff_counts.c.project_id == item.project_id)
            .values(total=handoff_counts.c.total + 1)
        )
        if counted.rowcount == 0:  # the project's first (a race for it retries the write)
            self.conn.execute(insert(handoff_counts).values(project_id=item.project_id, total=1))

    def replace(self, item: Handoff, *, expected: datetime) -> bool:
        """Write `item` over the row if its updated_at is still `expected`; whether it was."""
        values = _handoff_values(item)
        for fixed in ("project_id", "author_user_id", "author", "day", "created_at"):
            values.pop(fixed)
        done = self.conn.execute(
            update(handoffs).where(_h.id == item.id, _h.updated_at == expected).values(**values)
        )
        if done.rowcount != 1:
            return False
        self._set_recipients(item.id, item.recipient_user_ids)
        return True

    def _set_recipients(self, handoff_id: str, users: Sequence[str]) -> None:
        self.conn.execute(delete(handoff_recipients).where(_r.handoff_id == handoff_id))
        if users:
            self.conn.execute(
                insert(handoff_recipients),
                [{"handoff_id": handoff_id, "user_id": u} for u in users],
            )

    def page(
        self,
        project_id: str,
        *,
        author_user_id: str | None,
        recipient_user_id: str | None,
        since: date | None,
        until: date | None,
        limit: int,
        offset: int,
    ) -> tuple[list[Handoff], int]:
        """One page, newest day first (then newest id: ids grow with time), and the total."""
        conditions = [_h.project_id == project_id]
        if author_user_id is not None:
            conditions.append(_h.author_user_id == author_user_id)
        if recipient_user_id is not None:
            conditions.append(
                _h.id.in_(select(_r.handoff_id).where(_r.user_id == recipient_user_id))
            )
        if since is not None:
            conditions.append(_h.day >= since)
        if until is not None:
            conditions.append(_h.day <= until)
        where = and_(*conditions)
        if len(conditions) == 1:  # the whole project: its kept count
            total = self.conn.execute(_COUNT, {"project_id": project_id}).scalar()
        else:
            total = self.conn.execute(
                select(func.count()).select_from(handoffs).where(where)
            ).scalar()
        rows = self.conn.execute(
            select(handoffs)
            .where(where)
            # (day, id) is the index's order: a page reads its rows, not the project's.
            .order_by(_h.day.desc(), _h.id.desc())
            .limit(limit)
            .offset(offset)
        ).all()
        recipients: dict[str, list[str]] = {row.id: [] for row in rows}
        if rows:
            for handoff_id, user_id in self.conn.execute(
                select(_r.handoff_id, _r.user_id)
                .where(_r.handoff_id.in_(list(recipients)))
                .order_by(_r.user_id)
            ):
                recipients[handoff_id].append(user_id)
        return [_handoff(row, recipients[row.id]) for row in rows], int(total or 0)

    def item_counts(self, handoff_ids: Sequence[str]) -> dict[str, int]:
        if not handoff_ids:
            return {}
        rows = self.conn.execute(
            select(_i.handoff_id, func.count())
            .where(_i.handoff_id.in_(list(handoff_ids)))
            .group_by(_i.handoff_id)
        )
        return {handoff_id: int(count) for handoff_id, count in rows}

    # --- action items ----------------------------------------------------------------------

    def item(self, item_id: str) -> ActionItem | None:
        row = self.conn.execute(_ITEM_BY_ID, {"id": item_id}).first()
        return None if row is None else _item(row)

    def add_item(self, item: ActionItem) -> None:
        self.conn.execute(insert(handoff_action_items).values(id=item.id, **_item_values(item)))

    def replace_item(self, item: ActionItem, *, expected: datetime) -> bool:
        values = _item_values(item)
        for fixed in ("handoff_id", "project_id", "day", "created_by", "created_at"):
            values.pop(fixed)
        done = self.conn.execute(
            update(handoff_action_items)
            .where(_i.id == item.id, _i.updated_at == expected)
            .values(**values)
        )
        return done.rowcount == 1

    def items(
        self,
        *,
        handoff_id: str | None = None,
        project_id: str | None = None,
        day: date | None = None,
        after: tuple[datetime, str] | None,
        limit: int,
    ) -> list[ActionItem]:
        """Action items oldest first, by handoff or by project and day, after a cursor (the
        created_at and id of the last one seen)."""
        conditions = []
        if handoff_id is not None:
            conditions.append(_i.handoff_id == handoff_id)
        if project_id is not None:
            conditions.append(_i.project_id == project_id)
        if day is not None:
            conditions.append(_i.day == day)
        if after is not None:
            at, last_id = after
            conditions.append(or_(_i.created_at > at, and_(_i.created_at == at, _i.id > last_id)))
        rows = self.conn.execute(
            select(handoff_action_items)
            .where(and_(*conditions))
            .order_by(_i.created_at, _i.id)
            .limit(limit)
        )
        return [_item(row) for row in rows]
