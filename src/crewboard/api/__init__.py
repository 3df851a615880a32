"""REST API under /api/v1: bearer tokens, the same services and errors as the MCP door."""
