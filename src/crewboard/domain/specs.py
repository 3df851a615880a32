"""Spec files and attachments as pure rules: the records, the limits, the opaque version a
save gets, and what an attachment may be (its type read from its bytes). The rules shared with
other file-keeping areas (paths, text, lines) are in `domain/files.py`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from crewboard.domain.files import CONTROL_CHARS, FileKind, LineIndex, kind_of
from crewboard.domain.files import TextWindow as TextWindow  # noqa: PLC0414 - read here by the specs area
from crewboard.domain.packages import package_names
from crewboard.domain.spec_comments import CommentThread, SpecComment
from crewboard.errors import LimitExceeded, ValidationFailed

MAX_FILE_BYTES = 50 * 1024 * 1024  # the most a spec file may hold (stdio uploads reach it)
MAX_READ_BYTES = 8 * 1024 * 1024  # read_spec_file refuses files larger than this


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


def content_version(file_id: str, revision: int, digest: str) -> str:
    """The opaque version of one saved revision: changes with every save (the revision number
    is in it), and says nothing a client could count on."""
    seed = f"{file_id}:{revision}:{digest}".encode()
    return "cv_" + hashlib.sha256(seed).hexdigest()[:24]


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
    """The media type of a DOCX or XLSX package (a zip holding the part that makes it one).

    Raises:
        UnreadablePackage: a zip that cannot be read whole (damaged, encrypted, a ZIP feature
            not supported, a decompression bomb).
    """
    names = package_names(data)
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
    """What the bytes are (never the name): one of the accepted types, or None.

    Raises:
        UnreadablePackage: a zip (DOCX, XLSX) that cannot be read whole.
    """
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
    if CONTROL_CHARS.search(name):
        raise ValidationFailed.field(field, "must not hold NUL or other control characters.")
    if "/" in name or "\\" in name:
        raise ValidationFailed.field(field, "is a file name, without folders (no / or \\).")
    if len(name) > MAX_ATTACHMENT_NAME:
        raise LimitExceeded.over(field, len(name), MAX_ATTACHMENT_NAME)
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


# --- what the use cases give back (worded for the doors in contract/specs/present.py) ---------


@dataclass(frozen=True)
class SpecFilePage:
    """One page of a project's files (or its trash bin), from `offset` of `total`."""

    files: tuple[SpecFile, ...]
    total: int
    offset: int


@dataclass(frozen=True)
class SourceTask:
    """A board task that a line of a `tasks.md` file holds."""

    id: str
    key: str
    title: str
    status: str
    line: int | None


@dataclass(frozen=True)
class SpecFileDetails:
    """A file, with its board tasks and newest revisions when they were asked for (None when
    not)."""

    file: SpecFile
    tasks: tuple[SourceTask, ...] | None = None
    revisions: tuple[SpecRevision, ...] | None = None


@dataclass(frozen=True)
class SpecFileWindow:
    """A window of one revision's lines."""

    file: SpecFile
    revision: SpecRevision
    window: TextWindow


@dataclass(frozen=True)
class SpecFileBytes:
    """One revision's bytes whole, with the file and the revision they are of."""

    file: SpecFile
    revision: SpecRevision
    data: bytes


@dataclass(frozen=True)
class SpecSave:
    """A save: the file as it is now and the revision just written."""

    file: SpecFile
    revision: SpecRevision


@dataclass(frozen=True)
class TrashChange:
    """A file after a move to or from the trash bin; `changed` is False when it was already
    there."""

    file: SpecFile
    changed: bool


@dataclass(frozen=True)
class AttachmentPage:
    attachments: tuple[Attachment, ...]
    total: int
    offset: int


@dataclass(frozen=True)
class AttachmentRead:
    """An image's bytes whole, or a text attachment's window of lines (one of the two)."""

    attachment: Attachment
    image: bytes | None = None
    window: TextWindow | None = None


@dataclass(frozen=True)
class AttachmentUpload:
    attachment: Attachment
    replaced: bool


@dataclass(frozen=True)
class ThreadRead:
    """A comment thread with its comments, first to last."""

    thread: CommentThread
    comments: tuple[SpecComment, ...]


@dataclass(frozen=True)
class ThreadListing:
    """One page of a file's threads, from `offset` of `total`."""

    file: SpecFile
    threads: tuple[ThreadRead, ...]
    total: int
    offset: int


@dataclass(frozen=True)
class ThreadChange:
    """A thread after a person resolved or reopened it; `changed` is False when it already
    had that status."""

    read: ThreadRead
    changed: bool


@dataclass(frozen=True)
class CommentRemoval:
    """What deleting a comment did: `removed`, `placeholder` or `threadDeleted`."""

    outcome: str
    comment_id: str
    thread_id: str


@dataclass(frozen=True)
class Reanchored:
    """How many threads followed their passage into a new revision, and which were orphaned."""

    moved: int
    orphaned: tuple[str, ...]
