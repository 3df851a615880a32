"""Stream tokens: rows by id and by the SHA-256 of the secret, a person's list, revocation."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, bindparam, func, select, update

from crewboard.domain.identity.records import StreamToken
from crewboard.storage.identity.tables import stream_tokens
from crewboard.storage.rows import record_from_row, record_values

_s = stream_tokens.c
_BY_HASH = select(stream_tokens).where(_s.secret_hash == bindparam("secret_hash"))
_BY_ID = select(stream_tokens).where(_s.id == bindparam("id"))


def _token(row: Row[Any]) -> StreamToken:
    return record_from_row(StreamToken, row, project_ids=tuple(row.project_ids))


class StreamTokenRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, token: StreamToken, secret_hash: str) -> None:
        self.conn.execute(
            stream_tokens.insert(),
            record_values(token, stream_tokens, secret_hash=secret_hash, project_ids=list(token.project_ids), revoked_at=None),
        )  # fmt: skip

    def by_hash(self, secret_hash: str) -> StreamToken | None:
        row = self.conn.execute(_BY_HASH, {"secret_hash": secret_hash}).first()
        return None if row is None else _token(row)

    def get(self, token_id: str) -> StreamToken | None:
        row = self.conn.execute(_BY_ID, {"id": token_id}).first()
        return None if row is None else _token(row)

    def of_user(self, user_id: str, *, limit: int) -> list[StreamToken]:
        """The person's stream tokens, newest first."""
        rows = self.conn.execute(
            select(stream_tokens)
            .where(_s.user_id == user_id)
            .order_by(_s.created_at.desc(), _s.id)
            .limit(limit)
        )
        return [_token(row) for row in rows]

    def _live(self, user_id: str, now: datetime) -> Any:
        return (_s.user_id == user_id, _s.revoked_at.is_(None), _s.expires_at > now)

    def count_live(self, user_id: str, now: datetime) -> int:
        """How many of the person's stream tokens still work."""
        query = select(func.count()).select_from(stream_tokens).where(*self._live(user_id, now))
        return int(self.conn.execute(query).scalar_one())

    def live_of(self, user_id: str, now: datetime) -> list[StreamToken]:
        """The person's stream tokens that still work."""
        rows = self.conn.execute(select(stream_tokens).where(*self._live(user_id, now)))
        return [_token(row) for row in rows]

    def revoke(self, token_id: str, at: datetime) -> None:
        self.conn.execute(
            update(stream_tokens)
            .where(_s.id == token_id, _s.revoked_at.is_(None))
            .values(revoked_at=at)
        )
