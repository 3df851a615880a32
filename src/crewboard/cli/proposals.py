"""Operator commands: proposals (being built)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this module's command groups to the CLI."""
