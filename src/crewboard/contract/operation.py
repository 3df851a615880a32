"""What an operation is: its one declaration, and what its handler is given.

Area modules (`contract/<area>/…`) declare `Operation`s; the catalogue only gathers them, and
every door is built from the catalogue: MCP tools, REST routes (`rest`), CLI commands (`cli`).
Keeping these types below the doors is what lets each door import the catalogue at the top.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

from crewboard.config import Settings
from crewboard.contract.args import Args, input_schema, nested_models, unlisted
from crewboard.contract.reply import Reply
from crewboard.contract.schema import lean_schema
from crewboard.domain.identity.access import Role, Scope, Toolset
from crewboard.domain.identity.records import Actor
from crewboard.errors import PermissionDenied
from crewboard.services.idempotency import KeyedResult
from crewboard.storage.database import Database


@dataclass(frozen=True)
class Call:
    """What a handler gets besides its arguments."""

    db: Database
    actor: Actor
    settings: Settings
    # The caller's working folder on the stdio server (which runs on the caller's machine);
    # None over HTTP, where the server's disk is not the caller's.
    local_root: Path | None = None


@dataclass(frozen=True)
class Rest:
    """An operation's REST route. Each `{name}` in `path` fills an argument: `{project}` →
    projectId, else the argument of that name, else `<name>Id` (`{task}` → taskId); the other
    arguments come from the query string (GET, DELETE) or the JSON body (POST, PATCH, PUT)."""

    method: Literal["GET", "POST", "PATCH", "PUT", "DELETE"]
    path: str
    status: int = 200  # the status of a success (201 for a keyed create)

    @classmethod
    def created(cls, path: str) -> Rest:
        """A POST that makes something: 201 Created on success."""
        return cls("POST", path, 201)


@dataclass(frozen=True)
class Cli:
    """An operation's CLI command: `crewboard <words...>` (e.g. ("week", "show"))."""

    words: tuple[str, ...]


@dataclass(frozen=True)
class NoDoor:
    """Why an operation has no route or command on a door (e.g. it works on the caller's disk)."""

    reason: str


@dataclass(frozen=True)
class Operation:
    name: str
    title: str
    description: str
    args: type[Args]
    toolset: Toolset
    run: Callable[[Call, Any], Reply]
    scopes: tuple[Scope, ...] = ()  # besides `read`, which every tool needs
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    needs_project: bool = True  # False: useful with no project role (list or create projects)
    stdio_only: bool = False  # works with the caller's disk: listed and run on stdio only
    # Writes files on the caller's disk (stdio): a read as far as roles go, but the client is
    # not told it is read-only, since it changes the caller's environment.
    writes_locally: bool = False
    # The project role a write needs when it is not WRITE (a stream token only reads: READ).
    write_role: Role | None = None
    # Speaks in a person's name: its service refuses agent tokens (HUMAN_IDENTITY_REQUIRED),
    # so an agent token is never shown it (catalogue `usable`).
    people_only: bool = False
    # The other doors: its REST route and CLI command, or why it has none. None: not declared
    # yet (a test lists every operation still without one).
    rest: Rest | NoDoor | None = None
    cli: Cli | NoDoor | None = None

    @property
    def area(self) -> str:
        """The area the operation belongs to: the contract package (or module) declaring it."""
        return self.run.__module__.split(".")[2]

    @property
    def needs(self) -> frozenset[Scope]:
        return frozenset((Scope.READ, *self.scopes))

    @property
    def least_role(self) -> Role | None:
        """The project role a caller needs on some project for this tool to be of use to it."""
        if not self.needs_project:
            return None
        if Scope.PROJECTS_ADMIN in self.scopes:
            return Role.ADMIN
        if self.read_only:
            return Role.READ
        return self.write_role or Role.WRITE

    def check_scopes(self, actor: Actor) -> None:
        """Refuse a caller whose token lacks a scope this operation needs, before its arguments
        are read: every door refuses with the same code and message.

        Raises:
            PermissionDenied: naming the missing scopes and the ones the token has.
        """
        missing = sorted(self.needs - actor.scopes)
        if missing:
            raise PermissionDenied(
                f"{self.name} needs the {', '.join(missing)} scope; this token has "
                f"{', '.join(sorted(actor.scopes))}. Use a token with that scope.",
                {"tool": self.name, "requiredScope": missing[0], "missingScopes": missing},
            )

    def schema(self) -> dict[str, Any]:
        """The input schema `tools/list` shows (lean: see mcp/schema.py); a copy."""
        return copy.deepcopy(_published_schema(self.args))


@functools.cache
def _published_schema(model: type[Args]) -> dict[str, Any]:
    """The lean schema without the arguments marked UNLISTED (pydantic files a nested
    model's shape under $defs by its class name)."""
    schema = input_schema(model)
    shapes = [(schema, model)]
    shapes += [
        (schema.get("$defs", {}).get(inner.__name__, {}), inner) for inner in nested_models(model)
    ]
    for shape, owner in shapes:
        for name in unlisted(owner):
            shape.get("properties", {}).pop(name, None)
    return lean_schema(schema)


Runner = Callable[[Call, Any], Reply]
# A declaration's row, by position: name, title, description, args, run, rest, cli.
Row = tuple[str, str, str, type[Args], Runner, Rest | NoDoor | None, Cli | NoDoor | None]


class Flags(TypedDict, total=False):
    """What a declaration may still say when it differs from its area's defaults."""

    scopes: tuple[Scope, ...]
    destructive: bool
    idempotent: bool
    needs_project: bool
    stdio_only: bool
    writes_locally: bool
    write_role: Role | None
    people_only: bool


@dataclass(frozen=True)
class Area:
    """An area's defaults, so that each of its declarations states only what differs: the
    toolset its operations are listed in, the scopes its writes need (reads need only `read`),
    the project role a write needs when not WRITE, whether only people may call them
    (`people_only`), and words every description ends with.

    A declaration is one row (`Row`): `AREA.read(name, title, description, args, run, rest,
    cli)`;
    `write` changes state and a retry with the same arguments changes nothing more (or
    replays the first answer by its idempotencyKey); `edit` changes state from a version the
    caller read, so a retry after it landed is refused as stale (not idempotent).
    """

    toolset: Toolset
    write_scopes: tuple[Scope, ...] = (Scope.TASKS_MANAGE,)
    write_role: Role | None = None
    people_only: bool = False
    ending: str = ""

    def read(self, *row: *Row, **flags: Unpack[Flags]) -> Operation:
        """An operation that changes nothing (on the server)."""
        return self._declare(row, flags)

    def write(self, *row: *Row, **flags: Unpack[Flags]) -> Operation:
        """An operation that changes state, safe to retry (idempotent unless `flags` say not)."""
        given = Flags(scopes=self.write_scopes, write_role=self.write_role) | flags
        return self._declare(row, given, read_only=False)

    def edit(self, *row: *Row, **flags: Unpack[Flags]) -> Operation:
        """A write from the version the caller read: a retry after it landed is stale."""
        return self.write(*row, **(Flags(idempotent=False) | flags))

    def _declare(self, row: Row, flags: Flags, *, read_only: bool = True) -> Operation:
        name, title, description, args, run, rest, cli = row
        flags = Flags(people_only=self.people_only) | flags
        return Operation(
            name, title, description + self.ending, args, self.toolset, run, read_only=read_only,
            **flags, rest=rest, cli=cli,
        )  # fmt: skip


def keyed(
    made: Callable[[Call, Any], KeyedResult], again: str = "Already made by this key"
) -> Runner:
    """The `run` of a keyed write whose use case `made` answers with the ledger's result (the
    REST door, which answers 201 with `replayed`, calls `made` itself): its body, and a note
    when the key had been used (`again`, then "this is its answer")."""

    @functools.wraps(made)
    def run(call: Call, args: Any) -> Reply:
        result = made(call, args)
        return Reply(result.body, f"{again}: this is its answer." if result.replayed else None)

    return run
