"""Context receipts: every input one context pack handed out in full, with its version, so the
review of a draft built from it can name what changed since. Pure values, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Receipt:
    """`items` holds one entry per input handed out: its kind, id and version."""

    id: str
    project_id: str
    task_id: str
    token_id: str
    items: list[dict[str, Any]]
    created_at: datetime


@dataclass(frozen=True)
class ContextPack:
    """A task's context pack and what became of its receipt: `receipt_id` for a token that can
    hand in, or `no_receipt` (the reason) when the project has no accepted memory. `pack` is
    the pack's JSON, built within its byte budget (services/board/context.py)."""

    pack: Mapping[str, Any]
    receipt_id: str | None = None
    no_receipt: str | None = None
