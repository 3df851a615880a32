"""Copy-paste MCP client configuration for a server URL and a token."""

from __future__ import annotations

import json


def mcp_url(base_url: str) -> str:
    return f"{base_url.rstrip('/')}/mcp"


def client_configs(base_url: str, token: str, *, name: str = "crewboard") -> dict[str, str]:
    """Configuration for each common client, keyed by the client's name."""
    url = mcp_url(base_url)
    headers = {"Authorization": f"Bearer {token}"}
    return {
        "Claude Code": (
            f'claude mcp add --transport http {name} {url} --header "Authorization: Bearer {token}"'
        ),
        "Cursor (~/.cursor/mcp.json)": json.dumps(
            {"mcpServers": {name: {"url": url, "headers": headers}}}, indent=2
        ),
        "VS Code (.vscode/mcp.json)": json.dumps(
            {"servers": {name: {"type": "http", "url": url, "headers": headers}}}, indent=2
        ),
    }
