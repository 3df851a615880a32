"""Keyed writes: the ledger row is written in the same transaction as the effect.

An exact retry (same principal, key, operation and arguments) gets the original
acknowledgement and changes nothing. The same key with other arguments is refused, naming
what the key made. Two first uses racing each other: each claims the key by inserting its
ledger row before doing anything else. The second insert waits on the unique index until the
first transaction ends, then fails; `Database.write` runs the use case again, and this time it
finds the winner's row and answers from it. Claiming first matters: a use case that checked
its own effect (a project key already taken) would otherwise see the winner's rows under
READ COMMITTED and refuse, instead of replaying.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.domain.validation import check_idempotency_key, check_no_nul
from crewboard.errors import IdempotencyConflict, ValidationFailed
from crewboard.storage.database import Database
from crewboard.storage.ledger import LedgerEntry
from crewboard.storage.uow import UnitOfWork


@dataclass(frozen=True)
class Ack:
    """What a write answers; stored whole in the ledger for keyed writes."""

    body: dict[str, Any]
    resource_type: str | None = None
    resource_id: str | None = None
    project_id: str | None = None


@dataclass(frozen=True)
class KeyedResult:
    body: dict[str, Any]
    replayed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def fingerprint(arguments: Mapping[str, Any]) -> str:
    """A stable digest of a request's arguments (key order and spacing do not matter)."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def do_keyed_write(
    uow: UnitOfWork,
    actor: Actor,
    *,
    key: str | None,
    operation: str,
    arguments: Mapping[str, Any],
    perform: Callable[[], Ack],
) -> KeyedResult:
    """Run `perform` once per (principal, key); replay or refuse on later uses of the key.

    Raises:
        IdempotencyConflict: the key was used for another operation or other arguments.
        ValidationFailed, LimitExceeded: the key is empty or longer than 128 characters.
    """
    key = check_idempotency_key(key)
    if key is None:
        return KeyedResult(body=perform().body)
    digest = fingerprint(arguments)
    entry = uow.idempotency.get(actor.principal, key)
    if entry is not None:
        if entry.operation == operation and entry.fingerprint == digest:
            return KeyedResult(body=entry.acknowledgement, replayed=True)
        raise _conflict(entry, operation)
    uow.idempotency.claim(
        principal=actor.principal, key=key, operation=operation, fingerprint=digest, at=uow.now
    )
    ack = perform()
    uow.idempotency.complete(
        principal=actor.principal,
        key=key,
        acknowledgement=ack.body,
        resource_type=ack.resource_type,
        resource_id=ack.resource_id,
        project_id=ack.project_id,
    )
    return KeyedResult(body=ack.body)


def _conflict(entry: LedgerEntry, operation: str) -> IdempotencyConflict:
    made = f" and made {entry.resource_type} {entry.resource_id}" if entry.resource_id else ""
    same = "with other arguments" if entry.operation == operation else f"by {operation}"
    return IdempotencyConflict(
        f"idempotencyKey {entry.key!r} was used earlier for {entry.operation}{made}; it cannot "
        f"be reused {same}. Send a new key for a new request.",
        {
            "idempotencyKey": entry.key,
            "operation": entry.operation,
            "resourceType": entry.resource_type,
            "resourceId": entry.resource_id,
            "acknowledgement": entry.acknowledgement,
            "usedAt": entry.created_at.isoformat(),
        },
    )


def require_key(key: str | None) -> str:
    """Raises: ValidationFailed when the key is missing (its length is checked by the ledger)."""
    if not key:
        raise ValidationFailed.field(
            "idempotencyKey", "required: send a stable key for this write and reuse it on retry."
        )
    return check_no_nul("idempotencyKey", key)


def keyed_write(
    db: Database,
    actor: Actor,
    call: tuple[str | None, str, Mapping[str, Any]],
    perform: Callable[[UnitOfWork], Ack],
) -> KeyedResult:
    """`do_keyed_write` in a write transaction of its own; `call` is (key, operation,
    arguments) as the ledger keeps them."""
    key, operation, arguments = call

    def work(uow: UnitOfWork) -> KeyedResult:
        return do_keyed_write(
            uow, actor, key=key, operation=operation, arguments=arguments,
            perform=lambda: perform(uow),
        )  # fmt: skip

    return db.write(work)
