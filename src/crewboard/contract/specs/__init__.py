"""MCP tools of the specs area."""
