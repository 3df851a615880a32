"""`crewboard mcp`: the same catalogue over stdio, the token checked again for every message."""

from __future__ import annotations

from mcp.server.stdio import stdio_server

from crewboard.config import Settings
from crewboard.domain.identity.access import Toolset
from crewboard.mcp.caller import STDIO_SECRET, STDIO_TOOLSETS
from crewboard.mcp.server import build_server
from crewboard.storage.database import Database


async def serve_stdio(
    db: Database, settings: Settings, secret: str, toolsets: tuple[Toolset, ...] | None = None
) -> None:
    """Serve until stdin closes. stdout carries protocol only (the SDK points fd 1 at stderr).

    `toolsets` None shows the token's own toolsets, else the default ones."""
    server = build_server(db, settings)
    STDIO_SECRET.set(secret)
    STDIO_TOOLSETS.set(toolsets)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
