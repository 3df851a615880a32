"""Long texts in answers to agents: cut to fit with a flag and their length, read in windows.

Every answer over MCP fits ANSWER_BUDGET bytes of compact JSON. A text too long for its answer
comes as a prefix, flagged `<field>Truncated: true` with `<field>Length` (the whole text's
length). The rest is read in windows: from a character offset, at most `limit` characters and
no more than the room left in the answer, with `nextOffset` to go on from (null at the end).

Offsets and lengths count Unicode code points (Python's str indices): an emoji is one
character, never half of a UTF-16 surrogate pair, so the windows joined in order give back the
text exactly. Room is counted in bytes as a reply carries them: UTF-8 with JSON's escapes (a
quote or a backslash takes 2 bytes, a control character such as U+0001 takes 6, a CJK
character 3). Every area that cuts or windows a text uses this module.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from crewboard.errors import ValidationFailed

ANSWER_BUDGET = 48 * 1024  # bytes of compact JSON (UTF-8) in any one answer
WINDOW_LIMIT = 40_000  # the most characters one window holds, and the default


def json_size(value: Any) -> int:
    """Bytes of `value` as compact JSON in UTF-8, the way a reply carries it."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return len(text.encode("utf-8", "surrogatepass"))


def text_size(text: str) -> int:
    """Bytes `text` takes inside a JSON string: its escapes counted, the two quotes not."""
    return json_size(text) - 2


def fitting_chars(text: str, room: int, *, start: int = 0, limit: int | None = None) -> int:
    """How many characters of `text` from `start` (at most `limit`) fit in `room` bytes of a
    JSON string."""
    most = len(text) - start if limit is None else min(limit, len(text) - start)
    high = min(most, max(room, 0))  # every character takes at least one byte
    if text_size(text[start : start + high]) <= room:
        return high
    low = 0  # fits; `high` does not
    while high - low > 1:
        middle = (low + high) // 2
        if text_size(text[start : start + middle]) <= room:
            low = middle
        else:
            high = middle
    return low


def _flags(field: str, length: int) -> dict[str, Any]:
    return {f"{field}Truncated": True, f"{field}Length": length}


def cut_texts(view: dict[str, Any], fields: Sequence[str], room: int) -> dict[str, Any]:
    """`view` with its text `fields` shortened so that together they take at most `room` bytes.

    A text that fits keeps all of it; the shortest are served first and the room they leave is
    shared evenly by the longer ones. A cut text is a prefix, followed in the view by
    `<field>Truncated: true` and `<field>Length`. The view is returned as is when all fit.
    """
    present = [f for f in fields if isinstance(view.get(f), str)]
    sizes = {f: text_size(view[f]) for f in present}
    if sum(sizes.values()) <= room:
        return view
    left = room - sum(json_size(_flags(f, len(view[f]))) for f in present)
    ordered = sorted(present, key=sizes.__getitem__)
    kept: dict[str, str] = {}
    for done, name in enumerate(ordered):
        share = max(left, 0) // (len(ordered) - done)
        text: str = view[name]
        if sizes[name] > share:
            text = text[: fitting_chars(text, share)]
            kept[name] = text
        left -= text_size(text)
    out: dict[str, Any] = {}
    for key, value in view.items():
        if key in kept:
            out[key] = kept[key]
            out.update(_flags(key, len(value)))
        else:
            out[key] = value
    return out


def cut_text(view: dict[str, Any], field: str, room: int) -> dict[str, Any]:
    """`view` shortened so its whole JSON takes at most `room` bytes by cutting `field` (flagged
    as `cut_texts` does); as is when it fits or has no such text."""
    text = view.get(field)
    if not isinstance(text, str) or json_size(view) <= room:
        return view
    return cut_texts(view, (field,), room - json_size({**view, field: ""}))


def leading_rows(rows: Sequence[Any], room: int) -> list[Any]:
    """The leading `rows` whose JSON array takes at most `room` bytes (maybe none)."""
    kept: list[Any] = []
    used = 1  # the brackets, less the comma the first row does not need
    for row in rows:
        used += json_size(row) + 1
        if used > room:
            break
        kept.append(row)
    return kept


def check_window(
    offset: int, limit: int, *, offset_field: str, limit_field: str, maximum: int = WINDOW_LIMIT
) -> None:
    """Raises: ValidationFailed naming the field: a negative offset, a limit outside 1..maximum."""
    if offset < 0:
        raise ValidationFailed.field(offset_field, f"must be 0 or more; got {offset}.")
    if not 1 <= limit <= maximum:
        raise ValidationFailed.field(
            limit_field, f"must be between 1 and {maximum} characters; got {limit}."
        )


def window(
    head: dict[str, Any],
    text: str,
    *,
    offset: int,
    limit: int,
    budget: int = ANSWER_BUDGET,
    offset_field: str,
) -> dict[str, Any]:
    """`head` followed by one window of `text`: offset, text, length, nextOffset.

    The window holds at most `limit` characters from `offset`, fewer when more would not fit in
    `budget` bytes of JSON (never none before the end, so reading on always moves).

    Raises:
        ValidationFailed: (offset_field) the offset is past the end of the text.
    """
    length = len(text)
    if offset > length:
        raise ValidationFailed.field(
            offset_field, f"{offset} is past the end: the text has {length} characters."
        )
    answer = {**head, "offset": offset, "text": "", "length": length, "nextOffset": length}
    room = budget - json_size(answer)
    taken = fitting_chars(text, room, start=offset, limit=limit)
    if taken == 0 and offset < length:
        taken = 1
    end = offset + taken
    answer["text"] = text[offset:end]
    answer["nextOffset"] = end if end < length else None
    return answer
