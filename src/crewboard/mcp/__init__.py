"""The MCP door: tool catalogue, argument models, rendering, and the protocol front."""
