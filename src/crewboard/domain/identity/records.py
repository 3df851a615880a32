"""Who people are and how they reach Crewboard: people, their API tokens, the caller of one
request, browser sessions and stream tokens. Pure values, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
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
    seat_id: str | None = None  # the AI seat (team role) an agent token acts as, chosen

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class SeatState(StrEnum):
    """How an agent token comes by the AI seat it acts as (or why it acts as none)."""

    CHOSEN = "chosen"  # the seat stored on the token, still an active AI seat
    ONLY = "only"  # none stored (a token made before seats were chosen): the only AI seat
    NONE = "none"  # none stored, and the project has not exactly one AI seat
    REMOVED = "removed"  # the stored seat was archived: the token acts as no seat


@dataclass(frozen=True)
class TokenSeat:
    """The seat side of an agent token, as listings show it: `id` and `name` are the seat it
    acts as (chosen, only) or the one it lost (removed); None for state none."""

    state: SeatState
    id: str | None = None
    name: str | None = None

    @property
    def acting(self) -> bool:
        return self.state in (SeatState.CHOSEN, SeatState.ONLY)


@dataclass(frozen=True)
class ListedToken:
    """A token with its seat (None for a token that is not an agent token)."""

    token: ApiToken
    seat: TokenSeat | None = None


@dataclass(frozen=True)
class Actor:
    """Who is calling: a person directly (web, operator CLI) or through one of their tokens."""

    user_id: str
    scopes: frozenset[Scope]
    token: ApiToken | None = None
    display_name: str = ""
    # An integration acting for the person who set it up ("github"): shown by its own name.
    integration: str | None = None

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
        if self.integration is not None:
            return {
                "kind": "integration",
                "integration": self.integration,
                "userId": self.user_id,
                "tokenId": None,
            }
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
