"""Windows of lines out of a text blob (a spec file's revision, a text attachment) or a text
held whole (a task's output): from line `offset` (1 = the first), at most `limit` lines and
`room` bytes of JSON text. Reads only the bytes of the window, and of at most MARK_EVERY - 1
lines before it (found from the sparse line index kept beside the blob), so a window of a large
file costs the window, not the file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from crewboard.domain.files import LineIndex
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

    def read(start: int, size: int) -> bytes:
        return blobs.read(text.digest, start, size)

    return _window(read, text, offset=offset, limit=limit, room=room)


def text_window(
    data: bytes, lines: LineIndex, what: str, *, offset: int, limit: int, room: int
) -> Window:
    """The window of a text held whole (`lines`: its index; `what` names it in a refusal),
    cut as `read_window` cuts a blob. Raises: ValidationFailed naming `offset` past the end."""

    def read(start: int, size: int) -> bytes:
        return data[start : start + size]

    text = TextBlob("", len(data), lines, what)  # no blob: `read` takes from `data`
    return _window(read, text, offset=offset, limit=limit, room=room)


def _window(
    read: Callable[[int, int], bytes], text: TextBlob, *, offset: int, limit: int, room: int
) -> Window:
    """The window, `read(start, size)` giving the text's bytes from `start`."""
    total = text.lines.total_lines
    if total == 0 and offset == 1:
        return Window("", 0, None, False)
    if offset > total:
        raise ValidationFailed.field("offset", f"is past the end: {text.what} has {total} lines.")
    # From the nearest marked line before the window, in growing pieces: past at most
    # MARK_EVERY - 1 lines to where the window starts, then up to one byte past the room
    # (enough to see whether the last whole line ends inside it), and no further once `limit`
    # lines have ended: a short window of a large file reads its own bytes, not the room's.
    line, mark = text.lines.nearest(offset)
    data = bytearray()  # the bytes from `mark`
    at, piece = 0, READ_PIECE  # `at`: where line `line` starts in `data`

    def more(most: int) -> bytes:
        nonlocal piece
        got = read(mark + len(data), min(piece, most))
        data.extend(got)
        piece *= 2
        return got

    while line < offset:
        found = data.find(b"\n", at)
        if found >= 0:
            at, line = found + 1, line + 1
        elif not more(text.size):
            break  # past the end: cannot happen for an offset within the text
    start = mark + at
    wanted = min(room + 1, text.size - start)
    ended = data.count(b"\n", at)
    while len(data) - at < wanted and ended < limit:
        got = more(wanted - (len(data) - at))
        if not got:
            break
        ended += got.count(b"\n")
    chunk = bytes(data[at : at + wanted])
    at_end = start + len(chunk) >= text.size
    return cut(chunk, offset, limit, room, total, at_end=at_end)


def cut(chunk: bytes, first: int, limit: int, room: int, total: int, *, at_end: bool) -> Window:
    """Whole lines from the start of `chunk` while they fit in `room` bytes as JSON text.

    The lines are sized together (a JSON string's size is the sum of its characters' sizes,
    at most 6 bytes for each byte of UTF-8): once when they all fit, else by bisecting on the
    line ends. A 2,000-line window costs an encoding or a few of its text, not one per line."""
    pieces = chunk.split(b"\n", limit)  # `limit` lines at most, then what follows them
    tail = pieces[-1]
    count, stop = len(pieces) - 1, len(chunk) - len(tail)
    if tail and at_end and count < limit:
        count, stop = count + 1, len(chunk)  # the text's last line, with no newline after it

    def fits(end: int) -> bool:
        return 6 * end <= room or text_size(chunk[:end].decode("utf-8")) <= room

    if count and not fits(stop):
        stops = list(accumulate(len(p) + 1 for p in pieces[:count]))
        low, high = 0, count  # `low` lines fit, `high` do not
        while high - low > 1:
            middle = (low + high) // 2
            if fits(stops[middle - 1]):
                low = middle
            else:
                high = middle
        count, stop = low, stops[low - 1] if low else 0
    if not count and chunk:  # one line longer than the room: as much of it as fits
        text = chunk[: min(room, len(chunk))].decode("utf-8", errors="ignore")
        piece = text[: fitting_chars(text, room)]
        following = first + 1
        return Window(piece, 1, following if following <= total else None, True)
    following = first + count
    more = following <= total
    text = chunk[:stop].decode("utf-8")
    return Window(text, count, following if more else None, more and count < limit)
