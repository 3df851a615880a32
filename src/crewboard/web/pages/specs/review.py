"""The spec file page as a document under review: the file's markdown with each thread's
passage marked, each thread knowing where on the page its passage is, its quote shown as the
page shows it; and a person's selection on the page turned back into the source passage."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from crewboard.domain.spec_comments import CONTEXT
from crewboard.errors import ValidationFailed
from crewboard.web.render import render_markdown
from crewboard.web.spec_text import (
    Highlight,
    SpecText,
    TextBlock,
    block_at,
    parse,
    passage_on_page,
    render_spec,
    shown_text,
    source_span,
)

_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
GONE = "That passage is no longer in the file — select it again."


def review_page(text: str, threads: list[dict[str, Any]], *, current: bool) -> SpecText:
    """The file's text rendered; when it is the current revision (the one anchors are in),
    every thread whose passage is still there is marked."""
    marked = [
        Highlight(t["id"], t["anchor"]["start"], t["anchor"]["end"], t["status"] == "resolved")
        for t in threads
        if current and not t["orphaned"]
    ]
    return render_spec(text, marked)


def placed_threads(threads: list[dict[str, Any]], spec: SpecText | None) -> list[dict[str, Any]]:
    """Each thread with `block` (where its passage shows; None when it is not on the page)
    and `quoteHtml` (the quote as the page shows it), in the order of their passages,
    orphaned ones last."""
    placed = []
    for thread in threads:
        anchor = thread["anchor"]
        on_page = None
        if spec is not None and not thread["orphaned"]:
            on_page = passage_on_page(spec.blocks, anchor["start"], anchor["end"])
        block = on_page["block"] if on_page else None
        if spec is not None and block is None and not thread["orphaned"]:
            block = block_at(spec.blocks, anchor["start"])
        shown = on_page["text"] if on_page else None
        placed.append({**thread, "block": block, "quoteHtml": quote_html(anchor["quote"], shown)})
    return placed


def quote_html(quote: str, shown: str | None) -> Markup:
    """The quote rendered as markdown when that shows what the page shows of the passage (a
    whole bold phrase, a link); else the words the page shows, without the source's markup
    (a passage that starts inside bold text)."""
    rendered = render_markdown(quote)
    if shown is None or _words(_TAG.sub("", str(rendered))) == _words(shown):
        return rendered
    return Markup("<p>{}</p>").format(shown)


def _words(text: str) -> str:
    return _SPACE.sub(" ", html.unescape(text)).strip()


# --- a selection on the page ---------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """What the page sends for words selected in the rendered text: the revision it showed,
    the (block, offset) of both ends, and the words as the page showed them."""

    revision: int
    start: tuple[int, int]
    end: tuple[int, int]
    words: str

    @classmethod
    def parse(cls, revision: str, start: str, end: str, words: str) -> Selection:
        """Raises: ValidationFailed when a position is not `block:offset`."""
        try:
            return cls(int(revision), _position(start), _position(end), words)
        except ValueError:
            raise ValidationFailed(GONE, {"field": "quote"}) from None


def _position(value: str) -> tuple[int, int]:
    block, _, offset = value.partition(":")
    return int(block), int(offset)


@dataclass(frozen=True)
class Passage:
    quote: str
    prefix: str
    suffix: str
    start: int


def passage_of(text: str, selection: Selection) -> Passage:
    """The source passage of `selection` in `text` (the revision the page showed).

    Raises:
        ValidationFailed: the selection names no shown words, or words the page did not show
            there (the page and the file disagree).
    """
    blocks: list[TextBlock] = parse(text)[1]
    span = source_span(blocks, selection.start, selection.end)
    if span is None or _words(shown_text(blocks, selection.start, selection.end)) != _words(
        selection.words
    ):
        raise ValidationFailed(GONE, {"field": "quote"})
    start, end = span
    return Passage(
        quote=text[start:end],
        prefix=text[max(0, start - CONTEXT) : start],
        suffix=text[end : end + CONTEXT],
        start=start,
    )


def for_people(error: ValidationFailed) -> ValidationFailed:
    """A refused passage in the words of the page (the service's words are for agents)."""
    field = error.details.get("field")
    if field not in ("anchorQuote", "anchorPrefix", "anchorSuffix"):
        return error
    count = error.details.get("occurrences")
    if isinstance(count, int) and count > 1:
        return ValidationFailed(
            f"Those words are in the file {count} times — select a longer passage.",
            {"field": "quote"},
        )
    return ValidationFailed(GONE, {"field": "quote"})
