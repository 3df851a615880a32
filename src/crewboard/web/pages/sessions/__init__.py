"""Spec session pages: the list and a new session, one session's conversation and decisions,
its live reply stream, the owner's model settings and a project's default model."""
