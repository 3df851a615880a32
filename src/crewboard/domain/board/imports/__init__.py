"""Tasks from the tools a team used before: task-master, Backlog.md, GitHub issues, Linear.

One module per source reads that tool's files into `ImportedTask`s (model.py); `parse` picks
the reader, `sniff` tells the sources apart by their contents. No I/O here: the caller reads
the files and hands their text in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from crewboard.domain.board.imports.backlog import BacklogFile, parse_backlog
from crewboard.domain.board.imports.github import looks_like_github, parse_github
from crewboard.domain.board.imports.linear import looks_like_linear, parse_linear
from crewboard.domain.board.imports.model import (
    SOURCE_NAMES,
    SOURCES,
    Criterion,
    ImportedTask,
    Parsed,
    Skipped,
)
from crewboard.domain.board.imports.taskmaster import looks_like_taskmaster, parse_taskmaster
from crewboard.errors import ValidationFailed

__all__ = [
    "SOURCES",
    "SOURCE_NAMES",
    "BacklogFile",
    "Criterion",
    "ImportedTask",
    "Parsed",
    "Skipped",
    "SourceFiles",
    "parse",
    "sniff",
]


@dataclass(frozen=True)
class SourceFiles:
    """The text of what is imported: one file (JSON, CSV), or a Backlog.md folder's task files
    with its configuration and milestones."""

    files: list[BacklogFile]
    config: BacklogFile | None = None
    milestones: list[BacklogFile] = field(default_factory=list)

    @classmethod
    def one(cls, name: str, text: str) -> SourceFiles:
        return cls([BacklogFile(name, text)])


def parse(source: str, given: SourceFiles) -> Parsed:
    """Read `given` as `source`'s files.

    Raises:
        ValidationFailed: an unknown source, or a malformed file (see each module).
    """
    if source == "backlog":
        return Parsed(parse_backlog(given.files, config=given.config, milestones=given.milestones))
    if source not in SOURCES or len(given.files) != 1:
        raise ValidationFailed.field(
            "source", f"{source!r} is not a source to import.", list(SOURCES)
        )
    (only,) = given.files
    if source == "taskmaster":
        return Parsed(parse_taskmaster(only.text, only.name))
    if source == "github":
        return parse_github(only.text, only.name)
    return Parsed(parse_linear(only.text, only.name))


def sniff(text: str) -> str | None:
    """Which source a single file's text is (taskmaster, github, linear), or None."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped[:1] in ("{", "["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            return None
        if looks_like_taskmaster(data):
            return "taskmaster"
        return "github" if looks_like_github(data) else None
    return "linear" if looks_like_linear(stripped) else None
