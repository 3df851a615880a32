"""The webhook dispatcher: one per process, it sends each subscription the project's events
from the event log (the outbox: ids follow commit order, see `UnitOfWork.write_events`).

A pass claims the subscriptions that have something to send, each with a lease (`lease_owner`
this node, `lease_until` three attempts' time ahead; `FOR UPDATE SKIP LOCKED` on PostgreSQL), so on any
number of nodes one sends for a subscription at a time. Each claimed subscription is served in
its own task: events after its cursor that it does not ask for are skipped (the cursor moves
past them); the head event is logged as a delivery (its id stays the same across retries),
sent, and its outcome recorded in one transaction, guarded by the lease. Acknowledged (2xx):
the cursor moves past it, and it is never sent again. Failed: the subscription backs off and
the head event holds the ones behind it (strict order); after `retry_hours` of failures the
subscription is paused and the project's admins are told. A crash between the send and the
record sends the same delivery again later (receivers dedupe by Crewboard-Delivery).

Redeliveries and pings are log entries sent apart from that order, never moving the cursor.
The dispatcher wakes on local commits, on other nodes' (through the live broker's LISTEN,
`Broker.on_events`), and polls every `poll` seconds otherwise; a pass that fails (the database
is away) backs off and tries again, keeping every place in the log.

Most servers have no webhook, and an event then gives the dispatcher nothing to do: it keeps
in memory whether any subscription is active (or has a redelivery or ping waiting), looked
up at most every WATCH seconds and at once after this node changes a webhook, and while none
is, events do not wake it and its passes read nothing. A webhook made on another node is so
found within WATCH seconds; its cursor starts in the log, so no event is missed meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import anyio
import anyio.abc
from anyio import to_thread

from crewboard.domain.identity.access import Role
from crewboard.domain.webhooks import (
    PING,
    Delivery,
    DeliveryKind,
    DeliveryState,
    Webhook,
    WebhookState,
    backoff,
    event_delivery_id,
    matches,
)
from crewboard.services.notifications.notify import notify
from crewboard.services.supervisor import LoopHealth, Wakeup, repeat
from crewboard.services.views import event_view, iso
from crewboard.services.webhooks.sending import Attempt, Outgoing, body_of, policy_of, send
from crewboard.storage.database import Database
from crewboard.storage.outages import is_outage
from crewboard.storage.uow import EventRecord, UnitOfWork
from crewboard.storage.webhooks.repository import WebhookRepository

log = logging.getLogger(__name__)

POLL = 1.0  # seconds between two looks when nothing wakes the dispatcher
WATCH = 5.0  # seconds between two looks whether any subscription is active, while none is
# How long a claim holds a subscription without news: three attempts' time (each is bounded
# by the timeout) and a margin. A node killed mid-send holds its subscriptions that long; a
# lease much longer would only delay the delivery after a crash.
LEASE_ATTEMPTS = 3
LEASE_MARGIN = timedelta(seconds=2)
BATCH = 100  # events read after a cursor at a time
SCAN = 10  # batches of unwanted events skipped in one transaction at most
PER_CLAIM = 100  # events sent for one subscription before its lease goes back
EXTRAS = 10  # redeliveries and pings sent for one subscription per claim
_SYSTEM = {"kind": "system", "userId": None, "tokenId": None}


@dataclass(frozen=True)
class _Step:
    """A delivery about to be sent for a claimed subscription."""

    webhook_id: str
    delivery: Delivery
    out: Outgoing
    logged: bool = True  # False: the head event's delivery is not in the log yet
    cursor: int | None = None  # where the cursor goes past the unwanted events before it


def _node_name() -> str:
    return f"{socket.gethostname()[:30]}:{os.getpid()}:{secrets.token_hex(4)}"


class Dispatcher:
    """The loop: claim due subscriptions and send for each, until cancelled."""

    def __init__(
        self,
        db: Database,
        *,
        workers: int = 8,
        poll: float = POLL,
        node: str | None = None,
        watch: float = WATCH,
    ) -> None:
        self.db = db
        self.workers = workers
        self.poll = poll
        self.watch = watch
        self.node = node or _node_name()
        self._wakeup = Wakeup()
        self._busy: set[str] = set()  # subscriptions being served by this node's tasks
        # Whether some subscription is active or has extras waiting, as of `_looked`
        # (monotonic seconds; None: look at the next pass). `_changes` counts this node's
        # webhook changes, so a look that raced one is not trusted.
        self._watching = True
        self._looked: float | None = None
        self._changes = 0
        self._watch_lock = threading.Lock()
        db.add_event_listener(self._heard)

    def _lease(self) -> timedelta:
        return LEASE_ATTEMPTS * timedelta(seconds=policy_of(self.db).timeout) + LEASE_MARGIN

    def _heard(self, events: list[EventRecord]) -> None:
        # Every write calls its listeners, this loop's own (claims, releases, records) too:
        # waking on those would run pass after pass for nothing.
        if any(event.type.startswith("webhook.") for event in events):
            with self._watch_lock:  # made, changed, a redelivery queued: look again now
                self._changes += 1
                self._looked = None
            self._wakeup.wake()
        elif events:
            self.wake()

    def wake(self) -> None:
        """Events may have arrived (from any thread): pass again soon, unless no
        subscription is active and the last look at that is recent."""
        if self._watching or self._due_to_look():
            self._wakeup.wake()

    def _due_to_look(self) -> bool:
        looked = self._looked
        return looked is None or time.monotonic() - looked >= self.watch

    async def run(self, health: LoopHealth | None = None) -> None:
        """Passes until cancelled; one that fails backs off (the subscriptions wait). Each
        claimed subscription is served in a task of its own that the passes do not wait for:
        a slow receiver holds one of the `workers` slots (for at most its timeout per
        attempt), never the others."""
        health = health or LoopHealth("webhooks")
        health.wake = self._wakeup.wake
        async with anyio.create_task_group() as tasks:
            await repeat(health, partial(self._start, tasks), self.poll, self._wakeup)

    async def _start(self, tasks: anyio.abc.TaskGroup) -> None:
        free = self.workers - len(self._busy)
        if free <= 0:
            return
        for webhook in await to_thread.run_sync(self._claim, free):
            self._busy.add(webhook.id)
            tasks.start_soon(self._serve_then_wake, webhook)

    async def _serve_then_wake(self, webhook: Webhook) -> None:
        try:
            await self._serve(webhook)
        finally:
            self._busy.discard(webhook.id)
            self._wakeup.wake()  # a slot is free: look again now

    async def run_once(self) -> int:
        """One pass, waited for: claim what is due (up to `workers` subscriptions) and serve
        each in its own task until it has nothing more to send or fails; how many were
        claimed."""
        claimed = await to_thread.run_sync(self._claim, self.workers)
        async with anyio.create_task_group() as tasks:
            for webhook in claimed:
                tasks.start_soon(self._serve, webhook)
        return len(claimed)

    def _watched(self) -> bool:
        """Whether any subscription is active or has extras waiting: from memory, or from a
        look (a read) when the last is WATCH seconds old or a webhook changed here since."""
        if not self._due_to_look():
            return self._watching
        with self._watch_lock:
            changes = self._changes
        at = time.monotonic()
        watching = self.db.read(lambda uow: WebhookRepository(uow.conn).any_watched())
        with self._watch_lock:
            self._watching = watching
            if changes == self._changes:  # else a change raced the look: look again
                self._looked = at
        return watching

    def _claim(self, limit: int) -> list[Webhook]:
        # With no active subscription (most servers), nothing is read but the look every
        # WATCH seconds. Then a read: with nothing due (most passes) no write transaction is
        # taken, so writers never queue behind the poll.
        if not self._watched():
            return []
        if not self.db.read(lambda uow: WebhookRepository(uow.conn).any_due(uow.now)):
            return []

        def work(uow: UnitOfWork) -> list[Webhook]:
            skip = uow.conn.dialect.name == "postgresql"
            repo = WebhookRepository(uow.conn)
            return repo.claim_due(self.node, uow.now, self._lease(), limit, skip_locked=skip)

        return self.db.write(work)

    async def _serve(self, webhook: Webhook) -> None:
        try:
            await self._send_extras(webhook.id)
            if webhook.state is WebhookState.ACTIVE:
                await self._follow(webhook.id)
        except Exception as error:  # one subscription's trouble must not stop the others
            if is_outage(error):  # the pass's claim reports outages to the loop's health
                log.warning("webhooks: %s waits for the database (%s)", webhook.id, error)
            else:
                log.exception("webhooks: serving %s failed; it is tried again later", webhook.id)
        finally:
            # Out of reach now, the lease runs out by itself within `_lease()`.
            with contextlib.suppress(Exception):
                await to_thread.run_sync(self._release, webhook.id)

    def _release(self, webhook_id: str) -> None:
        self.db.write(lambda uow: WebhookRepository(uow.conn).release(webhook_id, self.node))

    # --- the subscription's own order ---------------------------------------------------

    async def _follow(self, webhook_id: str) -> None:
        policy = policy_of(self.db)
        for _ in range(PER_CLAIM):
            step = await to_thread.run_sync(self._head, webhook_id)
            if step is None:
                return
            attempt = await send(step.out, policy)
            if not await to_thread.run_sync(self._record, step, attempt):
                return

    def _head(self, webhook_id: str) -> _Step | None:
        """The head event's delivery, read without a write: a new one is logged with its
        first attempt's outcome (`_record`), under an id every attempt shares. None when
        nothing is due or the lease is gone; the cursor is moved past the unwanted events
        (a write) only when no wanted one follows them."""

        def look(uow: UnitOfWork) -> tuple[_Step | None, int | None]:
            repo = WebhookRepository(uow.conn)
            webhook = repo.get(webhook_id)
            if webhook is None or webhook.lease_owner != self.node:
                return None, None
            if webhook.state is not WebhookState.ACTIVE or _backing_off(webhook, uow.now):
                return None, None
            head, cursor = _first_wanted(repo, webhook)
            moved = cursor if cursor != webhook.cursor else None
            if head is None:
                return None, moved
            logged = repo.event_delivery(webhook.id, head["id"])
            delivery = logged or _unlogged(webhook, head, uow.now)
            out = self._outgoing(webhook, delivery, event_view(head))
            return _Step(webhook.id, delivery, out, logged is not None, moved), None

        step, skip_to = self.db.read(look)
        if skip_to is not None:
            self.db.write(
                lambda uow: WebhookRepository(uow.conn).update(
                    webhook_id, owner=self.node, cursor=skip_to
                )
            )
        return step

    def _outgoing(self, webhook: Webhook, delivery: Delivery, event: dict[str, Any]) -> Outgoing:
        body = body_of(webhook.id, delivery.id, event, policy_of(self.db).max_body)
        return Outgoing(
            url=webhook.url, secret=webhook.secret, body=body, event_type=delivery.event_type,
            event_id=delivery.event_id, delivery_id=delivery.id, webhook_id=webhook.id,
        )  # fmt: skip

    def _record(self, step: _Step, attempt: Attempt) -> bool:
        """The outcome of the head event's attempt, in one transaction, while the lease is
        still this node's; whether to go on with the next event."""

        def work(uow: UnitOfWork) -> bool:
            repo = WebhookRepository(uow.conn)
            webhook = repo.get(step.webhook_id)
            if webhook is None or webhook.lease_owner != self.node:
                return False  # deleted, or another node took over: it decides now
            if not step.logged:
                repo.add_delivery(step.delivery)
            tried = _tried(step.delivery, attempt, uow.now)
            if attempt.acknowledged:
                repo.update(
                    webhook.id, owner=self.node, cursor=step.delivery.event_id, attempts=0,
                    failing_since=None, next_attempt_at=None, lease_until=uow.now + self._lease(),
                )  # fmt: skip
                repo.update_delivery(step.delivery.id, **tried, state=DeliveryState.DELIVERED,
                                     delivered_at=uow.now, next_attempt_at=None)  # fmt: skip
                return True
            if step.cursor is not None:  # past the unwanted events before the failing one
                repo.update(webhook.id, owner=self.node, cursor=step.cursor)
            self._failed(uow, webhook, step, attempt)
            return False

        return self.db.write(work)

    def _failed(self, uow: UnitOfWork, webhook: Webhook, step: _Step, attempt: Attempt) -> None:
        """Back off, or pause the subscription once it has failed for `retry_hours`."""
        repo = WebhookRepository(uow.conn)
        delivery = step.delivery
        tried = _tried(delivery, attempt, uow.now)
        since = webhook.failing_since or uow.now
        attempts = webhook.attempts + 1
        hours = policy_of(self.db).retry_hours
        if uow.now - since >= timedelta(hours=hours):
            reason = f"deliveries failed for {hours:g} hours; the last error: {attempt.error}"
            repo.update(
                webhook.id, owner=self.node, state=WebhookState.PAUSED, paused_reason=reason[:500],
                paused_at=uow.now, attempts=attempts, failing_since=since, next_attempt_at=None,
            )  # fmt: skip
            repo.update_delivery(delivery.id, **tried, state=DeliveryState.FAILED,
                                 next_attempt_at=None)  # fmt: skip
            _tell_paused(uow, webhook, reason)
            return
        retry_at = uow.now + backoff(attempts)
        repo.update(webhook.id, owner=self.node, attempts=attempts, failing_since=since,
                    next_attempt_at=retry_at)  # fmt: skip
        repo.update_delivery(delivery.id, **tried, state=DeliveryState.RETRYING,
                             next_attempt_at=retry_at)  # fmt: skip

    # --- redeliveries and pings ---------------------------------------------------------

    async def _send_extras(self, webhook_id: str) -> None:
        policy = policy_of(self.db)
        for step in await to_thread.run_sync(self._extras, webhook_id):
            attempt = await send(step.out, policy)
            await to_thread.run_sync(self._record_extra, step, attempt)

    def _extras(self, webhook_id: str) -> list[_Step]:
        def work(uow: UnitOfWork) -> list[_Step]:
            repo = WebhookRepository(uow.conn)
            webhook = repo.get(webhook_id)
            if webhook is None or webhook.lease_owner != self.node:
                return []
            steps = []
            for delivery in repo.extra_due(webhook.id, uow.now, EXTRAS):
                event = _extra_event(repo, webhook, delivery)
                steps.append(_Step(webhook.id, delivery, self._outgoing(webhook, delivery, event)))
            return steps

        return self.db.read(work)

    def _record_extra(self, step: _Step, attempt: Attempt) -> None:
        """A redelivery or ping's outcome: delivered, or retried with back-off until
        `retry_hours` after it was queued, then failed."""

        def work(uow: UnitOfWork) -> None:
            repo = WebhookRepository(uow.conn)
            webhook = repo.get(step.webhook_id)
            if webhook is None or webhook.lease_owner != self.node:
                return
            delivery = repo.get_delivery(step.delivery.id)
            if delivery is None:
                return
            tried = _tried(delivery, attempt, uow.now)
            repo.update(webhook.id, owner=self.node, lease_until=uow.now + self._lease())
            if attempt.acknowledged:
                repo.update_delivery(delivery.id, **tried, state=DeliveryState.DELIVERED,
                                     delivered_at=uow.now, next_attempt_at=None)  # fmt: skip
            elif uow.now - delivery.created_at >= timedelta(hours=policy_of(self.db).retry_hours):
                repo.update_delivery(delivery.id, **tried, state=DeliveryState.FAILED,
                                     next_attempt_at=None)  # fmt: skip
            else:
                repo.update_delivery(delivery.id, **tried, state=DeliveryState.RETRYING,
                                     next_attempt_at=uow.now + backoff(tried["attempts"]))  # fmt: skip

        self.db.write(work)


def _backing_off(webhook: Webhook, now: datetime) -> bool:
    return webhook.next_attempt_at is not None and webhook.next_attempt_at > now


def _first_wanted(repo: WebhookRepository, webhook: Webhook) -> tuple[dict[str, Any] | None, int]:
    """The first event after the cursor the subscription asks for (None: none yet), and the
    cursor moved past the unwanted ones before it (at most SCAN batches of them)."""
    cursor = webhook.cursor
    for _ in range(SCAN):
        rows = repo.events_after(webhook.project_id, cursor, BATCH)
        for row in rows:
            if matches(webhook.events, row["type"]):
                return row, cursor
            cursor = row["id"]
        if len(rows) < BATCH:
            break
    return None, cursor


def _unlogged(webhook: Webhook, event: dict[str, Any], now: datetime) -> Delivery:
    """The head event's delivery before its first attempt: its id is the event's and the
    webhook's (`event_delivery_id`), so every attempt, after a crash too, carries it."""
    return Delivery(
        id=event_delivery_id(webhook.id, event["id"]), webhook_id=webhook.id, project_id=webhook.project_id,
        event_id=event["id"], event_type=event["type"], kind=DeliveryKind.EVENT,
        state=DeliveryState.PENDING, attempts=0, response_status=None, response_excerpt=None,
        error=None, duration_ms=None, created_at=now, last_attempt_at=None,
        next_attempt_at=now, delivered_at=None,
    )  # fmt: skip


def _tried(delivery: Delivery, attempt: Attempt, now: datetime) -> dict[str, Any]:
    """The columns every attempt sets on its delivery."""
    return {
        "attempts": delivery.attempts + 1, "response_status": attempt.status,
        "response_excerpt": attempt.excerpt, "error": attempt.error,
        "duration_ms": attempt.duration_ms, "last_attempt_at": now,
    }  # fmt: skip


def _extra_event(repo: WebhookRepository, webhook: Webhook, delivery: Delivery) -> dict[str, Any]:
    """What a redelivery or ping carries: the logged event again, or the ping's own."""
    row = None if delivery.event_id is None else repo.event(delivery.event_id)
    if row is not None:
        return event_view(row)
    return {
        "id": None, "type": PING, "projectId": webhook.project_id, "taskId": None,
        "at": iso(delivery.created_at), "actor": None, "payload": {"webhookId": webhook.id},
    }  # fmt: skip


def _tell_paused(uow: UnitOfWork, webhook: Webhook, reason: str) -> None:
    """The project's admins hear that the webhook was paused, in the app and by email."""
    project = uow.projects.get(webhook.project_id)
    if project is None:
        return
    admins = [user.id for user, role in uow.projects.members(project.id) if role is Role.ADMIN]
    notify(
        uow, recipients=admins, kind="webhook.paused", project_id=project.id,
        title=f"A webhook of {project.key} was paused",
        body=f"Deliveries to {webhook.url[:300]} stopped: {reason[:1500]}. Fix the receiver, "
        "then resume it (update_webhook with active: true).",
        link=f"/p/{project.key}", source=f"webhook:{webhook.id}:paused:{iso(uow.now)}",
        in_app=True, email=True,
    )  # fmt: skip
    uow.record_event(
        "webhook.paused", actor=_SYSTEM, payload={"webhookId": webhook.id},
        project_id=project.id, workspace_id=project.workspace_id,
    )  # fmt: skip
