"""ZIP packages for the upload tests: a small DOCX, and copies of it damaged or made hostile
in each way `zipfile` cannot read (written byte by byte into its headers)."""

from __future__ import annotations

import io
import random
import struct
import zipfile
from collections.abc import Callable

LOCAL = b"PK\x03\x04"
CENTRAL = b"PK\x01\x02"


def docx(*, stored: bool = False) -> bytes:
    """A minimal DOCX: its content types and document part (deflated unless `stored`)."""
    buffer = io.BytesIO()
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(buffer, "w", method) as package:
        package.writestr("[Content_Types].xml", "<Types/>" * 20)
        package.writestr("word/document.xml", "<w:document>words</w:document>" * 40)
    return buffer.getvalue()


def _headers(data: bytes, signature: bytes) -> list[int]:
    found, at = [], data.find(signature)
    while at != -1:
        found.append(at)
        at = data.find(signature, at + 1)
    return found


def _patch(data: bytes, *, local: tuple[int, bytes] | None, central: tuple[int, bytes]) -> bytes:
    """Write bytes at an offset of every local header and every central directory entry."""
    out = bytearray(data)
    for signature, change in ((LOCAL, local), (CENTRAL, central)):
        if change is None:
            continue
        offset, value = change
        for at in _headers(data, signature):
            out[at + offset : at + offset + len(value)] = value
    return bytes(out)


def high_version_needed() -> bytes:
    """The directory says a ZIP version 25.5 is needed to extract (zipfile knows 6.3)."""
    return _patch(docx(), local=None, central=(6, struct.pack("<H", 255)))


def encrypted_member() -> bytes:
    """Every member flagged as encrypted (general purpose bit 0)."""
    return _patch(docx(), local=(6, b"\x01\x00"), central=(8, b"\x01\x00"))


def truncated() -> bytes:
    data = docx()
    return data[: len(data) * 2 // 3]


def unsupported_method() -> bytes:
    """Compression method 99 (AES in WinZip's scheme), which zipfile does not read."""
    return _patch(docx(), local=(8, struct.pack("<H", 99)), central=(10, struct.pack("<H", 99)))


def lzma_garbage() -> bytes:
    """Compression method 14 (LZMA) over bytes that are not LZMA."""
    return _patch(
        docx(stored=True), local=(8, struct.pack("<H", 14)), central=(10, struct.pack("<H", 14))
    )


def bad_crc() -> bytes:
    """The directory's CRC-32 of every member is wrong."""
    return _patch(docx(), local=(14, b"\0\0\0\0"), central=(16, b"\0\0\0\0"))


def broken_deflate() -> bytes:
    """The document part's deflated bytes overwritten (inflating them fails)."""
    data = bytearray(docx())
    at = data.find(b"word/document.xml") + len("word/document.xml")
    data[at : at + 12] = b"\xff" * 12
    return bytes(data)


def bomb(unpacked: int) -> bytes:
    """A DOCX whose document part unpacks to `unpacked` bytes of zeros."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("[Content_Types].xml", "<Types/>")
        with package.open("word/document.xml", "w") as part:
            block = bytes(1024 * 1024)
            for _ in range(unpacked // len(block)):
                part.write(block)
            part.write(bytes(unpacked % len(block)))
    return buffer.getvalue()


def many_members(count: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as package:
        package.writestr("[Content_Types].xml", "<Types/>")
        package.writestr("word/document.xml", "<w/>")
        for index in range(count):
            package.writestr(f"m/{index}", b"")
    return buffer.getvalue()


UNREADABLE: dict[str, Callable[[], bytes]] = {
    "high-version-needed": high_version_needed,
    "encrypted-member": encrypted_member,
    "truncated": truncated,
    "unsupported-compression-method": unsupported_method,
    "lzma-garbage": lzma_garbage,
    "bad-crc": bad_crc,
    "broken-deflate": broken_deflate,
}


def mutants(count: int, seed: int = 34) -> list[bytes]:
    """`count` copies of a DOCX, each with a few bytes of its headers and directory changed
    (the probe that found high version-needed fields: 3 of 150)."""
    data = docx()
    spots = [at + offset for at in _headers(data, CENTRAL) for offset in range(4, 46)] + [
        at + offset for at in _headers(data, LOCAL) for offset in range(4, 30)
    ]
    chooser = random.Random(seed)  # noqa: S311 - a repeatable probe, not a secret
    made = []
    for _ in range(count):
        out = bytearray(data)
        for spot in chooser.sample(spots, 3):
            out[spot] = chooser.randrange(256)
        made.append(bytes(out))
    return made
