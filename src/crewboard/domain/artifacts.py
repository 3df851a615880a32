"""Artifacts: a set of files versioned as one unit (an HTML mockup with its styles and script,
a generated report with its images). Revisions never change; a write adds one, whole (the files
sent are the artifact) or as a delta on a kept revision (the files sent replace or add, the
paths in `remove` go). Only the KEPT_REVISIONS newest are kept; an older one is "not found".

The rules here are pure: slugs, the limits of a revision, the file facts kept per revision, and
how a delta makes the next revision's file list. The bytes live in the blob store.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from crewboard.domain.files import FileKind, LineIndex, normalise_path
from crewboard.errors import LimitExceeded, ValidationFailed

MAX_FILES = 50  # files in one revision
MAX_FILE_BYTES = 2 * 1024 * 1024  # bytes of one file
MAX_REVISION_BYTES = 10 * 1024 * 1024  # bytes of all a revision's files together
KEPT_REVISIONS = 50  # the newest revisions kept; older ones are dropped with their files
MAX_SLUG = 64
MAX_TITLE = 200
MAX_DESCRIPTION = 2000
_SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")


class RevisionKind(StrEnum):
    FULL = "full"  # the files sent are the whole artifact (create, or a write without a base)
    DELTA = "delta"  # the files sent and `remove` applied to `base_revision`
    ROLLBACK = "rollback"  # an earlier revision's files again, as a new revision


@dataclass(frozen=True)
class ArtifactFile:
    """One file of one revision: its facts and the digest of its bytes."""

    path: str
    kind: FileKind
    media_type: str
    size: int
    digest: str
    lines: LineIndex


@dataclass(frozen=True)
class Artifact:
    id: str
    project_id: str
    slug: str
    title: str
    description: str
    revision_count: int
    created_by: dict[str, Any]
    created_at: datetime
    updated_by: dict[str, Any]
    updated_at: datetime


@dataclass(frozen=True)
class ArtifactRevision:
    artifact_id: str
    revision: int
    kind: RevisionKind
    base_revision: int | None  # the delta's base, or the revision a rollback restored
    file_count: int
    total_size: int
    author: dict[str, Any]
    created_at: datetime


def check_slug(raw: str, field: str = "slug") -> str:
    """A slug as stored: lowercase letters, digits and inner hyphens, at most MAX_SLUG.

    Raises:
        ValidationFailed: anything else, with an example.
    """
    if not 1 <= len(raw) <= MAX_SLUG or not _SLUG.match(raw):
        raise ValidationFailed.field(
            field,
            f"must be 1 to {MAX_SLUG} lowercase letters, digits and hyphens, starting and "
            f"ending with a letter or digit (such as login-mockup); got {raw[:80]!r}.",
        )
    return raw


def media_type_of(path: str, kind: FileKind) -> str:
    """The type a file is shown and served as, from its name; text without a known type is
    text/plain, bytes without one application/octet-stream."""
    guessed, _encoding = mimetypes.guess_type(path, strict=False)
    if guessed is not None:
        return guessed
    return "text/plain" if kind is FileKind.TEXT else "application/octet-stream"


def check_paths(paths: Iterable[str], field: str) -> list[str]:
    """Each path normalised (the spec file rules), none twice.

    Raises:
        ValidationFailed: a bad path or the same path twice, naming its place in the list.
    """
    seen: dict[str, int] = {}
    checked = []
    for i, raw in enumerate(paths):
        path = normalise_path(raw, f"{field}[{i}]")
        if path in seen:
            raise ValidationFailed.field(
                f"{field}[{i}]", f"{path} is already item {seen[path]} of {field}; name it once."
            )
        seen[path] = i
        checked.append(path)
    return checked


def check_file_size(size: int, field: str) -> None:
    """Raises: LimitExceeded for a file over MAX_FILE_BYTES."""
    if size > MAX_FILE_BYTES:
        raise LimitExceeded(
            f"{field}: {size} bytes is over the limit of {MAX_FILE_BYTES} bytes (2 MiB) a file.",
            {"field": field, "limit": MAX_FILE_BYTES, "actual": size},
        )


def check_revision(files: Mapping[str, ArtifactFile]) -> None:
    """The limits of a whole revision.

    Raises:
        ValidationFailed: no file. LimitExceeded: over MAX_FILES or MAX_REVISION_BYTES.
    """
    if not files:
        raise ValidationFailed.field(
            "files", "a revision holds at least one file; an artifact cannot be empty."
        )
    if len(files) > MAX_FILES:
        raise LimitExceeded(
            f"files: this revision would hold {len(files)} files; an artifact holds at most "
            f"{MAX_FILES}.",
            {"field": "files", "limit": MAX_FILES, "actual": len(files)},
        )
    total = sum(f.size for f in files.values())
    if total > MAX_REVISION_BYTES:
        raise LimitExceeded(
            f"files: this revision would hold {total} bytes; a revision holds at most "
            f"{MAX_REVISION_BYTES} bytes (10 MiB).",
            {"field": "files", "limit": MAX_REVISION_BYTES, "actual": total},
        )


def apply_delta(
    base: Mapping[str, ArtifactFile],
    changed: Mapping[str, ArtifactFile],
    remove: Iterable[str],
) -> dict[str, ArtifactFile]:
    """The next revision's files: `base`, with `changed` replacing or adding and `remove` gone.

    Raises:
        ValidationFailed: a path in `remove` that the base does not hold, or one also sent.
    """
    files = dict(base)
    for i, path in enumerate(remove):
        if path in changed:
            raise ValidationFailed.field(
                f"remove[{i}]", f"{path} is also in files; send it, or remove it, not both."
            )
        if path not in files:
            raise ValidationFailed.field(
                f"remove[{i}]", f"the base revision has no file {path}; get_artifact lists them."
            )
        del files[path]
    files.update(changed)
    return dict(sorted(files.items()))


def oldest_kept(revision_count: int) -> int:
    """The oldest revision still kept when there are `revision_count`."""
    return max(1, revision_count - KEPT_REVISIONS + 1)


@dataclass(frozen=True)
class ArtifactPage:
    """A page of a project's artifacts, from `offset`; `total` counts them all."""

    rows: tuple[Artifact, ...]
    total: int
    offset: int


@dataclass(frozen=True)
class ArtifactShown:
    """An artifact with one revision and its files, and the kept revisions, newest first."""

    artifact: Artifact
    revision: ArtifactRevision
    files: tuple[ArtifactFile, ...]
    revisions: tuple[ArtifactRevision, ...]


@dataclass(frozen=True)
class ArtifactWritten:
    """What a write made: the artifact as it now stands, the new revision and its files."""

    artifact: Artifact
    revision: ArtifactRevision
    files: tuple[ArtifactFile, ...]


@dataclass(frozen=True)
class FileLines:
    """A window of lines of one text file of a revision, as read: from line `offset`, `lines`
    of them; `next_offset` goes on, and `truncated` says the window stopped short of `limit`."""

    artifact: Artifact
    revision: int
    file: ArtifactFile
    text: str
    offset: int
    lines: int
    truncated: bool
    next_offset: int | None


@dataclass(frozen=True)
class PreviewGrant:
    """A look at one revision: the token its files are fetched under, and the page to start
    from (None when the revision has no HTML file)."""

    token: str
    revision: int
    start: str | None
