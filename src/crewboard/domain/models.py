"""Records of identity and access, as services and doors see them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from crewboard.domain.identity.access import Role, Scope, TokenKind, Toolset


class ProjectType(StrEnum):
    GREENFIELD = "greenfield"
    BROWNFIELD = "brownfield"
    AUTO = "auto"


class ProjectStatus(StrEnum):
    PLANNING = "planning"
    ACTIVE = "active"
    PAUSED = "paused"
    DONE = "done"


class WorkspaceRole(StrEnum):
    MEMBER = "member"
    ADMIN = "admin"


@dataclass(frozen=True)
class User:
    id: str
    email: str
    display_name: str
    created_at: datetime
    is_owner: bool = False


@dataclass(frozen=True)
class Workspace:
    id: str
    name: str
    created_at: datetime


@dataclass(frozen=True)
class Project:
    id: str
    workspace_id: str | None
    key: str
    name: str
    goal: str
    phase: str
    status: ProjectStatus
    description: str
    type: ProjectType
    collections: tuple[str, ...]
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime

    @property
    def archived(self) -> bool:
        return self.archived_at is not None


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
class ProjectAccess:
    """A project the actor may see, with the role it has there after the token's cap."""

    project: Project
    role: Role
    member_role: Role = field(default=Role.READ)


class SeatKind(StrEnum):
    AI = "ai"
    HUMAN = "human"


class Effort(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


@dataclass(frozen=True)
class StatePage:
    """The project's working page; revision 0 while nothing was ever saved."""

    project_id: str
    content: str
    revision: int
    updated_by: dict[str, Any] | None
    updated_at: datetime | None


@dataclass(frozen=True)
class StateVersion:
    revision: int
    content: str
    author: dict[str, Any]
    created_at: datetime
    restored_from: int | None = None


@dataclass(frozen=True)
class TeamRole:
    id: str
    project_id: str
    name: str
    role: str
    kind: SeatKind
    member_user_id: str | None
    model: str | None
    effort: Effort | None
    rank: int
    level: int
    xp: int
    archived_at: datetime | None
    created_at: datetime
