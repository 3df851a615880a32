"""Short excerpts of found text with the searched words marked, as (text, marked) parts.

The parts are plain text: a template escapes each and wraps the marked ones in <mark>, so
nothing an agent wrote can run as script in a result.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token

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


@functools.cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


_BOX = re.compile(r"^\[[ xX\-]\]\s+")  # a task list's box, "[x] done"


def plain_text(source: str | None) -> str:
    """Markdown as the words a reader sees: no `**`, backticks, `#`, link targets or list
    marks; blocks and lines become spaces. Code keeps its text; an image its alt text."""
    if not source:
        return ""
    if not _MARKUP.search(source):
        return source  # nothing markdown would change: most text, and every short title
    pieces: list[str] = []
    for token in _parser().parse(source):
        if token.type == "inline":
            words = "".join(_inline_text(child) for child in token.children or [])
            pieces.append(_BOX.sub("", words))
        elif token.type in ("fence", "code_block"):
            pieces.append(token.content)
    return " ".join(piece for piece in pieces if piece.strip())


def _inline_text(token: Token) -> str:
    if token.type in ("text", "code_inline", "html_inline"):
        return token.content
    if token.type in ("softbreak", "hardbreak"):
        return " "
    if token.type == "image":
        return "".join(_inline_text(child) for child in token.children or [])
    return ""


# What can make markdown differ from its plain words (a cheap test before parsing).
_MARKUP = re.compile(r"[*_`#>\[\]!<|~\\]|^\s*([-+]|\d+[.)])\s|^ {4}|\n\s*[-=]{2,}", re.M)
