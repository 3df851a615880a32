"""Files as pure rules, shared by the areas that keep files (spec files, attachments,
artifacts): the paths a file may have, what counts as text, how bytes are cut into lines and
windows of lines, and their content address.

A path is relative to the project and written with `/`: `docs/design.md`. It is normalised
(repeated and trailing slashes, `.` segments dropped) and refused when it climbs out (`..`),
starts at a root (`/x`, `C:`), holds a NUL or another control character, or is too long or deep.

Lines: a file's bytes split after each `\\n`; the last line needs no `\\n`. An empty file has
no lines; `a\\nb` and `a\\nb\\n` both have two. A line keeps its `\\r` (so windows joined in order
give back the exact bytes). Offsets count lines from 1.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import StrEnum

from crewboard.errors import LimitExceeded, ValidationFailed

MAX_PATH = 512  # characters of a whole path
MAX_SEGMENT = 255  # characters of one folder or file name
MAX_DEPTH = 16  # folders and the file name
MAX_WINDOW_LINES = 2000
MAX_WINDOW_BYTES = 1024 * 1024  # the most text one window holds
MARK_EVERY = 256  # a line index keeps the byte offset of every 256th line
CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:")


class FileKind(StrEnum):
    TEXT = "text"
    BINARY = "binary"


def normalise_path(raw: str, field: str = "path") -> str:
    """The path as stored: `/`-separated, no empty or `.` segments, no trailing slash.

    Raises:
        ValidationFailed: empty, absolute, a drive letter, `..`, a backslash, a control
            character. LimitExceeded: over MAX_PATH characters, MAX_DEPTH segments or a
            segment over MAX_SEGMENT.
    """
    if CONTROL_CHARS.search(raw):
        raise ValidationFailed.field(field, "must not hold NUL or other control characters.")
    if "\\" in raw:
        raise ValidationFailed.field(
            field, "write folders with / (forward slashes), not backslashes."
        )
    if raw.startswith("/") or _DRIVE.match(raw):
        raise ValidationFailed.field(
            field, f"{raw!r} is absolute; give a path inside the project, such as docs/spec.md."
        )
    segments = [part for part in raw.split("/") if part not in ("", ".")]
    if not segments:
        raise ValidationFailed.field(field, "is empty; give a file path such as docs/spec.md.")
    if ".." in segments:
        raise ValidationFailed.field(field, "must not hold '..': paths stay inside the project.")
    path = "/".join(segments)
    if len(path) > MAX_PATH:
        raise LimitExceeded.over(field, len(path), MAX_PATH)
    if len(segments) > MAX_DEPTH:
        raise LimitExceeded.over(field, len(segments), MAX_DEPTH, "levels deep")
    longest = max(segments, key=len)
    if len(longest) > MAX_SEGMENT:
        raise LimitExceeded(
            f"{field}: a name of {len(longest)} characters is over the limit of {MAX_SEGMENT}.",
            {"field": field, "limit": MAX_SEGMENT, "actual": len(longest)},
        )
    return path


def folder_prefix(raw: str, field: str = "path") -> str:
    """A folder filter as stored paths start with it: `docs` and `docs/` both give `docs/`."""
    return normalise_path(raw, field) + "/"


def kind_of(data: bytes) -> FileKind:
    """Text is valid UTF-8 with no NUL byte; anything else is binary."""
    if b"\x00" in data:
        return FileKind.BINARY
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return FileKind.BINARY
    return FileKind.TEXT


def digest_of(data: bytes) -> str:
    """The content address of some bytes (sha256, hex)."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class LineIndex:
    """Where lines start, kept sparse: `marks[i]` is the byte offset of line `i * every + 1`."""

    total_lines: int
    marks: tuple[int, ...]
    every: int = MARK_EVERY

    def nearest(self, line: int) -> tuple[int, int]:
        """(a line at or before `line` whose offset is known, that offset)."""
        slot = min((line - 1) // self.every, len(self.marks) - 1)
        return slot * self.every + 1, self.marks[slot]


@dataclass(frozen=True)
class TextWindow:
    """Lines of a text (a file, an attachment, an output) read from line `offset`: `lines` of
    them, `truncated` when room ran out first, `next_offset` None at the end."""

    offset: int
    lines: int
    total_lines: int
    text: str
    truncated: bool
    next_offset: int | None


def index_lines(data: bytes, every: int = MARK_EVERY) -> LineIndex:
    """The line count and sparse line starts of a text."""
    if not data:
        return LineIndex(0, (0,), every)
    marks = [0]
    count = 1
    start = 0
    while True:
        found = data.find(b"\n", start)
        if found < 0 or found == len(data) - 1:
            break
        start = found + 1
        count += 1
        if (count - 1) % every == 0:
            marks.append(start)
    return LineIndex(count, tuple(marks), every)


def check_window(offset: int, limit: int) -> None:
    """Raises: ValidationFailed for an offset below 1 or a limit outside 1..MAX_WINDOW_LINES."""
    if offset < 1:
        raise ValidationFailed.field("offset", f"counts lines from 1; got {offset}.")
    if not 1 <= limit <= MAX_WINDOW_LINES:
        raise ValidationFailed.field(
            "limit", f"must be from 1 to {MAX_WINDOW_LINES} lines; got {limit}."
        )
