"""A webhook's delivery log, as its admins read it, and the two sends a person asks for: the
redelivery of a logged event and a ping. Both are queued as log entries the dispatcher sends
apart from the subscription's own sequence (they never move its cursor)."""

from __future__ import annotations

from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.webhooks import (
    DELIVERY_PREFIX,
    PING,
    Delivery,
    DeliveryKind,
    DeliveryPage,
    DeliveryState,
    Webhook,
)
from crewboard.errors import ValidationFailed
from crewboard.services.identity.access import ANY_WORKSPACE, WorkspaceRef, not_open
from crewboard.services.webhooks.subscriptions import access_webhook
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork
from crewboard.storage.webhooks.repository import WebhookRepository

MAX_LIMIT = 200
_SYSTEM = {"kind": "system", "userId": None, "tokenId": None}
delivery_not_found = not_open(
    "webhook delivery", "list_webhook_deliveries shows a webhook's log.", "delivery"
)


def list_webhook_deliveries(
    db: Database,
    actor: Actor,
    webhook_id: str,
    *,
    state: str | None = None,
    limit: int = 50,
    offset: int = 0,
    workspace_id: WorkspaceRef = ANY_WORKSPACE,
) -> DeliveryPage:
    """The webhook's log, newest first, optionally of one state.

    Raises:
        NotFound, PermissionDenied: as `access_webhook`.
        ValidationFailed: an unknown state (naming the accepted ones).
    """
    accepted = [s.value for s in DeliveryState]
    if state is not None and state not in accepted:
        raise ValidationFailed.field("state", f"{state!r} is no delivery state.", accepted)
    limit = max(1, min(limit, MAX_LIMIT))

    def work(uow: UnitOfWork) -> DeliveryPage:
        webhook, _project = access_webhook(uow, actor, webhook_id, workspace_id)
        states = None if state is None else [state]
        return WebhookRepository(uow.conn).list_deliveries(
            webhook.id, states=states, limit=limit, offset=max(0, offset)
        )

    return db.read(work)


def _queue(
    uow: UnitOfWork, webhook: Webhook, kind: DeliveryKind, event_id: int | None, event_type: str
) -> Delivery:
    delivery = Delivery(
        id=new_id(DELIVERY_PREFIX), webhook_id=webhook.id, project_id=webhook.project_id,
        event_id=event_id, event_type=event_type, kind=kind, state=DeliveryState.PENDING,
        attempts=0, response_status=None, response_excerpt=None, error=None, duration_ms=None,
        created_at=uow.now, last_attempt_at=None, next_attempt_at=uow.now, delivered_at=None,
    )  # fmt: skip
    WebhookRepository(uow.conn).add_delivery(delivery)
    # Through the log, so the dispatcher of every node hears of it at once.
    uow.record_event(
        "webhook.delivery_queued",
        actor=_SYSTEM,
        payload={"webhookId": webhook.id, "deliveryId": delivery.id, "kind": kind.value},
        project_id=webhook.project_id,
        workspace_id=webhook.workspace_id,
    )
    return delivery


def redeliver_webhook(
    db: Database, actor: Actor, delivery_id: str, *, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> Delivery:
    """Queue the logged delivery's event again (a ping's ping), as a new delivery (its own
    id) sent soon, even to a paused webhook; the receiver dedupes by Crewboard-Event-Id if it
    must.

    Raises:
        NotFound: no such delivery, or its webhook is not open to the actor.
        PermissionDenied: the actor is no admin of the webhook's project.
    """

    def work(uow: UnitOfWork) -> Delivery:
        logged = WebhookRepository(uow.conn).get_delivery(delivery_id)
        if logged is None:
            raise delivery_not_found(delivery_id)
        webhook, _project = access_webhook(uow, actor, logged.webhook_id, workspace_id)
        return _queue(uow, webhook, DeliveryKind.REDELIVERY, logged.event_id, logged.event_type)

    return db.write(work)


def ping_webhook(
    db: Database, actor: Actor, webhook_id: str, *, workspace_id: WorkspaceRef = ANY_WORKSPACE
) -> Delivery:
    """Queue a `webhook.ping` delivery, to check the receiver and its signature check; its
    outcome shows in the log.

    Raises:
        NotFound, PermissionDenied: as `access_webhook`.
    """

    def work(uow: UnitOfWork) -> Delivery:
        webhook, _project = access_webhook(uow, actor, webhook_id, workspace_id)
        return _queue(uow, webhook, DeliveryKind.PING, None, PING)

    return db.write(work)
