"""API tokens: look-up by secret hash, creation, listing, revocation."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, bindparam, or_, select

from crewboard.domain.identity.access import Role, Scope, TokenKind, Toolset
from crewboard.domain.identity.records import ApiToken
from crewboard.storage.identity import tables as t
from crewboard.storage.rows import record_from_row, record_values

# Built once: constructing a statement costs about as much as running it on SQLite.
# Every message checks its token: the token and its person's name in one statement.
_TOKEN_AND_PERSON = (
    select(t.api_tokens, t.users.c.display_name.label("person_display_name"))
    .join(t.users, t.users.c.id == t.api_tokens.c.user_id)
    .where(t.api_tokens.c.secret_hash == bindparam("secret_hash"))
)


def _token(row: Row[Any]) -> ApiToken:
    return record_from_row(
        ApiToken,
        row,
        kind=TokenKind(row.kind),
        scopes=frozenset(Scope(s) for s in row.scopes),
        role=Role(row.role) if row.role else None,
        toolsets=tuple(Toolset(s) for s in row.toolsets),
    )


class TokenRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, token: ApiToken, secret_hash: str) -> None:
        self.conn.execute(
            t.api_tokens.insert().values(
                **record_values(
                    token,
                    t.api_tokens,
                    kind=token.kind.value,
                    secret_hash=secret_hash,
                    scopes=sorted(s.value for s in token.scopes),
                    role=token.role.value if token.role else None,
                    toolsets=[s.value for s in token.toolsets],
                    last_used_at=None,
                    revoked_at=None,
                )
            )
        )

    def get(self, token_id: str) -> ApiToken | None:
        row = self.conn.execute(select(t.api_tokens).where(t.api_tokens.c.id == token_id)).first()
        return _token(row) if row else None

    def with_person(self, secret_hash: str) -> tuple[ApiToken, str] | None:
        """The token with this hash and its person's display name; None when either is gone."""
        row = self.conn.execute(_TOKEN_AND_PERSON, {"secret_hash": secret_hash}).first()
        return (_token(row), row.person_display_name) if row else None

    def list(self, user_id: str | None = None, *, include_revoked: bool = False) -> list[ApiToken]:
        query = select(t.api_tokens).order_by(t.api_tokens.c.created_at, t.api_tokens.c.id)
        if user_id is not None:
            query = query.where(t.api_tokens.c.user_id == user_id)
        if not include_revoked:
            query = query.where(t.api_tokens.c.revoked_at.is_(None))
        return [_token(row) for row in self.conn.execute(query)]

    def revoke(self, token_id: str, at: datetime) -> None:
        self.conn.execute(
            t.api_tokens.update()
            .where(
                t.api_tokens.c.id == token_id,
                t.api_tokens.c.revoked_at.is_(None),
            )
            .values(revoked_at=at)
        )

    def touch(self, token_id: str, at: datetime, *, older_than: datetime) -> bool:
        """Set last-used time, unless it was set after `older_than` (saves a write per call)."""
        result = self.conn.execute(
            t.api_tokens.update()
            .where(
                t.api_tokens.c.id == token_id,
                or_(
                    t.api_tokens.c.last_used_at.is_(None),
                    t.api_tokens.c.last_used_at < older_than,
                ),
            )
            .values(last_used_at=at)
        )
        return result.rowcount > 0
