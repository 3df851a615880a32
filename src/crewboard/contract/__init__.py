"""The contract floor: every operation declared once (its name, arguments, scopes, toolset,
handler, REST route and CLI command), below the doors that serve it (MCP, REST, the CLI)."""
