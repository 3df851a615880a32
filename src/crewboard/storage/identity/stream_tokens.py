"""Stream tokens: rows by id and by the SHA-256 of the secret, the pages of those a caller may
see (theirs, and those following projects they administer), revocation."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, exists, func, or_, select, update
from sqlalchemy.sql.elements import ColumnElement

from crewboard.domain.identity.records import StreamToken
from crewboard.storage.identity.tables import stream_token_projects, stream_tokens
from crewboard.storage.rows import record_from_row, record_values

_s = stream_tokens.c
_p = stream_token_projects.c
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
        self.conn.execute(
            stream_token_projects.insert(),
            [{"stream_token_id": token.id, "project_id": p} for p in dict.fromkeys(token.project_ids)],
        )  # fmt: skip

    def by_hash(self, secret_hash: str) -> StreamToken | None:
        row = self.conn.execute(_BY_HASH, {"secret_hash": secret_hash}).first()
        return None if row is None else _token(row)

    def get(self, token_id: str) -> StreamToken | None:
        row = self.conn.execute(_BY_ID, {"id": token_id}).first()
        return None if row is None else _token(row)

    def page_seen_by(
        self,
        user_id: str,
        *,
        only_in: str | None,
        admin_of: Sequence[str],
        project_id: str | None,
        live_at: datetime | None,
        include_revoked: bool,
        limit: int,
        offset: int,
    ) -> tuple[list[StreamToken], int]:
        """One page of the stream tokens a caller sees, newest first (the id breaks ties), and
        how many there are: the person's own (with `only_in`, those that follow that project
        only) and every one following a project of `admin_of`. `project_id` keeps those that
        follow it; `live_at` those not expired then; `include_revoked=False` the unrevoked."""
        own: ColumnElement[bool] = _s.user_id == user_id
        if only_in is not None:
            elsewhere = exists().where(_p.stream_token_id == _s.id, _p.project_id != only_in)
            own = and_(own, ~elsewhere)
        conditions = [or_(own, _following(admin_of)) if admin_of else own]
        if project_id is not None:
            conditions.append(_following([project_id]))
        if live_at is not None:
            conditions.append(_s.expires_at > live_at)
        if not include_revoked:
            conditions.append(_s.revoked_at.is_(None))
        count = select(func.count()).select_from(stream_tokens).where(*conditions)
        total = int(self.conn.execute(count).scalar_one())
        rows = self.conn.execute(
            select(stream_tokens)
            .where(*conditions)
            .order_by(_s.created_at.desc(), _s.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return [_token(row) for row in rows], total

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


def _following(project_ids: Sequence[str]) -> ColumnElement[bool]:
    """The token follows at least one of these projects."""
    return _s.id.in_(select(_p.stream_token_id).where(_p.project_id.in_(list(project_ids))))
