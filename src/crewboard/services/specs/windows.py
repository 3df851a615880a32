"""Windows of lines out of a text blob (a spec file's revision, a text attachment): from line
`offset` (1 = the first), at most `limit` lines and `room` bytes of JSON text. Reads only the
bytes of the window, and of at most MARK_EVERY - 1 lines before it (found from the sparse line
index kept beside the blob), so a window of a large file costs the window, not the file."""

from __future__ import annotations

from dataclasses import dataclass

from crewboard.domain.specs import LineIndex
from crewboard.errors import ValidationFailed
from crewboard.services.text_windows import fitting_chars, text_size
from crewboard.storage.blobs import BlobStore

READ_PIECE = 64 * 1024  # bytes read at a time (doubling while a window grows)


@dataclass(frozen=True)
class Window:
    text: str
    lines: int
    next_offset: int | None
    truncated: bool  # stopped before `limit` lines for lack of room (or a line cut short)


@dataclass(frozen=True)
class TextBlob:
    """The text to read: its blob, size and line index, and how a refusal names it."""

    digest: str
    size: int
    lines: LineIndex
    what: str  # "revision 3", "notes.txt"


def read_window(blobs: BlobStore, text: TextBlob, *, offset: int, limit: int, room: int) -> Window:
    """The window. Raises: ValidationFailed naming `offset` past the end of the text."""
    total = text.lines.total_lines
    if total == 0 and offset == 1:
        return Window("", 0, None, False)
    if offset > total:
        raise ValidationFailed.field("offset", f"is past the end: {text.what} has {total} lines.")
    start = _line_start(blobs, text, offset)
    # Up to one byte past the room (enough to see whether the last whole line ends inside
    # it), in growing pieces, and no further once `limit` lines have ended: a short window
    # of a large file reads its own bytes, not the room's.
    wanted = min(room + 1, text.size - start)
    chunk = bytearray()
    piece, ended = READ_PIECE, 0
    while len(chunk) < wanted and ended < limit:
        got = blobs.read(text.digest, start + len(chunk), min(piece, wanted - len(chunk)))
        if not got:
            break
        chunk += got
        ended += got.count(b"\n")
        piece *= 2
    at_end = start + len(chunk) >= text.size
    return cut(bytes(chunk), offset, limit, room, total, at_end=at_end)


def _line_start(blobs: BlobStore, text: TextBlob, offset: int) -> int:
    """The byte offset where line `offset` starts: from the nearest marked line before it,
    past at most MARK_EVERY - 1 newlines."""
    line, position = text.lines.nearest(offset)
    pending, at = b"", 0  # `pending` holds the bytes from `position`; `at` is read up to
    while line < offset:
        found = pending.find(b"\n", at)
        if found < 0:
            position += len(pending)
            pending, at = blobs.read(text.digest, position, READ_PIECE), 0
            if not pending:
                break  # past the end: cannot happen for an offset within the text
            continue
        at = found + 1
        line += 1
    return position + at


def cut(chunk: bytes, first: int, limit: int, room: int, total: int, *, at_end: bool) -> Window:
    """Whole lines from the start of `chunk` while they fit in `room` bytes as JSON text."""
    parts: list[str] = []
    used = 0
    at = 0
    while len(parts) < limit and at < len(chunk):
        found = chunk.find(b"\n", at)
        if found < 0 and not at_end:
            break  # the line goes on past what was read: it does not fit
        stop = len(chunk) if found < 0 else found + 1
        line = chunk[at:stop].decode("utf-8")
        size = text_size(line)
        if used + size > room:
            break
        parts.append(line)
        used += size
        at = stop
    if not parts and at < len(chunk):  # one line longer than the room: as much of it as fits
        text = chunk[: min(room, len(chunk))].decode("utf-8", errors="ignore")
        piece = text[: fitting_chars(text, room)]
        following = first + 1
        return Window(piece, 1, following if following <= total else None, True)
    following = first + len(parts)
    more = following <= total
    return Window(
        "".join(parts), len(parts), following if more else None, more and len(parts) < limit
    )
