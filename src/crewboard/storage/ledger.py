"""The idempotency ledger: one row per keyed write, holding its answer for replays."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select

from crewboard.storage import schema as shared


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
        row = self.conn.execute(
            select(shared.idempotency_keys).where(
                shared.idempotency_keys.c.principal == principal,
                shared.idempotency_keys.c.key == key,
            )
        ).first()
        if row is None:
            return None
        return LedgerEntry(**row._asdict())

    def claim(
        self, *, principal: str, key: str, operation: str, fingerprint: str, at: datetime
    ) -> None:
        """Insert the key's row first: a concurrent first use waits here, fails, and retries."""
        self.conn.execute(
            shared.idempotency_keys.insert().values(
                principal=principal,
                key=key,
                operation=operation,
                fingerprint=fingerprint,
                acknowledgement={},
                created_at=at,
            )
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
            shared.idempotency_keys.update()
            .where(
                shared.idempotency_keys.c.principal == principal,
                shared.idempotency_keys.c.key == key,
            )
            .values(
                acknowledgement=acknowledgement,
                resource_type=resource_type,
                resource_id=resource_id,
                project_id=project_id,
            )
        )
