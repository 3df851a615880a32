"""Project memory: the documents every project has and the standing of an accepted record.
Pure values, no I/O."""

from __future__ import annotations

from enum import StrEnum


class ProjectDocument(StrEnum):
    """The five documents every project has; `legal` holds asset rights."""

    OVERVIEW = "overview"
    CONTEXT = "context"
    DECISIONS = "decisions"
    NOTES = "notes"
    LEGAL = "legal"


class MemoryStatus(StrEnum):
    APPROVED = "approved"
    CANON = "canon"  # settled: a person marked it as the project's fixed truth
