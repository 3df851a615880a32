"""Crewboard: one shared project for a team and the AI agents it works with."""

__version__ = "0.1.0"
