"""Who is calling over MCP, for the length of one message."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from crewboard.domain.identity.access import Toolset
from crewboard.domain.identity.records import Actor


@dataclass(frozen=True)
class Caller:
    actor: Actor
    toolsets: tuple[Toolset, ...] | None = None  # None: the token's own default list
    tool_names: tuple[str, ...] | None = None  # None: no narrowing by name


# Set by the HTTP front for each message (and per message on stdio by the server middleware).
CURRENT_CALLER: ContextVar[Caller | None] = ContextVar("crewboard_mcp_caller", default=None)
# stdio: the token secret, authenticated again for every message.
STDIO_SECRET: ContextVar[str | None] = ContextVar("crewboard_mcp_stdio_secret", default=None)
# stdio: the toolsets `crewboard mcp --toolsets` chose (None: the token's own, else the default).
STDIO_TOOLSETS: ContextVar[tuple[Toolset, ...] | None] = ContextVar(
    "crewboard_mcp_stdio_toolsets", default=None
)
