"""Opaque list cursors: a position in a listing, sealed to the caller and the filters.

A cursor carries its kind, the position it continues after and a digest of (kind, caller,
filters, position). A cursor sent by another caller, with other filters or edited by hand
fails the digest and is refused naming `cursor`; the caller starts again without one. A new
cursor format takes a new kind, so cursors of the older format are refused the same way.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from crewboard.errors import ValidationFailed

Position = list[int | str]


def _digest(kind: str, caller: str, binding: Mapping[str, Any], position: Sequence[Any]) -> str:
    text = json.dumps([kind, caller, binding, list(position)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def seal(
    kind: str, position: Sequence[int | str], *, caller: str, binding: Mapping[str, Any]
) -> str:
    """The cursor continuing after `position`, good only for this caller and these filters."""
    raw = json.dumps([kind, *position, _digest(kind, caller, binding, position)])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def unseal(
    kind: str, cursor: str, *, caller: str, binding: Mapping[str, Any], tool: str
) -> Position:
    """The position a cursor continues after.

    Raises:
        ValidationFailed: naming `cursor`: not a cursor of this kind (or an older format), or
            one issued for other filters or another caller.
    """
    try:
        decoded = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        decoded = None
    if (
        not isinstance(decoded, list)
        or len(decoded) < 2
        or decoded[0] != kind
        or not all(isinstance(part, int | str) for part in decoded)
    ):
        raise ValidationFailed.field(
            "cursor", f"is not a current cursor from {tool}; start again without one."
        )
    position: Position = decoded[1:-1]
    if decoded[-1] != _digest(kind, caller, binding, position):
        raise ValidationFailed.field(
            "cursor",
            "was issued for other filters or another caller; send the filters it came with, "
            "or start again without a cursor.",
        )
    return position
