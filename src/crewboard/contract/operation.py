"""What a tool is: its definition and what its handler is given.

Tool modules (`contract/<area>/…`) build `Operation`s; the catalogue only gathers them. Keeping
these types below both is what lets the catalogue import every tool module at the top.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crewboard.config import Settings
from crewboard.contract.args import Args, input_schema
from crewboard.contract.reply import Reply
from crewboard.contract.schema import lean_schema
from crewboard.domain.identity.access import Role, Scope, Toolset
from crewboard.domain.models import Actor
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

    def schema(self) -> dict[str, Any]:
        """The input schema `tools/list` shows (lean: see mcp/schema.py); a copy."""
        return copy.deepcopy(_published_schema(self.args))


@functools.cache
def _published_schema(model: type[Args]) -> dict[str, Any]:
    return lean_schema(input_schema(model))


def keyed_write(
    name: str,
    title: str,
    description: str,
    args: type[Args],
    run: Callable[[Call, Any], Reply],
    *,
    toolset: Toolset,
    scopes: tuple[Scope, ...] = (Scope.TASKS_MANAGE,),
) -> Operation:
    """A write that is safe to retry with its idempotencyKey: it changes state, destroys
    nothing, and the same key and arguments answer the first acknowledgement again."""
    return Operation(
        name=name,
        title=title,
        description=description,
        args=args,
        toolset=toolset,
        run=run,
        scopes=scopes,
        read_only=False,
        idempotent=True,
    )
