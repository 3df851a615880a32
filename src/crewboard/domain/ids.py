"""Opaque prefixed ids (`usr_…`, `prj_…`, `tok_…`): sortable by creation time, hard to guess."""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789abcdefghijkmnopqrstuvwxyz"  # no 'l': it reads as '1'


def _encode(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, digit = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


def new_id(prefix: str) -> str:
    """A new id: prefix, 9 characters of milliseconds since the epoch, 13 random characters."""
    millis = time.time_ns() // 1_000_000
    return f"{prefix}_{_encode(millis, 9)}{_encode(secrets.randbits(64), 13)}"


PREFIXES = {
    "user": "usr",
    "workspace": "wsp",
    "project": "prj",
    "token": "tok",
}
