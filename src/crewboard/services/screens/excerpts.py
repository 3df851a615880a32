"""Short excerpts of found text with the searched words marked, as (text, marked) parts.

The parts are plain text: a template escapes each and wraps the marked ones in <mark>, so
nothing an agent wrote can run as script in a result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

Part = tuple[str, bool]  # a run of text, and whether it is a searched word

EXCERPT_CHARS = 180  # of the text around the first hit
LEAD_CHARS = 60  # shown before the first hit


def word_pattern(words: Sequence[str], *, whole_words: bool) -> re.Pattern[str]:
    """Any of the words, case-insensitive; with `whole_words`, only where a word stands whole
    (what a text index matches), else anywhere (what LIKE matches)."""
    either = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    if whole_words:
        return re.compile(rf"(?<!\w)(?:{either})(?!\w)", re.IGNORECASE)
    return re.compile(f"(?:{either})", re.IGNORECASE)


def marked(text: str, pattern: re.Pattern[str]) -> list[Part]:
    """The text cut into runs, the searched words marked."""
    parts: list[Part] = []
    at = 0
    for hit in pattern.finditer(text):
        if hit.start() > at:
            parts.append((text[at : hit.start()], False))
        parts.append((hit.group(), True))
        at = hit.end()
    if at < len(text):
        parts.append((text[at:], False))
    return parts


def excerpt(texts: Iterable[str | None], pattern: re.Pattern[str]) -> list[Part]:
    """Around the first hit in the first text that has one (white space made single spaces);
    the start of the first non-empty text when none has."""
    plain = [" ".join(text.split()) for text in texts if text and text.strip()]
    for text in plain:
        hit = pattern.search(text)
        if hit is not None:
            return marked(_window(text, hit.start()), pattern)
    return marked(_window(plain[0], 0), pattern) if plain else []


def _window(text: str, at: int) -> str:
    """About EXCERPT_CHARS of `text` from a little before `at`, cut at spaces, with ellipses."""
    if len(text) <= EXCERPT_CHARS:
        return text
    start = max(0, min(at - LEAD_CHARS, len(text) - EXCERPT_CHARS))
    if start > 0:
        space = text.find(" ", start, at)
        start = space + 1 if space != -1 else start
    end = min(len(text), start + EXCERPT_CHARS)
    if end < len(text):
        space = text.rfind(" ", at + 1, end)
        end = space if space != -1 else end
    return ("…" if start > 0 else "") + text[start:end] + ("…" if end < len(text) else "")
