"""What a tool is: its definition and what its handler is given.

Tool modules (`mcp/tools/<area>/…`) build `ToolDef`s; the catalogue only gathers them. Keeping
these types below both is what lets the catalogue import every tool module at the top.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from crewboard.config import Settings
from crewboard.domain.identity.access import Scope, Toolset
from crewboard.domain.models import Actor
from crewboard.mcp.args import Args, input_schema
from crewboard.mcp.render import Reply
from crewboard.storage.database import Database


@dataclass(frozen=True)
class Call:
    """What a handler gets besides its arguments."""

    db: Database
    actor: Actor
    settings: Settings


@dataclass(frozen=True)
class ToolDef:
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

    @property
    def needs(self) -> frozenset[Scope]:
        return frozenset((Scope.READ, *self.scopes))

    def schema(self) -> dict[str, Any]:
        return input_schema(self.args)
