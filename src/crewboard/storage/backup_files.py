"""The files of a backup set: copied or read with their sha256, checked against the manifest,
written and flushed to disk before the set is renamed into place."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from crewboard.storage.pg_tools import BackupError

Advance = Callable[[str, int], None]
MIB = 1024 * 1024


def _ignore(step: str, count: int) -> None:
    """No progress wanted."""


def copy_hashing(
    source: Path, target: Path, step: str | None = None, advance: Advance = _ignore
) -> tuple[int, str]:
    """Copy a file, returning its size and sha256; `advance(step, 1)` per MiB."""
    digest = hashlib.sha256()
    size = 0
    with source.open("rb") as reader, target.open("wb") as writer:
        for chunk in read_chunks(reader):
            digest.update(chunk)
            writer.write(chunk)
            size += len(chunk)
            if step is not None:
                advance(step, 1)
    return size, digest.hexdigest()


def measure(work: Path, relative: str, step: str, advance: Advance) -> dict[str, Any]:
    digest = hashlib.sha256()
    size = 0
    with (work / relative).open("rb") as reader:
        for chunk in read_chunks(reader):
            digest.update(chunk)
            size += len(chunk)
            advance(step, 1)
    return {"path": relative, "size": size, "sha256": digest.hexdigest()}


def verify(source: Path, step: str, entries: Iterable[dict[str, Any]], advance: Advance) -> None:
    for entry in entries:
        path = source / entry["path"]
        if not path.is_file():
            raise BackupError("damaged", f"{path} is missing from the backup set")
        expect(entry, measure(source, entry["path"], step, advance)["sha256"])


def expect(entry: dict[str, Any], sha256: str) -> None:
    if sha256 != entry.get("sha256"):
        raise BackupError(
            "damaged",
            f"{entry['path']} in the backup set does not match its checksum in the manifest: "
            "the set is damaged; restore another one",
        )


def read_chunks(reader: IO[bytes]) -> Iterable[bytes]:
    while chunk := reader.read(MIB):
        yield chunk


def chunks(size: int) -> int:
    return -(-size // MIB)


def write_json(path: Path, data: dict[str, Any]) -> None:
    with path.open("w", encoding="utf-8") as out:
        json.dump(data, out, indent=2)
        out.write("\n")
        out.flush()
        os.fsync(out.fileno())


def fsync(path: Path) -> None:
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def fsync_dir(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
