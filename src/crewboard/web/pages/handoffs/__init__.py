"""Handoff pages: a project's handoffs of one day, writing and changing your own, and their action items."""
