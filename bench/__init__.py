"""Crewboard benchmarks: a real server process driven by the official MCP SDK client.

Run `python -m bench` from the repository root (see bench/README.md).
"""
