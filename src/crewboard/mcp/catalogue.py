"""The tool catalogue: each tool's name, arguments, scope, toolset, annotations and handler.

The order here is the order `tools/list` shows. A door asks `visible_tools(actor, ...)` for
what a caller may see, and `find_tool(name)` to run one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from crewboard.config import Settings
from crewboard.domain.access import Scope, Toolset
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


_CATALOGUE: dict[str, ToolDef] = {}


def register(*tools: ToolDef) -> None:
    for tool in tools:
        if tool.name in _CATALOGUE:
            raise ValueError(f"tool {tool.name} registered twice")
        _CATALOGUE[tool.name] = tool


def all_tools() -> list[ToolDef]:
    _load()
    return list(_CATALOGUE.values())


def find_tool(name: str) -> ToolDef | None:
    _load()
    return _CATALOGUE.get(name)


def visible_tools(
    actor: Actor,
    *,
    toolsets: Iterable[Toolset] | None = None,
    names: Iterable[str] | None = None,
) -> list[ToolDef]:
    """The tools a caller is shown: those its scopes allow, narrowed by toolsets and names.

    `toolsets` None means the token's own default list (or every toolset when it has none).
    """
    chosen = set(toolsets) if toolsets is not None else set(_token_toolsets(actor))
    wanted = set(names) if names is not None else None
    return [
        tool
        for tool in all_tools()
        if tool.needs <= actor.scopes
        and (not chosen or tool.toolset in chosen)
        and (wanted is None or tool.name in wanted)
    ]


def _token_toolsets(actor: Actor) -> tuple[Toolset, ...]:
    return actor.token.toolsets if actor.token is not None else ()


def _load() -> None:
    """Import the tool modules once; each registers its tools."""
    if _CATALOGUE:
        return
    from crewboard.mcp.tools import projects, state, team  # noqa: PLC0415 - registration on first use

    for module in (projects, state, team):
        register(*module.TOOLS)
