"""MCP tools: memory (being built)."""

from __future__ import annotations

from crewboard.mcp.catalogue import ToolDef

TOOLS: tuple[ToolDef, ...] = ()
