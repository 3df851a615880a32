"""A hand-in against its previous version, for its page: the summary word by word, the
result line by line (with the words that changed inside a changed line marked), and how the
inbox names a version ("version 2 — revised after your note")."""

from __future__ import annotations

import difflib
import re
from typing import Any

from crewboard.domain.review import Draft

DIFF_CONTEXT = 3  # unchanged lines shown around each change
_WORDS = re.compile(r"\s+|\w+|[^\w\s]")


def word_parts(older: str, newer: str) -> list[dict[str, str]]:
    """The newer text as runs (`kind`: same, added, removed; `text`), words compared."""
    before, after = _WORDS.findall(older), _WORDS.findall(newer)
    parts: list[dict[str, str]] = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            parts.append({"kind": "same", "text": "".join(after[b1:b2])})
            continue
        if a2 > a1:
            parts.append({"kind": "removed", "text": "".join(before[a1:a2])})
        if b2 > b1:
            parts.append({"kind": "added", "text": "".join(after[b1:b2])})
    return parts


def line_rows(older: str, newer: str) -> list[dict[str, Any]]:
    """Rows of the changed stretches of two texts (`kind`: same, added, removed, gap; `parts`
    the words of a changed line, marked against the line it replaced)."""
    before, after = older.splitlines(), newer.splitlines()
    rows: list[dict[str, Any]] = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for group in matcher.get_grouped_opcodes(DIFF_CONTEXT):
        if rows:
            rows.append({"kind": "gap", "text": "…"})
        for op, a1, a2, b1, b2 in group:
            if op == "equal":
                rows.extend({"kind": "same", "text": line} for line in after[b1:b2])
                continue
            paired = op == "replace" and a2 - a1 == b2 - b1
            for line in before[a1:a2]:
                rows.append({"kind": "removed", "text": line})
            for index, line in enumerate(after[b1:b2]):
                row: dict[str, Any] = {"kind": "added", "text": line}
                if paired:
                    row["parts"] = word_parts(before[a1 + index], line)
                rows.append(row)
    return rows


def version_diff(previous: Draft | None, draft: dict[str, Any]) -> dict[str, Any] | None:
    """What changed since the previous version (None without one)."""
    if previous is None:
        return None
    content = line_rows(previous.content or "", draft.get("content") or "")
    return {
        "id": previous.id,
        "title": previous.title,
        "titleChanged": previous.title != draft["title"],
        "summary": word_parts(previous.summary, draft["summary"] or "")
        if previous.summary != draft["summary"]
        else None,
        "content": content,
        "same": not content and previous.summary == draft["summary"],
        "reviewComment": previous.review_comment,
    }


def version_line(view: dict[str, Any], me: str) -> str | None:
    """How the inbox names a hand-in's version: None for a first one."""
    earlier = view.get("earlierVersions") or []
    if not earlier:
        return None
    last = earlier[-1]
    number = view.get("version") or len(earlier) + 1
    if last["status"] == "revision_requested":
        by = (last.get("decidedBy") or {}).get("userId")
        whose = "your" if by == me else "the reviewer's"
        return f"Version {number} — revised after {whose} note"
    return f"Version {number} — handed in again"
