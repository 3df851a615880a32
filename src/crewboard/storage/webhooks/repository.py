"""The webhook repository: subscriptions, the dispatcher's leases on them (claimed with
`FOR UPDATE SKIP LOCKED` on PostgreSQL, so two nodes never hold one), and the delivery log
(pruned to the newest entries of each subscription as it is written)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    and_,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
    update,
)

from crewboard.domain.webhooks import (
    KEEP_DELIVERIES,
    Delivery,
    DeliveryKind,
    DeliveryPage,
    DeliveryState,
    Webhook,
    WebhookState,
)
from crewboard.storage import schema as shared
from crewboard.storage.rows import record_from_row, record_values
from crewboard.storage.webhooks.tables import webhook_deliveries, webhooks

_w = webhooks.c
_d = webhook_deliveries.c
_e = shared.events.c
_OUT_OF_BAND = (DeliveryKind.REDELIVERY.value, DeliveryKind.PING.value)
_WAITING = (DeliveryState.PENDING.value, DeliveryState.RETRYING.value)


def _webhook(row: Row[Any]) -> Webhook:
    return record_from_row(
        Webhook,
        row,
        events=tuple(row.events),
        state=WebhookState(row.state),
        created_by=dict(row.created_by),
    )


def _delivery(row: Row[Any]) -> Delivery:
    return record_from_row(
        Delivery, row, kind=DeliveryKind(row.kind), state=DeliveryState(row.state)
    )


class WebhookRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- subscriptions -------------------------------------------------------------------

    def add(self, webhook: Webhook) -> None:
        values = record_values(
            webhook, webhooks, events=list(webhook.events), state=webhook.state.value
        )
        self.conn.execute(insert(webhooks).values(values))

    def get(self, webhook_id: str) -> Webhook | None:
        row = self.conn.execute(select(webhooks).where(_w.id == webhook_id)).first()
        return None if row is None else _webhook(row)

    def list_for_project(self, project_id: str) -> list[Webhook]:
        query = select(webhooks).where(_w.project_id == project_id).order_by(_w.created_at, _w.id)
        return [_webhook(row) for row in self.conn.execute(query)]

    def count_for_project(self, project_id: str) -> int:
        query = select(func.count()).select_from(webhooks).where(_w.project_id == project_id)
        return int(self.conn.execute(query).scalar_one())

    def update(self, webhook_id: str, *, owner: str | None = None, **values: Any) -> bool:
        """Change one subscription; with `owner`, only while that node holds its lease.
        Whether a row changed."""
        if "state" in values and isinstance(values["state"], WebhookState):
            values["state"] = values["state"].value
        if "events" in values:
            values["events"] = list(values["events"])
        query = update(webhooks).where(_w.id == webhook_id)
        if owner is not None:
            query = query.where(_w.lease_owner == owner)
        return self.conn.execute(query.values(**values)).rowcount > 0

    def delete(self, webhook_id: str) -> None:
        self.conn.execute(delete(webhook_deliveries).where(_d.webhook_id == webhook_id))
        self.conn.execute(delete(webhooks).where(_w.id == webhook_id))

    # --- leases --------------------------------------------------------------------------

    def any_watched(self) -> bool:
        """Whether some subscription may have something to send, now or once events come:
        an active one, or any with a redelivery or ping waiting. A node where none is reads
        nothing per event (`Dispatcher`)."""
        extra = exists().where(
            _d.webhook_id == _w.id, _d.kind.in_(_OUT_OF_BAND), _d.state.in_(_WAITING)
        )
        query = select(_w.id).where(or_(_w.state == WebhookState.ACTIVE.value, extra)).limit(1)
        return self.conn.execute(query).first() is not None

    def any_due(self, now: datetime) -> bool:
        """Whether some subscription has something to send now that no node holds: the
        cheap look before `claim_due`'s write."""
        return self.conn.execute(select(_w.id).where(_due(now)).limit(1)).first() is not None

    def claim_due(
        self, owner: str, now: datetime, lease: timedelta, limit: int, *, skip_locked: bool
    ) -> list[Webhook]:
        """Take the lease of up to `limit` subscriptions with something to send (`_due`)."""
        query = (
            select(_w.id)
            .where(_due(now))
            .order_by(_w.next_attempt_at.is_not(None), _w.next_attempt_at, _w.id)
            .limit(limit)
        )
        if skip_locked:
            query = query.with_for_update(skip_locked=True)
        ids = list(self.conn.execute(query).scalars())
        if not ids:
            return []
        self.conn.execute(
            update(webhooks)
            .where(_w.id.in_(ids))
            .values(lease_owner=owner, lease_until=now + lease)
        )
        rows = self.conn.execute(select(webhooks).where(_w.id.in_(ids)).order_by(_w.id))
        return [_webhook(row) for row in rows]

    def release(self, webhook_id: str, owner: str) -> None:
        self.conn.execute(
            update(webhooks)
            .where(_w.id == webhook_id, _w.lease_owner == owner)
            .values(lease_owner=None, lease_until=None)
        )

    # --- the event log, as the outbox ----------------------------------------------------

    def events_after(self, project_id: str, after: int, limit: int) -> list[dict[str, Any]]:
        query = (
            select(shared.events)
            .where(_e.project_id == project_id, _e.id > after)
            .order_by(_e.id)
            .limit(limit)
        )
        return [row._asdict() for row in self.conn.execute(query)]

    def event(self, event_id: int) -> dict[str, Any] | None:
        row = self.conn.execute(select(shared.events).where(_e.id == event_id)).first()
        return None if row is None else row._asdict()

    def latest_event(self, project_id: str) -> int:
        query = select(func.max(_e.id)).where(_e.project_id == project_id)
        return int(self.conn.execute(query).scalar() or 0)

    # --- deliveries ----------------------------------------------------------------------

    def add_delivery(self, delivery: Delivery) -> None:
        once = delivery.event_id if delivery.kind is DeliveryKind.EVENT else None
        values = record_values(
            delivery,
            webhook_deliveries,
            kind=delivery.kind.value,
            state=delivery.state.value,
            once_event_id=once,
        )
        self.conn.execute(insert(webhook_deliveries).values(values))
        self._prune(delivery.webhook_id)

    def _prune(self, webhook_id: str) -> None:
        """Keep the newest KEEP_DELIVERIES entries of the webhook (ids sort by creation)."""
        oldest_kept = (
            select(_d.id)
            .where(_d.webhook_id == webhook_id)
            .order_by(_d.id.desc())
            .offset(KEEP_DELIVERIES - 1)
            .limit(1)
            .scalar_subquery()
        )
        self.conn.execute(
            delete(webhook_deliveries).where(_d.webhook_id == webhook_id, _d.id < oldest_kept)
        )

    def get_delivery(self, delivery_id: str) -> Delivery | None:
        row = self.conn.execute(select(webhook_deliveries).where(_d.id == delivery_id)).first()
        return None if row is None else _delivery(row)

    def event_delivery(self, webhook_id: str, event_id: int) -> Delivery | None:
        query = select(webhook_deliveries).where(
            _d.webhook_id == webhook_id, _d.once_event_id == event_id
        )
        row = self.conn.execute(query).first()
        return None if row is None else _delivery(row)

    def update_delivery(self, delivery_id: str, **values: Any) -> None:
        if isinstance(values.get("state"), DeliveryState):
            values["state"] = values["state"].value
        query = update(webhook_deliveries).where(_d.id == delivery_id).values(**values)
        self.conn.execute(query)

    def extra_due(self, webhook_id: str, now: datetime, limit: int) -> list[Delivery]:
        """Redeliveries and pings of the webhook waiting to be sent, oldest first."""
        query = (
            select(webhook_deliveries)
            .where(
                _d.webhook_id == webhook_id,
                _d.kind.in_(_OUT_OF_BAND),
                _d.state.in_(_WAITING),
                or_(_d.next_attempt_at.is_(None), _d.next_attempt_at <= now),
            )
            .order_by(_d.id)
            .limit(limit)
        )
        return [_delivery(row) for row in self.conn.execute(query)]

    def list_deliveries(
        self, webhook_id: str, *, states: Sequence[str] | None, limit: int, offset: int
    ) -> DeliveryPage:
        where = [_d.webhook_id == webhook_id]
        if states:
            where.append(_d.state.in_(states))
        total = self.conn.execute(
            select(func.count()).select_from(webhook_deliveries).where(*where)
        ).scalar_one()
        query = (
            select(webhook_deliveries)
            .where(*where)
            .order_by(_d.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return DeliveryPage([_delivery(row) for row in self.conn.execute(query)], int(total))


def _due(now: datetime) -> ColumnElement[bool]:
    """A subscription with something to send and no node holding it: an active one not
    backing off with events after its cursor, or any with a redelivery or ping due."""
    has_events = exists().where(_e.project_id == _w.project_id, _e.id > _w.cursor)
    has_extra = exists().where(
        _d.webhook_id == _w.id,
        _d.kind.in_(_OUT_OF_BAND),
        _d.state.in_(_WAITING),
        or_(_d.next_attempt_at.is_(None), _d.next_attempt_at <= now),
    )
    head_due = and_(
        _w.state == WebhookState.ACTIVE.value,
        or_(_w.next_attempt_at.is_(None), _w.next_attempt_at <= now),
        has_events,
    )
    return and_(or_(_w.lease_until.is_(None), _w.lease_until < now), or_(head_due, has_extra))
