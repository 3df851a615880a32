"""ZIP packages a stranger made (an uploaded DOCX or XLSX): read whole, within bounds, before
anything keeps them, so a package the server cannot read is refused at the door instead of
failing later (or as an internal error).

`zipfile` fails in many ways on a damaged or hostile package: `BadZipFile` (no directory, a
bad CRC, a truncated member), `NotImplementedError` (a "version needed" or a compression
method it does not know), `RuntimeError` (an encrypted member), `zlib.error`, `lzma.LZMAError`,
`EOFError`, `struct.error`, `ValueError`, `KeyError`, `OSError`, `LargeZipFile`.
`ZIP_READ_ERRORS` names them all for every reader of a zip.
"""

from __future__ import annotations

import io
import lzma
import struct
import zipfile
import zlib

MAX_PACKAGE_MEMBERS = 10_000
MAX_PACKAGE_UNPACKED_BYTES = 100 * 1024 * 1024  # a decompression bomb stops here
_CHUNK = 64 * 1024
_ENCRYPTED = 0x1  # general purpose flag bit 0

ZIP_READ_ERRORS: tuple[type[BaseException], ...] = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    NotImplementedError,
    RuntimeError,
    EOFError,
    ValueError,
    KeyError,
    IndexError,
    OSError,
    zlib.error,
    lzma.LZMAError,
    struct.error,
)


class UnreadablePackage(Exception):
    """The package cannot be read whole; the message says why (member named when known)."""


def package_names(data: bytes) -> set[str]:
    """The names in a ZIP package, after reading every member to its end (so a bad CRC, an
    encrypted member or an unknown compression method is found now), at most
    MAX_PACKAGE_MEMBERS members and MAX_PACKAGE_UNPACKED_BYTES unpacked.

    Raises:
        UnreadablePackage: saying why.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            infos = package.infolist()
            if len(infos) > MAX_PACKAGE_MEMBERS:
                raise UnreadablePackage(f"it holds more than {MAX_PACKAGE_MEMBERS} files")
            unpacked = 0
            for info in infos:
                unpacked = _read_member(package, info, unpacked)
            return {info.filename for info in infos}
    except ZIP_READ_ERRORS as error:
        raise UnreadablePackage(_reason(error)) from None


def _read_member(package: zipfile.ZipFile, info: zipfile.ZipInfo, unpacked: int) -> int:
    """Read one member to its end; the running total of bytes unpacked."""
    name = info.filename[:200]
    if info.flag_bits & _ENCRYPTED:
        raise UnreadablePackage(f"its part {name!r} is encrypted")
    try:
        with package.open(info) as member:
            while chunk := member.read(_CHUNK):
                unpacked += len(chunk)
                if unpacked > MAX_PACKAGE_UNPACKED_BYTES:
                    raise UnreadablePackage(
                        f"it unpacks to more than {MAX_PACKAGE_UNPACKED_BYTES // 2**20} MiB"
                    )
    except ZIP_READ_ERRORS as error:
        raise UnreadablePackage(f"its part {name!r} cannot be read: {_reason(error)}") from None
    return unpacked


def _reason(error: BaseException) -> str:
    if isinstance(error, NotImplementedError):
        return "it needs a ZIP feature this server does not read (a newer version or method)"
    if isinstance(error, RuntimeError):
        return "it is encrypted"
    if isinstance(error, zipfile.BadZipFile) and "CRC" in str(error):
        return "a checksum does not match (the file is damaged)"
    return "the file is damaged or truncated"
