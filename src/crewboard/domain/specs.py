"""Spec files as pure rules: the paths a file may have, what counts as text, how a file is cut
into lines and windows of lines, and the opaque version a save gets.

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
from datetime import datetime
from enum import StrEnum
from typing import Any

from crewboard.errors import LimitExceeded, ValidationFailed

MAX_PATH = 512  # characters of a whole path
MAX_SEGMENT = 255  # characters of one folder or file name
MAX_DEPTH = 16  # folders and the file name
MAX_FILE_BYTES = 50 * 1024 * 1024  # the most a spec file may hold (stdio uploads reach it)
MAX_READ_BYTES = 8 * 1024 * 1024  # read_spec_file refuses files larger than this
MAX_WINDOW_LINES = 2000
MAX_WINDOW_BYTES = 1024 * 1024  # the most text one window holds
MARK_EVERY = 256  # a line index keeps the byte offset of every 256th line

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:")


class FileKind(StrEnum):
    TEXT = "text"
    BINARY = "binary"


@dataclass(frozen=True)
class SpecFile:
    """A spec file as it is now: its newest revision's facts, and whether it is in the trash."""

    id: str
    project_id: str
    path: str
    kind: FileKind
    size: int
    total_lines: int
    revision_count: int
    content_version: str
    digest: str
    created_by: dict[str, Any]
    created_at: datetime
    updated_by: dict[str, Any]
    updated_at: datetime
    trashed_at: datetime | None = None
    trashed_by: dict[str, Any] | None = None


@dataclass(frozen=True)
class SpecRevision:
    """One saved revision of a file: never changed once written."""

    file_id: str
    revision: int
    project_id: str
    kind: FileKind
    size: int
    digest: str
    content_version: str
    lines: LineIndex
    author: dict[str, Any]
    created_at: datetime


def normalise_path(raw: str, field: str = "path") -> str:
    """The path as stored: `/`-separated, no empty or `.` segments, no trailing slash.

    Raises:
        ValidationFailed: empty, absolute, a drive letter, `..`, a backslash, a control
            character. LimitExceeded: over MAX_PATH characters, MAX_DEPTH segments or a
            segment over MAX_SEGMENT.
    """
    if _CONTROL.search(raw):
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
        raise LimitExceeded(
            f"{field}: {len(path)} characters is over the limit of {MAX_PATH}.",
            {"field": field, "limit": MAX_PATH, "actual": len(path)},
        )
    if len(segments) > MAX_DEPTH:
        raise LimitExceeded(
            f"{field}: {len(segments)} levels deep is over the limit of {MAX_DEPTH}.",
            {"field": field, "limit": MAX_DEPTH, "actual": len(segments)},
        )
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


def content_version(file_id: str, revision: int, digest: str) -> str:
    """The opaque version of one saved revision: changes with every save (the revision number
    is in it), and says nothing a client could count on."""
    seed = f"{file_id}:{revision}:{digest}".encode()
    return "cv_" + hashlib.sha256(seed).hexdigest()[:24]


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


# --- attachments -------------------------------------------------------------------------------

MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024
MAX_ATTACHMENT_NAME = 255
_ZIP = b"PK\x03\x04"


class AttachmentKind(StrEnum):
    TEXT = "text"  # read in line windows
    IMAGE = "image"  # read whole, as an image
    DOCUMENT = "document"  # PDF, DOCX, XLSX: opened in the web app


ATTACHMENT_TYPES = ("PDF", "DOCX", "XLSX", "PNG", "JPEG", "GIF", "WebP", "UTF-8 text")


def _office(data: bytes) -> str | None:
    """The media type of a DOCX or XLSX package (a zip holding the part that makes it one)."""
    import io  # noqa: PLC0415 - only for zip packages
    import zipfile  # noqa: PLC0415

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            names = set(package.namelist())
    except (zipfile.BadZipFile, ValueError, OSError):
        return None
    if "[Content_Types].xml" not in names:
        return None
    if "word/document.xml" in names:
        return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    if "xl/workbook.xml" in names:
        return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    return None


# Leading bytes of the accepted binary types (WebP: RIFF, four size bytes, then WEBP).
_SIGNATURES: tuple[tuple[bytes, int, AttachmentKind, str], ...] = (
    (b"%PDF-", 0, AttachmentKind.DOCUMENT, "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", 0, AttachmentKind.IMAGE, "image/png"),
    (b"\xff\xd8\xff", 0, AttachmentKind.IMAGE, "image/jpeg"),
    (b"GIF87a", 0, AttachmentKind.IMAGE, "image/gif"),
    (b"GIF89a", 0, AttachmentKind.IMAGE, "image/gif"),
    (b"WEBP", 8, AttachmentKind.IMAGE, "image/webp"),
)


def sniff_attachment(data: bytes) -> tuple[AttachmentKind, str] | None:
    """What the bytes are (never the name): one of the accepted types, or None."""
    for signature, at, kind, media_type in _SIGNATURES:
        if data[at : at + len(signature)] == signature and (at == 0 or data[:4] == b"RIFF"):
            return kind, media_type
    if data.startswith(_ZIP):
        office = _office(data)
        return (AttachmentKind.DOCUMENT, office) if office else None
    if kind_of(data) is FileKind.TEXT:
        return AttachmentKind.TEXT, "text/plain; charset=utf-8"
    return None


def check_attachment_name(raw: str, field: str = "name") -> str:
    """A file name (no folders): trimmed, no slash, no control character, at most 255.

    Raises:
        ValidationFailed, LimitExceeded.
    """
    name = raw.strip()
    if not name or name in (".", ".."):
        raise ValidationFailed.field(field, "is empty; give a file name such as notes.pdf.")
    if _CONTROL.search(name):
        raise ValidationFailed.field(field, "must not hold NUL or other control characters.")
    if "/" in name or "\\" in name:
        raise ValidationFailed.field(field, "is a file name, without folders (no / or \\).")
    if len(name) > MAX_ATTACHMENT_NAME:
        raise LimitExceeded(
            f"{field}: {len(name)} characters is over the limit of {MAX_ATTACHMENT_NAME}.",
            {"field": field, "limit": MAX_ATTACHMENT_NAME, "actual": len(name)},
        )
    return name


@dataclass(frozen=True)
class Attachment:
    id: str
    project_id: str
    name: str
    kind: AttachmentKind
    media_type: str
    size: int
    digest: str
    lines: LineIndex  # of text attachments; empty otherwise
    created_by: dict[str, Any]
    created_at: datetime
    updated_by: dict[str, Any]
    updated_at: datetime
