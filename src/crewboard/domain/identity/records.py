"""Who people are and how they reach Crewboard: people, their API tokens, the caller of one
request, browser sessions and stream tokens. Pure values, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from crewboard.domain.identity.access import Role, Scope, TokenKind, Toolset


@dataclass(frozen=True)
class User:
    id: str
    email: str
    display_name: str
    created_at: datetime
    is_owner: bool = False


@dataclass(frozen=True)
class ApiToken:
    id: str
    user_id: str
    name: str
    kind: TokenKind
    scopes: frozenset[Scope]
    display_prefix: str
    created_at: datetime
    project_id: str | None = None
    role: Role | None = None
    toolsets: tuple[Toolset, ...] = ()
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class Actor:
    """Who is calling: a person directly (web, operator CLI) or through one of their tokens."""

    user_id: str
    scopes: frozenset[Scope]
    token: ApiToken | None = None
    display_name: str = ""

    @property
    def principal(self) -> str:
        """The idempotency ledger's key: each token has its own; a person directly, theirs."""
        return self.token.id if self.token else self.user_id

    @property
    def is_agent(self) -> bool:
        return self.token is not None and self.token.kind is TokenKind.AGENT

    @property
    def project_cap(self) -> str | None:
        return self.token.project_id if self.token else None

    @property
    def role_cap(self) -> Role | None:
        return self.token.role if self.token else None

    def as_payload(self) -> dict[str, str | None]:
        """How events and acknowledgements name the actor."""
        kind = "person" if self.token is None else f"{self.token.kind}_token"
        return {
            "kind": kind,
            "userId": self.user_id,
            "tokenId": self.token.id if self.token else None,
        }


@dataclass(frozen=True)
class WebSession:
    id: str
    user_id: str
    csrf_token: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class StreamToken:
    id: str
    user_id: str
    name: str
    display_prefix: str
    project_ids: tuple[str, ...]
    created_by: dict[str, Any]
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None

    def valid(self, now: datetime) -> bool:
        return self.revoked_at is None and now < self.expires_at

    @property
    def made_by(self) -> str | None:
        """The token or OAuth approval (`grt_…`) it was made through; None when its person
        made it directly (web app, operator CLI). It lives no longer than that credential."""
        maker = self.created_by.get("tokenId")
        return str(maker) if maker else None
