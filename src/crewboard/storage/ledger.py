"""The idempotency ledger: one row per keyed write, holding its answer for replays."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, select

from crewboard.storage import schema as shared

_KEYS = shared.idempotency_keys
# Built once: every keyed write runs all three.
_GET = select(_KEYS).where(
    _KEYS.c.principal == bindparam("principal_"), _KEYS.c.key == bindparam("key_")
)
_CLAIM = _KEYS.insert()
_COMPLETE = _KEYS.update().where(
    _KEYS.c.principal == bindparam("principal_"), _KEYS.c.key == bindparam("key_")
)


@dataclass(frozen=True)
class LedgerEntry:
    principal: str
    key: str
    operation: str
    fingerprint: str
    acknowledgement: dict[str, Any]
    resource_type: str | None
    resource_id: str | None
    project_id: str | None
    created_at: datetime


class IdempotencyRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def get(self, principal: str, key: str) -> LedgerEntry | None:
        row = self.conn.execute(_GET, {"principal_": principal, "key_": key}).first()
        if row is None:
            return None
        return LedgerEntry(**row._asdict())

    def claim(
        self, *, principal: str, key: str, operation: str, fingerprint: str, at: datetime
    ) -> None:
        """Insert the key's row first: a concurrent first use waits here, fails, and retries."""
        self.conn.execute(
            _CLAIM,
            {
                "principal": principal,
                "key": key,
                "operation": operation,
                "fingerprint": fingerprint,
                "acknowledgement": {},
                "created_at": at,
            },
        )

    def complete(
        self,
        *,
        principal: str,
        key: str,
        acknowledgement: dict[str, Any],
        resource_type: str | None,
        resource_id: str | None,
        project_id: str | None,
    ) -> None:
        self.conn.execute(
            _COMPLETE,
            {
                "principal_": principal,
                "key_": key,
                "acknowledgement": acknowledgement,
                "resource_type": resource_type,
                "resource_id": resource_id,
                "project_id": project_id,
            },
        )
