"""Projects and workspaces: their records (the project, its state page, its team roles) and
the rules for project fields. Pure values, no I/O."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.domain.validation import check_text
from crewboard.errors import LimitExceeded, ValidationFailed

PROJECT_KEY = re.compile(r"^[A-Z][A-Z0-9]{1,9}$")
MAX_NAME = 120
MAX_GOAL = 2000
MAX_PHASE = 100
MAX_DESCRIPTION = 10_000
MAX_COLLECTIONS = 50
MAX_COLLECTION_NAME = 60
DEFAULT_COLLECTIONS = ("general",)


@dataclass(frozen=True)
class HandoffSettings:
    """How a project's handoffs go: the zones of its two shifts (A hands over to B; a
    handoff's day is taken in the handing-over shift's zone) and whether a person given an
    action item is told of it (as their own notification settings allow)."""

    zone_a: str = "UTC"
    zone_b: str = "UTC"
    notify_assignees: bool = True


def check_project_key(value: str) -> str:
    """Project keys are 2-10 upper-case letters and digits starting with a letter (e.g. CRW).

    Raises:
        ValidationFailed: naming the accepted shape.
    """
    key = value.strip().upper()
    if not PROJECT_KEY.match(key):
        raise ValidationFailed.field(
            "key",
            f"{value!r} is not a project key: use 2-10 letters and digits starting with a "
            "letter, e.g. CRW (task keys become CRW-1, CRW-2, ...).",
        )
    return key


def check_collections(values: list[str]) -> tuple[str, ...]:
    """Collection names: 1-60 characters each, no repeats (case-insensitive), at most 50.

    Raises:
        ValidationFailed: on an empty name or a repeat.
        LimitExceeded: on too many or too long names.
    """
    if len(values) > MAX_COLLECTIONS:
        raise LimitExceeded(
            f"collections: {len(values)} is over the limit of {MAX_COLLECTIONS}.",
            {"field": "collections", "limit": MAX_COLLECTIONS},
        )
    names: list[str] = []
    seen: set[str] = set()
    for value in values:
        name = check_text("collections", value, max_length=MAX_COLLECTION_NAME, required=True)
        if name.lower() in seen:
            raise ValidationFailed.field("collections", f"{name!r} is listed twice.")
        seen.add(name.lower())
        names.append(name)
    return tuple(names)


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
class ProjectAccess:
    """A project the actor may see, with the role it has there after the token's cap."""

    project: Project
    role: Role
    member_role: Role = field(default=Role.READ)


@dataclass(frozen=True)
class ProjectPage:
    """One page of the projects a person has a role on, with that role, and how many there are;
    when each was last active (its own update or its newest event), by project id."""

    rows: list[tuple[Project, Role]]
    total: int
    active_at: Mapping[str, datetime] = field(default_factory=dict)


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


def acting_seat(seat_id: str | None, ai_seats: Sequence[TeamRole]) -> TeamRole | None:
    """The AI seat an agent token acts as, among its project's active AI seats: the one
    stored on it (None when that seat is no longer among them), or, for a token that stores
    none, the only one when there is exactly one. The token's name never decides."""
    if seat_id is not None:
        return next((s for s in ai_seats if s.id == seat_id), None)
    return ai_seats[0] if len(ai_seats) == 1 else None


# --- what the projects use cases return (the doors word them: contract/projects/present.py) ---


@dataclass(frozen=True)
class ViewedProject:
    """A project as one reader sees it: their role there (after the token's cap) and, where
    the answer carries them, its handoff settings."""

    project: Project
    role: Role
    handoffs: HandoffSettings | None = None


@dataclass(frozen=True)
class ProjectArchiving:
    """The project after archive or unarchive; `changed` is False when it was already so."""

    project: ViewedProject
    changed: bool


@dataclass(frozen=True)
class ProjectDeleted:
    project_id: str
    key: str


@dataclass(frozen=True)
class ProjectDescription:
    """One project with the reader's role and its handoff settings, and how many people,
    team roles and state page revisions it has."""

    project: ViewedProject
    members: int
    team_roles: int
    state_revision: int


@dataclass(frozen=True)
class MemberSet:
    """A person given a role on a project (or `role` None: their role taken away)."""

    project_id: str
    user_id: str
    role: Role | None


@dataclass(frozen=True)
class StateRead:
    """The state page, whether the reader may edit it, and the project's tasks by status."""

    page: StatePage
    can_edit: bool
    task_counts: dict[str, int]


@dataclass(frozen=True)
class StateSaved:
    """The page after a save; `replayed` when the save had already happened (a retry)."""

    page: StatePage
    replayed: bool = False


@dataclass(frozen=True)
class StateRestored:
    page: StatePage
    restored_from: int


@dataclass(frozen=True)
class StateVersionPage:
    versions: list[StateVersion]
    total: int
    offset: int


@dataclass(frozen=True)
class ProjectTeam:
    """A project's active team roles and its people with their project role."""

    project: Project
    roles: list[TeamRole]
    people: list[tuple[User, Role]]


@dataclass(frozen=True)
class TeamPage:
    """The team as its web page shows it; `can_manage`: the reader may add and archive roles
    and set people's roles (and so sees their emails)."""

    team: ProjectTeam
    can_manage: bool


@dataclass(frozen=True)
class WorkspaceMembers:
    workspace: Workspace
    role: WorkspaceRole
    members: list[tuple[User, WorkspaceRole]]
