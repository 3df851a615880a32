"""Two texts compared line by line for a page: the rows of a unified diff, each kept, added,
removed, or the header of a hunk (spec file revisions, artifact files)."""

from __future__ import annotations

import difflib
from typing import Any

DIFF_CONTEXT = 3  # unchanged lines shown around each change


def diff_rows(older: str, newer: str, older_name: str, newer_name: str) -> list[dict[str, Any]]:
    """The rows (`kind`: same, added, removed, hunk; `text`); none when the texts are equal."""
    rows = []
    for line in difflib.unified_diff(
        older.splitlines(), newer.splitlines(), older_name, newer_name, n=DIFF_CONTEXT,
        lineterm="",
    ):  # fmt: skip
        if line.startswith(("+++", "---")):
            continue
        kind = "same"
        if line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "added"
        elif line.startswith("-"):
            kind = "removed"
        rows.append({"kind": kind, "text": line})
    return rows
