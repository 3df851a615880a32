"""Who is calling over MCP, for the length of one message."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

from crewboard.domain.identity.access import Toolset
from crewboard.domain.identity.records import Actor


@dataclass(frozen=True)
class Caller:
    actor: Actor
    toolsets: tuple[Toolset, ...] | None = None  # None: the token's own default list
    tool_names: tuple[str, ...] | None = None  # None: no narrowing by name


@dataclass
class TokenCheck:
    """A caller known by its token only, checked in the tool call's own worker-thread hop (one
    hop a call instead of two). `refused` records a check that failed, for the HTTP front to
    answer 401; `checked` whether the check ran at all (a request the SDK refused before its
    handler never reaches it)."""

    secret: str
    toolsets: tuple[Toolset, ...] | None = None
    tool_names: tuple[str, ...] | None = None
    local: bool = False  # stdio: the server runs on the caller's machine, in its folder
    checked: bool = field(default=False, compare=False)
    refused: str | None = field(default=None, compare=False)
    # The check could not be made (the database out of reach): the HTTP front raises it, so
    # the request answers as any request whose token check failed so (503, Retry-After).
    failed: BaseException | None = field(default=None, compare=False)


# Set by the HTTP front for each message (and per message on stdio by the server middleware).
CURRENT_CALLER: ContextVar[Caller | None] = ContextVar("crewboard_mcp_caller", default=None)
# HTTP: a tools/call whose API token the call checks itself (see TokenCheck).
PENDING_CHECK: ContextVar[TokenCheck | None] = ContextVar("crewboard_mcp_pending", default=None)
# stdio: the token secret, authenticated again for every message.
STDIO_SECRET: ContextVar[str | None] = ContextVar("crewboard_mcp_stdio_secret", default=None)
# stdio: the toolsets `crewboard mcp --toolsets` chose (None: the token's own, else the default).
STDIO_TOOLSETS: ContextVar[tuple[Toolset, ...] | None] = ContextVar(
    "crewboard_mcp_stdio_toolsets", default=None
)
