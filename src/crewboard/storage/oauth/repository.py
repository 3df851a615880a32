"""OAuth rows: clients, pending consent requests, grants and their secrets."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, bindparam, delete, select, update

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.oauth import Grant, OAuthClient, PendingAuthorization
from crewboard.storage.identity.tables import users
from crewboard.storage.oauth.tables import (
    oauth_clients,
    oauth_grants,
    oauth_requests,
    oauth_secrets,
)
from crewboard.storage.rows import record_from_row, record_values

_c, _g, _r, _s = oauth_clients.c, oauth_grants.c, oauth_requests.c, oauth_secrets.c

# Every MCP message checks its access token: the secret, its grant and the person's name in
# one statement, as API tokens do.
_ACCESS = (
    select(
        _s.kind,
        _s.expires_at.label("secret_expires_at"),
        oauth_grants,
        users.c.display_name.label("person_display_name"),
    )
    .join(oauth_grants, _g.id == _s.grant_id)
    .join(users, users.c.id == _g.user_id)
    .where(_s.secret_hash == bindparam("secret_hash"))
)


def _client(row: Row[Any]) -> OAuthClient:
    return record_from_row(
        OAuthClient, row, redirect_uris=tuple(row.redirect_uris), metadata=dict(row.client_metadata)
    )


def _grant(row: Row[Any]) -> Grant:
    return record_from_row(
        Grant,
        row,
        scopes=frozenset(Scope(s) for s in row.scopes),
        role=Role(row.role) if row.role else None,
    )


class OAuthRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # Clients ---------------------------------------------------------------------------

    def client(self, client_id: str) -> tuple[OAuthClient, str | None] | None:
        """The client and its secret's hash (None for a public client)."""
        row = self.conn.execute(select(oauth_clients).where(_c.id == client_id)).first()
        return (_client(row), row.secret_hash) if row else None

    def put_client(self, client: OAuthClient, secret_hash: str | None) -> None:
        """Insert a client, or replace a metadata document's cached copy."""
        values = {
            "kind": client.kind,
            "name": client.name,
            "redirect_uris": list(client.redirect_uris),
            "auth_method": client.auth_method,
            "scope": client.scope,
            "secret_hash": secret_hash,
            "client_metadata": client.metadata,
            "expires_at": client.expires_at,
        }
        done = self.conn.execute(update(oauth_clients).where(_c.id == client.id).values(**values))
        if done.rowcount == 0:
            self.conn.execute(
                oauth_clients.insert().values(id=client.id, created_at=client.created_at, **values)
            )

    # Consent requests ------------------------------------------------------------------

    def add_request(self, pending: PendingAuthorization) -> None:
        self.conn.execute(
            oauth_requests.insert().values(
                **record_values(pending, oauth_requests, scopes=list(pending.scopes))
            )
        )

    def request(self, request_id: str) -> PendingAuthorization | None:
        row = self.conn.execute(select(oauth_requests).where(_r.id == request_id)).first()
        if row is None:
            return None
        return record_from_row(PendingAuthorization, row, scopes=tuple(row.scopes))

    def take_request(self, request_id: str) -> bool:
        """Delete a pending request; False when another answer took it first."""
        return self.conn.execute(delete(oauth_requests).where(_r.id == request_id)).rowcount > 0

    def prune(self, now: datetime) -> None:
        """Forget expired consent requests and expired codes and tokens."""
        self.conn.execute(delete(oauth_requests).where(_r.expires_at < now))
        self.conn.execute(delete(oauth_secrets).where(_s.expires_at < now))

    # Grants ----------------------------------------------------------------------------

    def add_grant(self, grant: Grant) -> None:
        self.conn.execute(
            oauth_grants.insert().values(
                **record_values(
                    grant,
                    oauth_grants,
                    scopes=sorted(s.value for s in grant.scopes),
                    role=grant.role.value if grant.role else None,
                    last_used_at=None,
                    revoked_at=None,
                    revoked_reason=None,
                )
            )
        )

    def grant(self, grant_id: str) -> Grant | None:
        row = self.conn.execute(select(oauth_grants).where(_g.id == grant_id)).first()
        return _grant(row) if row else None

    def grants_of(self, user_id: str, *, include_revoked: bool = False) -> list[Grant]:
        query = select(oauth_grants).where(_g.user_id == user_id)
        if not include_revoked:
            query = query.where(_g.revoked_at.is_(None))
        return [_grant(row) for row in self.conn.execute(query.order_by(_g.created_at.desc()))]

    def revoke_grant(self, grant_id: str, at: datetime, reason: str) -> bool:
        done = self.conn.execute(
            update(oauth_grants)
            .where(_g.id == grant_id, _g.revoked_at.is_(None))
            .values(revoked_at=at, revoked_reason=reason)
        )
        self.conn.execute(delete(oauth_secrets).where(_s.grant_id == grant_id))
        return done.rowcount > 0

    def touch_grant(self, grant_id: str, at: datetime, *, older_than: datetime) -> None:
        self.conn.execute(
            update(oauth_grants)
            .where(
                _g.id == grant_id,
                (_g.last_used_at.is_(None)) | (_g.last_used_at < older_than),
            )
            .values(last_used_at=at)
        )

    # Codes and tokens ------------------------------------------------------------------

    def add_secret(
        self,
        secret_hash: str,
        kind: str,
        grant_id: str,
        *,
        created_at: datetime,
        expires_at: datetime,
        redirect_uri: str | None = None,
        redirect_explicit: bool | None = None,
        code_challenge: str | None = None,
    ) -> None:
        self.conn.execute(
            oauth_secrets.insert().values(
                secret_hash=secret_hash,
                kind=kind,
                grant_id=grant_id,
                redirect_uri=redirect_uri,
                redirect_explicit=redirect_explicit,
                code_challenge=code_challenge,
                created_at=created_at,
                expires_at=expires_at,
            )
        )

    def secret(self, secret_hash: str) -> tuple[Row[Any], Grant] | None:
        """A code or token row with the grant it belongs to."""
        row = self.conn.execute(select(oauth_secrets).where(_s.secret_hash == secret_hash)).first()
        if row is None:
            return None
        grant_row = self.conn.execute(select(oauth_grants).where(_g.id == row.grant_id)).one()
        return row, _grant(grant_row)

    def access(self, secret_hash: str) -> tuple[str, datetime, Grant, str] | None:
        """(kind, expires_at, grant, person's display name) for a secret, in one statement."""
        row = self.conn.execute(_ACCESS, {"secret_hash": secret_hash}).first()
        if row is None:
            return None
        return row.kind, row.secret_expires_at, _grant(row), row.person_display_name

    def claim(self, secret_hash: str, at: datetime) -> bool:
        """Mark a code exchanged or a refresh token rotated; False when it already was."""
        done = self.conn.execute(
            update(oauth_secrets)
            .where(_s.secret_hash == secret_hash, _s.used_at.is_(None))
            .values(used_at=at)
        )
        return done.rowcount > 0

    def drop_secret(self, secret_hash: str) -> None:
        self.conn.execute(delete(oauth_secrets).where(_s.secret_hash == secret_hash))
