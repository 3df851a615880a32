"""Two texts compared line by line for a page: the rows of a unified diff, each kept, added,
removed, or the header of a hunk (spec file revisions, artifact files)."""

from __future__ import annotations

import difflib
import re
from typing import Any

DIFF_CONTEXT = 3  # unchanged lines shown around each change
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SIGNS = {"+": "added", "-": "removed", " ": "same"}


def diff_rows(older: str, newer: str, older_name: str, newer_name: str) -> list[dict[str, Any]]:
    """The rows (`kind`: same, added, removed, hunk; `text`: the unified diff's line, sign
    first); none when the texts are equal. Each row also has `line`, its text without the sign,
    and `old` / `new`, its line numbers in each text (None where it has none): a page shows the
    sign in a column of its own, so it is never taken for part of the line."""
    rows: list[dict[str, Any]] = []
    old_at = new_at = 0
    for line in difflib.unified_diff(
        older.splitlines(), newer.splitlines(), older_name, newer_name, n=DIFF_CONTEXT,
        lineterm="",
    ):  # fmt: skip
        if line.startswith(("+++", "---")):
            continue
        hunk = _HUNK.match(line)
        if hunk is not None:
            old_at, new_at = int(hunk[1]), int(hunk[3])
            where = f"Lines {new_at}–{new_at + max(int(hunk[4] or 1), 1) - 1}"
            rows.append({"kind": "hunk", "text": line, "line": where, "old": None, "new": None})
            continue
        kind = _SIGNS.get(line[:1], "same")
        row: dict[str, Any] = {"kind": kind, "text": line, "line": line[1:]}
        row["old"] = row["new"] = None
        if kind != "added":
            row["old"], old_at = old_at, old_at + 1
        if kind != "removed":
            row["new"], new_at = new_at, new_at + 1
        rows.append(row)
    return rows
