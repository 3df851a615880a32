"""The folder `crewboard reverse` offers: the three read-only tools a spec session's model calls.

Every answer is a JSON-ready dict: the result, or {"error": {"code", "message"}}. Bad input
never raises; it answers `bad_arguments` naming the field and what it accepts. Every answer is
bounded (lines, characters, entries, matches, bytes scanned, seconds), so none outgrows what
the server takes (256 KiB an answer) and none keeps the bridge busy for long.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from crewboard.cli.reverse.rules import Refused, Rules, Target

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class Limits:
    """The bounds of bridge.md; tests may lower the time one (the rest they meet for real)."""

    max_depth: int = 3
    max_entries: int = 500
    window_lines: int = 400
    default_lines: int = 200
    text_bytes: int = 64 * KIB
    line_chars: int = 2000
    counted_bytes: int = 2 * MIB  # files up to this size get totalLines; search skips bigger
    read_scan_bytes: int = 64 * MIB  # how far read_file streams to reach its window
    max_query: int = 200
    max_matches: int = 100
    match_chars: int = 400  # a matching line is shown cut around its match
    scan_bytes: int = 50 * MIB
    search_seconds: float = 5.0
    answer_chars: int = 200 * KIB  # paths and texts of one listing or search, below 256 KiB


BINARY_PROBE = 8 * KIB
TOOLS = ("list_folder", "read_file", "search_text")
_ACCEPTED = {
    "list_folder": ("path", "depth"),
    "read_file": ("path", "startLine", "endLine"),
    "search_text": ("query", "path", "glob", "caseSensitive"),
}


class BadArguments(Exception):
    """Arguments a tool cannot take; the message names the field and what it accepts."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def error(code: str, message: str) -> dict[str, Any]:
    """An error answer, as the wire carries it."""
    return {"error": {"code": code, "message": message}}


class CodeFolder:
    """Read-only answers about one folder; what rules.py refuses is never opened."""

    def __init__(
        self,
        root: Path,
        data_dirs: Sequence[Path] = (),
        *,
        limits: Limits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = root
        self.data_dirs = tuple(data_dirs)
        self.limits = limits or Limits()
        self.clock = clock

    def answer(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One tool call's answer: its result, or an error answer; never raises for input."""
        tools = {
            "list_folder": self._list_folder,
            "read_file": self._read_file,
            "search_text": self._search_text,
        }
        try:
            _check_fields(tool, arguments)
            return tools[tool](Rules(self.root, self.data_dirs), arguments)
        except BadArguments as bad:
            return error("bad_arguments", bad.message)
        except Refused as refused:
            return error(refused.code, refused.message)
        except OSError as failure:  # vanished or unreadable mid-answer
            return error("not_found", f"It could not be read: {failure.strerror or failure}.")

    # -- list_folder ---------------------------------------------------------------------

    def _list_folder(self, rules: Rules, arguments: dict[str, Any]) -> dict[str, Any]:
        path = _text(arguments, "path", default=".", most=4096)
        depth = _whole(arguments, "depth", default=1, least=1, most=self.limits.max_depth)
        target = rules.target(path)
        if not target.real.is_dir():
            raise BadArguments(
                f"path {target.rel!r} is a file, not a folder: read it with read_file."
            )
        listing = _Listing(self.limits)
        self._walk_listing(rules, target, depth, listing)
        return {
            "path": target.rel,
            "entries": listing.entries,
            "truncated": listing.truncated,
            "hidden": listing.hidden,
        }

    def _walk_listing(self, rules: Rules, folder: Target, depth: int, listing: _Listing) -> None:
        for rel, real, is_dir, is_link in _children(rules, folder, listing):
            if listing.full():
                listing.truncated = True
                return
            entry: dict[str, Any] = {"path": rel, "kind": "folder" if is_dir else "file"}
            if not is_dir:
                entry["size"] = real.stat().st_size
            listing.add(entry)
            if is_dir and depth > 1 and not is_link:  # a link to a folder inside: not walked twice
                self._walk_listing(rules, Target(rel, real), depth - 1, listing)

    # -- read_file -----------------------------------------------------------------------

    def _read_file(self, rules: Rules, arguments: dict[str, Any]) -> dict[str, Any]:
        limits = self.limits
        path = _text(arguments, "path", most=4096)
        start = _whole(arguments, "startLine", default=1, least=1)
        end = _whole(arguments, "endLine", default=start + limits.default_lines - 1, least=start)
        # A wider window is cut to its first window_lines lines, and the answer says so.
        cut_window = end - start + 1 > limits.window_lines
        end = min(end, start + limits.window_lines - 1)
        target = rules.target(path)
        if target.real.is_dir():
            raise BadArguments(f"path {target.rel!r} is a folder: list it with list_folder.")
        if not target.real.is_file():  # a pipe or a device: opening it could wait forever
            raise Refused("not_text", f"{target.rel!r} is not a regular file.")
        size = target.real.stat().st_size
        with target.real.open("rb") as file:
            if b"\0" in file.read(BINARY_PROBE):
                raise Refused("not_text", f"{target.rel!r} is binary, not text.")
            file.seek(0)
            window = _read_window(file, start, end, limits, target.rel)
        total = _count_lines(target.real) if size <= limits.counted_bytes else None
        return {
            "path": target.rel,
            "startLine": start,
            "endLine": window.last,
            "totalLines": total,
            "text": "\n".join(window.lines),
            "truncated": window.truncated or (cut_window and window.last == end),
        }

    # -- search_text ---------------------------------------------------------------------

    def _search_text(self, rules: Rules, arguments: dict[str, Any]) -> dict[str, Any]:
        limits = self.limits
        query = _text(arguments, "query", least=1, most=limits.max_query)
        path = _text(arguments, "path", default=".", most=4096)
        glob = _text(arguments, "glob", default=None, most=200)
        sensitive = _flag(arguments, "caseSensitive", default=False)
        target = rules.target(path)
        search = _Search(
            query, sensitive, glob, limits, deadline=self.clock() + limits.search_seconds
        )
        files = [target] if not target.real.is_dir() else self._files_under(rules, target, search)
        for file in files:
            if search.stopped(self.clock()):
                break
            search.file(file)
        return {
            "matches": search.matches,
            "truncated": search.truncated,
            "filesSearched": search.searched,
        }

    def _files_under(self, rules: Rules, folder: Target, search: _Search) -> Iterator[Target]:
        for rel, real, is_dir, is_link in _children(rules, folder, None):
            if search.stopped(self.clock()):
                return
            if is_dir:
                if not is_link:  # a link to a folder inside is searched where it really is
                    yield from self._files_under(rules, Target(rel, real), search)
            elif not is_link and search.wants(rel):
                yield Target(rel, real)


def _children(
    rules: Rules, folder: Target, listing: _Listing | None
) -> Iterator[tuple[str, Path, bool, bool]]:
    """A folder's entries that pass the rules, sorted by name: (rel, real, is_dir, is_link).
    Left out ones count as hidden in `listing`: ignored, secret, and links leading outside."""
    try:
        with os.scandir(folder.real) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:  # a folder this user may not read: nothing to show of it
        return
    for entry in entries:
        rel = entry.name if folder.rel == "." else f"{folder.rel}/{entry.name}"
        is_link = entry.is_symlink()
        real = Path(os.path.realpath(entry.path)) if is_link else Path(entry.path)
        inside = real == rules.root or rules.root in real.parents
        is_dir = real.is_dir() if is_link else entry.is_dir(follow_symlinks=False)
        is_file = real.is_file() if is_link else entry.is_file(follow_symlinks=False)
        if entry.name == ".git":
            continue  # never listed, and not counted: every repository has one
        hidden = (
            not inside
            or not (is_dir or is_file)  # a pipe, a socket, a device, a broken link
            or rules.secret(rel, real, is_dir=is_dir)
            or rules.ignored(rel, is_dir=is_dir)
            or (is_link and _resolved_refused(rules, real))
        )
        if hidden:
            if listing is not None:
                listing.hidden += 1
            continue
        yield rel, real, is_dir, is_link


def _resolved_refused(rules: Rules, real: Path) -> bool:
    try:
        rules.target(real.relative_to(rules.root).as_posix())
    except Refused:
        return True
    return False


class _Listing:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.entries: list[dict[str, Any]] = []
        self.hidden = 0
        self.truncated = False
        self._chars = 0

    def full(self) -> bool:
        return (
            len(self.entries) >= self.limits.max_entries or self._chars >= self.limits.answer_chars
        )

    def add(self, entry: dict[str, Any]) -> None:
        self.entries.append(entry)
        self._chars += len(entry["path"]) + 40


@dataclass
class _Window:
    lines: list[str]
    last: int
    truncated: bool


def _read_window(file: BinaryIO, start: int, end: int, limits: Limits, rel: str) -> _Window:
    """Lines start..end, streaming: nothing past `end` is read, no line is held whole (a
    20 MB file of one line costs a few KiB of memory), and nothing past read_scan_bytes.

    Raises:
        Refused: too_large when the window starts beyond read_scan_bytes.
    """
    lines: list[str] = []
    size = 0
    truncated = False
    for number, head, cut in _lines(file, limits.line_chars * 4, limits.read_scan_bytes):
        if number < start:
            continue
        text = head.decode("utf-8", errors="replace")
        if cut or len(text) > limits.line_chars:
            text = text[: limits.line_chars] + " …[line cut]"
            truncated = True
        size += len(text.encode("utf-8")) + 1
        if size > limits.text_bytes:
            return _Window(lines, start + len(lines) - 1, True)
        lines.append(text)
        if number >= end:
            return _Window(lines, number, truncated)
    if file.tell() > limits.read_scan_bytes:  # stopped by the scan bound, not the file's end
        if not lines:
            raise Refused(
                "too_large",
                f"Line {start} of {rel!r} lies past its first {limits.read_scan_bytes // MIB} "
                "MiB: too far into the file to read.",
            )
        truncated = True
    return _Window(lines, start + len(lines) - 1, truncated)


def _lines(file: BinaryIO, keep: int, most: int) -> Iterator[tuple[int, bytes, bool]]:
    """Each line's number, its first `keep` bytes without the line end, and whether it was
    longer; the rest of a long line is read in chunks and dropped. Stops once `most` bytes
    of the file are read, even within a line."""
    number = 0
    while file.tell() <= most:
        head = file.readline(keep)
        if not head:
            return
        number += 1
        cut = False
        while not head.endswith(b"\n") and file.tell() <= most:
            rest = file.readline(64 * KIB)
            if not rest:
                break
            cut = True
            if rest.endswith(b"\n"):
                break
        yield number, head.rstrip(b"\r\n"), cut


def _count_lines(path: Path) -> int:
    data = path.read_bytes()  # only files up to Limits.counted_bytes get here
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


class _Search:
    def __init__(
        self, query: str, sensitive: bool, glob: str | None, limits: Limits, deadline: float
    ) -> None:
        self.query = query if sensitive else query.lower()
        self.sensitive = sensitive
        self.glob = glob
        self.limits = limits
        self.deadline = deadline
        self.matches: list[dict[str, Any]] = []
        self.searched = 0
        self.scanned = 0
        self.truncated = False
        self._chars = 0

    def wants(self, rel: str) -> bool:
        if self.glob is None:
            return True
        name = rel if "/" in self.glob else rel.rsplit("/", 1)[-1]
        return fnmatch.fnmatch(name, self.glob)

    def stopped(self, now: float) -> bool:
        limits = self.limits
        if (
            len(self.matches) >= limits.max_matches
            or self.scanned >= limits.scan_bytes
            or self._chars >= limits.answer_chars
            or now >= self.deadline
        ):
            self.truncated = True
        return self.truncated

    def file(self, target: Target) -> None:
        """Search one file, unless it is too big, binary, or the scan budget would pass."""
        if not target.real.is_file():  # a pipe named as the path: reading it could wait forever
            return
        size = target.real.stat().st_size
        if size > self.limits.counted_bytes:
            return
        if self.scanned + size > self.limits.scan_bytes:
            self.scanned = self.limits.scan_bytes  # the budget is spent: stop here
            return
        data = target.real.read_bytes()
        if b"\0" in data[:BINARY_PROBE]:
            return
        self.scanned += size
        self.searched += 1
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            found = (line if self.sensitive else line.lower()).find(self.query)
            if found < 0:
                continue
            if len(self.matches) >= self.limits.max_matches:
                self.truncated = True
                return
            text = _around(line, found, self.limits.match_chars)
            self.matches.append({"path": target.rel, "line": number, "text": text})
            self._chars += len(target.rel) + len(text) + 40


def _around(line: str, at: int, most: int) -> str:
    """The line, or `most` characters of it around the match when it is longer."""
    if len(line) <= most:
        return line
    begin = max(0, at - most // 4)
    shown = line[begin : begin + most]
    return ("…" if begin else "") + shown + ("…" if begin + most < len(line) else "")


# -- arguments: each refusal names the field and what it accepts ------------------------------

_MISSING = object()


def _check_fields(tool: str, arguments: object) -> None:
    if tool not in _ACCEPTED:
        raise BadArguments(f"No tool {tool!r}: the tools are {', '.join(TOOLS)}.")
    if not isinstance(arguments, dict):
        raise BadArguments("arguments must be a JSON object.")
    unknown = sorted(set(arguments) - set(_ACCEPTED[tool]))
    if unknown:
        raise BadArguments(
            f"{tool} takes no argument {unknown[0]!r}; it takes {', '.join(_ACCEPTED[tool])}."
        )


def _text(
    arguments: dict[str, Any], field: str, *, default: Any = _MISSING, least: int = 0, most: int
) -> Any:
    value = arguments.get(field, default)
    if value is _MISSING:
        raise BadArguments(
            f"{field} is required: a string of {max(least, 1)} to {most} characters."
        )
    if value is None and default is None:
        return None
    if not isinstance(value, str) or not least <= len(value) <= most or "\0" in value:
        raise BadArguments(f"{field} must be a string of {least} to {most} characters.")
    return value


def _whole(
    arguments: dict[str, Any], field: str, *, default: int, least: int, most: int | None = None
) -> int:
    value = arguments.get(field, default)
    if value is None:
        value = default
    accepted = f"a whole number from {least}" + (f" to {most}" if most is not None else " up")
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadArguments(f"{field} must be {accepted}.")
    if value < least or (most is not None and value > most):
        raise BadArguments(f"{field} is {value}; it must be {accepted}.")
    return value


def _flag(arguments: dict[str, Any], field: str, *, default: bool) -> bool:
    value = arguments.get(field, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise BadArguments(f"{field} must be true or false.")
    return value
