"""Scopes, project roles and the rule that joins them.

Effective permission = the token's scopes ∩ the user's role on the project. The rule is pure:
services look the role up and call `check_permission`.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import TypeVar

from crewboard.errors import ValidationFailed

E = TypeVar("E", bound=StrEnum)


class Scope(StrEnum):
    READ = "read"
    TASKS_MANAGE = "tasks.manage"
    DRAFTS_CREATE = "drafts.create"
    MESSAGES_WRITE = "messages.write"
    TEAM_MANAGE = "team.manage"
    SPECS_WRITE = "specs.write"
    PROJECTS_ADMIN = "projects.admin"


ALL_SCOPES: frozenset[Scope] = frozenset(Scope)


class Role(StrEnum):
    """A user's role on a project; each includes the ones before it."""

    READ = "read"
    WRITE = "write"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return _ROLE_ORDER.index(self)

    def includes(self, other: Role) -> bool:
        return self.rank >= other.rank


_ROLE_ORDER = (Role.READ, Role.WRITE, Role.ADMIN)


class TokenKind(StrEnum):
    PERSONAL = "personal"  # acts for its person ("via MCP")
    AGENT = "agent"  # acts as an AI seat of one project's team


class Toolset(StrEnum):
    """Groups of MCP tools a caller asks for, so an agent's context holds what it uses.

    board and memory are an agent's loop, the default set (find, claim, read, plan, note and
    hand in a task; read the project's memory); review holds drafts, messages and the activity
    feed; planning reshapes the board in bulk (batch edits, proposals, the state page, leases);
    repos links tasks to code repositories."""

    BOARD = "board"
    MEMORY = "memory"
    REVIEW = "review"
    PLANNING = "planning"
    REPOS = "repos"
    SPECS = "specs"
    ARTIFACTS = "artifacts"
    HANDOFFS = "handoffs"
    TEAM = "team"
    ADMIN = "admin"


def lower_role(a: Role, b: Role | None) -> Role:
    """The lesser of a member's role and a token's cap (None: no cap)."""
    if b is None:
        return a
    return a if a.rank <= b.rank else b


def missing_permission(
    scopes: frozenset[Scope], role: Role, need_scope: Scope, need_role: Role
) -> str | None:
    """Say what is missing for an action, or None when it is allowed.

    Every action needs `read` as well as its own scope.
    """
    for scope in dict.fromkeys((Scope.READ, need_scope)):
        if scope not in scopes:
            held = ", ".join(sorted(scopes)) or "none"
            return f"needs the {scope} scope; this token has {held}"
    if not role.includes(need_role):
        return f"needs the {need_role} role on the project; you have {role}"
    return None


def parse_enum(value: str, enum: type[E], field: str) -> E:
    """Parse one name into an enum member.

    Raises:
        ValidationFailed: naming the field and the accepted values.
    """
    accepted = [member.value for member in enum]
    if value not in accepted:
        raise ValidationFailed.field(field, f"unknown value {value!r}.", accepted)
    return enum(value)


def parse_enum_list(values: Iterable[str], enum: type[E], field: str) -> list[E]:
    """Parse names into enum members, dropping repeats and keeping their order.

    Raises:
        ValidationFailed: naming the field and the accepted values.
    """
    return list(dict.fromkeys(parse_enum(value, enum, field) for value in values))


ALL_TOOLSETS = "all"


def parse_toolsets(raw: str, field: str) -> tuple[Toolset, ...]:
    """A comma-separated toolset list as a header or setting carries it; `all` means every one.

    Raises:
        ValidationFailed: naming the field and the accepted values.
    """
    parts = [part.strip() for part in raw.split(",") if part.strip()]
    if ALL_TOOLSETS in parts:
        return tuple(Toolset)
    accepted = [t.value for t in Toolset]
    unknown = [p for p in parts if p not in accepted]
    if unknown:
        raise ValidationFailed.field(
            field, f"unknown toolset {unknown[0]!r}.", [*accepted, ALL_TOOLSETS]
        )
    return tuple(Toolset(p) for p in dict.fromkeys(parts))
