"""The export archive's format (see `services/transfer/archive.py`): its name and version, the
limits an import holds it to, and the patterns of ids and digests in it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

FORMAT = "crewboard-export"
VERSION = 1
DIGEST = re.compile(r"^[0-9a-f]{64}$")
ANY_ID = re.compile(r"\b[a-z]{2,8}_[0-9a-km-z]{22}\b")  # crewboard.domain.ids: prefix_22 chars
AN_ID = r"^[a-z]{2,8}_[0-9a-km-z]{22}$"  # one id, whole

Advance = Callable[[str, int], None]


def no_progress(step: str, count: int) -> None:
    """No progress shown."""


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def counted(items: Iterator[dict[str, Any]], advance: Advance) -> Iterator[dict[str, Any]]:
    """The items, `advance("rows", …)` every 500 of them and for the rest at the end."""
    done = 0
    for row in items:
        yield row
        done += 1
        if done % 500 == 0:
            advance("rows", 500)
    advance("rows", done % 500)
