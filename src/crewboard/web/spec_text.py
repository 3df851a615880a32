"""A spec file's markdown rendered with its source positions: what a selection on the page is in
the file, and where each thread's passage shows on the page.

The page shows rendered markdown, but a thread anchors on the file's source text. Each block
of text the page shows (a paragraph, a heading, a list item's words, a table cell, a code
block) is wrapped in `<span class="src" data-b="N">`; every character of its rendered text
(what the browser's text nodes hold) knows the source characters it comes from (`spans`). A
selection is sent as block and offset of its two ends; `source_span` turns it into the exact
source substring, whatever formatting it crosses (bold, links, code, list items, lines).
Threads whose passage is on the page are marked in the text with `<mark>`.

markdown-it-py gives block line ranges (`token.map`) but no inline positions: the inline
source of each block is walked along its tokens, with the rules that skip source the page
never shows (a link's destination, an image, a code span's backticks) wrapped to record
where they start and end.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import autolink, backtick, image, link
from markdown_it.rules_inline.state_inline import StateInline
from markdown_it.token import Token
from markupsafe import Markup

from crewboard.domain.tasks_md import parse as parse_boxes
from crewboard.web.render import clean_html

Span = tuple[int, int]  # source characters [start, end) of one rendered character
_ENTITY = re.compile(r"&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});")
_SKIPPED_RULES = {"link": link, "image": image, "autolink": autolink, "backticks": backtick}
_BOX_AT_START = re.compile(r"^\[[ xX-]\][ \t]+")
TASK_LINE = "data-task-line"  # on a checkbox line's <li>: the line number of its box


@dataclass(frozen=True)
class Highlight:
    """A thread's passage in the source text, to mark on the page."""

    thread_id: str
    start: int
    end: int
    resolved: bool


@dataclass
class TextBlock:
    """One block of text as the page shows it, each character with its source span."""

    index: int
    text: str = ""
    spans: list[Span] = field(default_factory=list)
    chars: list[str] = field(default_factory=list, repr=False)  # `text` while it is built

    def add(self, char: str, span: Span) -> None:
        self.chars.append(char)
        self.spans.append(span)

    def add_run(self, text: str, positions: list[int]) -> None:
        """Characters that are the source characters at `positions`, one for one."""
        self.chars.append(text)
        self.spans.extend((at, at + 1) for at in positions)

    def finish(self) -> TextBlock:
        self.text, self.chars = "".join(self.chars), []
        return self


@dataclass(frozen=True)
class Title:
    """A checkbox line's title: its block of text (the page wraps it in the block's numbered
    span) and its HTML inside that span."""

    block: int
    html: Markup


@dataclass(frozen=True)
class SpecText:
    html: Markup
    blocks: tuple[TextBlock, ...]
    # a checkbox line's title (its own numbered block), by line number; its <li> in `html`
    # carries TASK_LINE and holds only the detail: the page puts the box and title in front
    titles: dict[int, Title] = field(default_factory=dict)


# --- parsing with positions ----------------------------------------------------------------------


def _recording(rule: Callable[[StateInline, bool], bool]) -> Callable[[StateInline, bool], bool]:
    """`rule`, noting on the tokens it makes the source range it consumed (`meta["src"]`)."""

    def recorded(state: StateInline, silent: bool) -> bool:
        start, before = state.pos, len(state.tokens)
        matched = rule(state, silent)
        if matched and not silent:
            for token in state.tokens[before:]:
                if token.type in ("link_open", "image", "code_inline"):
                    token.meta.setdefault("src", (start, state.pos))
                    break
            if len(state.tokens) > before and state.tokens[-1].type == "link_close":
                state.tokens[-1].meta["src"] = (start, state.pos)
        return matched

    return recorded


@functools.cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    for name, rule in _SKIPPED_RULES.items():
        md.inline.ruler.at(name, _recording(rule))
    return md


@functools.cache
def _inline_renderer() -> RendererHTML:
    return RendererHTML()


def _line_starts(source: str) -> list[int]:
    starts = [0]
    starts.extend(at + 1 for at, char in enumerate(source) if char == "\n")
    return starts


def _line(source: str, starts: list[int], number: int) -> tuple[int, str]:
    """Where line `number` starts, and its text without the line break (and a CR before it)."""
    if number >= len(starts):
        return len(source), ""
    start = starts[number]
    end = starts[number + 1] - 1 if number + 1 < len(starts) else len(source)
    return start, source[start:end].removesuffix("\r")


def _content_positions(source: str, starts: list[int], first_line: int, content: str) -> list[int]:
    """The source position of each character of a block's content (its lines without the
    markers and indentation markdown took off: `> `, `- `, `## `…)."""
    positions: list[int] = []
    for number, piece in enumerate(content.split("\n")):
        line_start, text = _line(source, starts, first_line + number)
        at = _piece_start(text, piece)
        positions.extend(line_start + min(at + k, len(text)) for k in range(len(piece)))
        positions.append(line_start + len(text))  # the line break after the piece
    return positions[:-1]


def _piece_start(text: str, piece: str) -> int:
    """Where `piece` (a line of a block's content) starts in the source line `text`: at its
    end (markers and indentation come first), or where it first is."""
    shown = piece.rstrip()
    if shown and text.rstrip().endswith(shown):
        return len(text.rstrip()) - len(shown)
    found = text.find(piece)
    return found if found >= 0 else 0


# --- walking one block's inline tokens -------------------------------------------------------------


class _Walk:
    """The inline tokens of one block, matched against its inline source `src`, whose
    characters are at `where` in the file."""

    def __init__(self, src: str, where: list[int], block: TextBlock) -> None:
        self.src, self.where, self.block, self.cursor = src, where, block, 0

    def at(self, start: int, end: int) -> Span:
        last = len(self.where) - 1
        if last < 0:
            return (0, 0)
        first = self.where[min(start, last)]
        return (first, self.where[min(max(end - 1, start), last)] + 1)

    def token(self, token: Token) -> None:
        kind = token.type
        if kind == "text":
            self.text(token.content)
        elif kind in ("softbreak", "hardbreak"):
            found = self.src.find("\n", self.cursor)
            at = found if found >= 0 else self.cursor
            self.block.add("\n", self.at(at, at + 1))
            self.cursor = at + 1
            while self.cursor < len(self.src) and self.src[self.cursor] in " \t":
                self.cursor += 1
        elif kind == "code_inline":
            self.code(token)
        elif kind in ("link_open", "image", "link_close") and "src" in token.meta:
            start, end = token.meta["src"]
            self.cursor = end if kind != "link_open" else start + 1
        elif token.markup and self.src.startswith(token.markup, self.cursor):
            self.cursor += len(token.markup)  # emphasis delimiters

    def text(self, content: str) -> None:
        at = self.cursor
        if self.src.startswith(content, at) and "&" not in content and "\\" not in content:
            self.block.add_run(content, self.where[at : at + len(content)])  # the usual case
            self.cursor = at + len(content)
            return
        for char in content:
            self.char(char)

    def char(self, char: str) -> None:
        src, at = self.src, self.cursor
        entity = _ENTITY.match(src, at)
        if entity and char in html.unescape(entity.group()):
            self.block.add(char, self.at(at, entity.end()))
            if html.unescape(entity.group()).endswith(char):
                self.cursor = entity.end()
        elif src.startswith(char, at):
            self.block.add(char, self.at(at, at + 1))
            self.cursor = at + 1
        elif src.startswith("\\" + char, at):
            self.block.add(char, self.at(at, at + 2))
            self.cursor = at + 2
        else:  # not where expected (a plugin changed the text): the next copy of it
            found = src.find(char, at)
            found = found if found >= 0 else at
            self.block.add(char, self.at(found, found + 1))
            self.cursor = found + 1 if found < len(src) else at

    def code(self, token: Token) -> None:
        start, end = token.meta.get("src", (self.cursor, self.cursor))
        marker = len(token.markup)
        inner = self.src[start + marker : end - marker].replace("\n", " ")
        skip = 1 if len(inner) > 2 and inner[0] == inner[-1] == " " and inner.strip() else 0
        first = start + marker + skip
        for k, char in enumerate(token.content):
            self.block.add(char, self.at(first + k, first + k + 1))
        self.cursor = end


# --- rendering ---------------------------------------------------------------------------------


def _code_block(source: str, starts: list[int], token: Token, block: TextBlock) -> None:
    """A fenced or indented code block: each line of its content is the end of a source line."""
    assert token.map is not None  # noqa: S101 - block tokens have their lines
    first = token.map[0] + (1 if token.type == "fence" else 0)
    for number, piece in enumerate(token.content.split("\n")[:-1]):
        line_start, text = _line(source, starts, first + number)
        at = len(text) - len(piece) if text.endswith(piece) else 0
        for k, char in enumerate(piece):
            block.add(char, (line_start + at + k, line_start + at + k + 1))
        block.add("\n", (line_start + len(text), line_start + len(text) + 1))


def parse(source: str) -> tuple[list[Token], list[TextBlock]]:
    """The block tokens of `source`, and the text blocks the page shows, in order; each block's
    text-making token carries its index in `meta["block"]`."""
    tokens = _take_boxes(source, _parser().parse(source))
    starts = _line_starts(source)
    blocks: list[TextBlock] = []
    row_cursor = 0  # in a table row: where the next cell's content is looked for
    for number, token in enumerate(tokens):
        if token.type == "tr_open":
            row_cursor = 0
        if token.type not in ("inline", "fence", "code_block") or token.map is None:
            continue
        block = TextBlock(len(blocks))
        token.meta["block"] = block.index
        if token.type != "inline":
            _code_block(source, starts, token, block)
        else:
            if tokens[number - 1].type in ("th_open", "td_open"):
                where, row_cursor = _cell(source, starts, token, row_cursor)
            else:
                where = _content_positions(source, starts, token.map[0], token.content)
            walk = _Walk(token.content, where, block)
            for child in token.children or []:
                walk.token(child)
        blocks.append(block.finish())
    return tokens, blocks


def _take_boxes(source: str, tokens: list[Token]) -> list[Token]:
    """`tokens` with each checkbox line's title (after its box) as an inline token of its own
    (`meta["task_line"]`) just after its list item opens, and its paragraph keeping only the
    lines after the title (its detail), hidden when none are left. The box itself is no text
    of the page: the page shows a checkbox for it."""
    if "[" not in source:
        return tokens
    items = {item.line for item in parse_boxes(source.encode("utf-8"))}
    if not items:
        return tokens
    md = _parser()
    out: list[Token] = []
    for at, token in enumerate(tokens):
        out.append(token)
        if token.type != "list_item_open" or not token.map or token.map[0] + 1 not in items:
            continue
        if at + 3 >= len(tokens) or tokens[at + 1].type != "paragraph_open":
            continue
        opening, inline, closing = tokens[at + 1], tokens[at + 2], tokens[at + 3]
        box = _BOX_AT_START.match(inline.content) if inline.type == "inline" else None
        if box is None or inline.map is None:
            continue
        first, _, rest = inline.content.partition("\n")
        title = Token("inline", "", 0, content=first[box.end() :].rstrip())
        title.map = [inline.map[0], inline.map[0] + 1]
        title.children = md.parseInline(title.content, {})[0].children or []
        title.meta = {"task_line": inline.map[0] + 1}
        out.append(title)
        token.attrSet(TASK_LINE, str(inline.map[0] + 1))
        inline.content = rest
        if rest.strip():
            inline.children = md.parseInline(rest, {})[0].children or []
            inline.map = [inline.map[0] + 1, inline.map[1]]
        else:
            inline.children, inline.map = [], None
        opening.hidden = closing.hidden = not rest.strip()
    return out


def _cell(source: str, starts: list[int], token: Token, cursor: int) -> tuple[list[int], int]:
    """A table cell's content positions (it is on its row's line after the cells before it),
    and where the next cell is looked for."""
    assert token.map is not None  # noqa: S101 - checked by the caller
    line_start, text = _line(source, starts, token.map[0])
    found = text.find(token.content, cursor) if token.content else cursor
    found = found if found >= 0 else cursor
    end = found + len(token.content)
    return [line_start + found + k for k in range(len(token.content))], end


def render_spec(source: str, highlights: Sequence[Highlight] = ()) -> SpecText:
    """`source` as safe HTML with its blocks of text numbered and `highlights` marked."""
    tokens, blocks = parse(source)
    marks = _Marks(highlights)
    titles: dict[int, Title] = {}
    for token in tokens:
        index = token.meta.get("block") if token.meta else None
        if index is None:
            continue
        shown = _render_block(token, blocks[index], marks)
        if "task_line" in token.meta:  # shown in the box's label, not in the list item
            inner = shown[shown.index(">") + 1 : -len("</span>")]
            titles[token.meta["task_line"]] = Title(index, _clean(inner))
            token.children = []
        elif token.type == "inline":  # rendered in place, so the blocks around it stay as they are
            token.children = [Token("html_inline", "", 0, content=shown)]
        else:
            token.type, token.content = "html_block", shown
    md = _parser()
    return SpecText(_clean(md.renderer.render(tokens, md.options, {})), tuple(blocks), titles)


def _clean(rendered: str) -> Markup:
    return clean_html(
        rendered,
        tags={"span", "mark"},
        attributes={
            "span": {"class", "data-b", "id"},
            "mark": {"class", "data-threads"},
            "code": {"class"},
            "li": {TASK_LINE},
        },
    )


def _render_block(token: Token, block: TextBlock, marks: _Marks) -> str:
    """One block's HTML inside its numbered span, the highlighted characters marked."""
    opening = f'<span class="src" data-b="{block.index}" id="b{block.index}">'
    if token.type != "inline":
        language = token.info.strip().split(" ")[0] if token.type == "fence" else ""
        kind = f' class="language-{html.escape(language)}"' if language else ""
        body = marks.wrap(block, 0, len(block.text))
        return f"<pre><code{kind}>{opening}{body}</span></code></pre>\n"
    md = _parser()
    parts: list[str] = [opening]
    shown = 0
    for child in token.children or []:
        if child.type in ("text", "code_inline", "softbreak", "hardbreak"):
            size = 1 if child.type in ("softbreak", "hardbreak") else len(child.content)
            body = marks.wrap(block, shown, shown + size)
            shown += size
            if child.type == "code_inline":
                body = f"<code>{body}</code>"
            elif child.type == "hardbreak":
                body = f"<br />{body}"
            parts.append(body)
        else:
            parts.append(_inline_renderer().renderInline([child], md.options, {}))
    parts.append("</span>")
    return "".join(parts)


class _Marks:
    """Which threads cover each rendered character, as `<mark>` elements."""

    def __init__(self, highlights: Sequence[Highlight]) -> None:
        self.highlights = list(highlights)

    def covering(self, span: Span) -> list[Highlight]:
        return [h for h in self.highlights if span[0] < h.end and span[1] > h.start]

    def wrap(self, block: TextBlock, start: int, end: int) -> str:
        """Rendered characters `start`..`end` of `block` as HTML, runs under the same threads
        in one `<mark>`."""
        if start >= end or not self.covering((block.spans[start][0], block.spans[end - 1][1])):
            return html.escape(block.text[start:end], quote=False)
        out: list[str] = []
        run: list[str] = []
        current: tuple[str, ...] = ()
        resolved = True
        for k in range(start, end):
            over = self.covering(block.spans[k])
            ids = tuple(h.thread_id for h in over)
            if ids != current:
                out.append(_marked(run, current, resolved))
                run, current = [], ids
                resolved = all(h.resolved for h in over)
            run.append(block.text[k])
        out.append(_marked(run, current, resolved))
        return "".join(out)


def _marked(run: list[str], threads: tuple[str, ...], resolved: bool) -> str:
    text = html.escape("".join(run), quote=False)
    if not threads or not text:
        return text
    state = "resolved" if resolved else "open"
    return f'<mark class="hl {state}" data-threads="{" ".join(threads)}">{text}</mark>'


# --- from the page back to the source ------------------------------------------------------------


def source_span(
    blocks: Sequence[TextBlock], start: tuple[int, int], end: tuple[int, int]
) -> Span | None:
    """The source characters of the rendered text from (block, offset) `start` to `end`
    (offsets count characters of a block's text, the end's excluded); None when that names
    no shown character."""
    (first, first_at), (last, last_at) = start, end
    if not (0 <= first <= last < len(blocks)):
        return None
    covered: list[Span] = []
    for index in range(first, last + 1):
        spans = blocks[index].spans
        low = first_at if index == first else 0
        high = last_at if index == last else len(spans)
        if low < 0 or high > len(spans):
            return None
        covered.extend(spans[low:high])
    if not covered:
        return None
    return covered[0][0], covered[-1][1]


def shown_text(blocks: Sequence[TextBlock], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The rendered text from `start` to `end`, blocks joined by a line break."""
    (first, first_at), (last, last_at) = start, end
    pieces = []
    for index in range(first, last + 1):
        text = blocks[index].text
        pieces.append(text[first_at if index == first else 0 : last_at if index == last else None])
    return "\n".join(pieces)


def passage_on_page(blocks: Sequence[TextBlock], start: int, end: int) -> dict[str, Any] | None:
    """Where the source passage `start`..`end` shows: its first block and the rendered text
    it covers (blocks joined by line breaks); None when no shown character is in it."""
    pieces: list[str] = []
    first: int | None = None
    for block in blocks:
        if not block.spans or block.spans[0][0] >= end or block.spans[-1][1] <= start:
            continue
        inside = "".join(
            char
            for char, span in zip(block.text, block.spans, strict=True)
            if span[0] < end and span[1] > start
        )
        if inside:
            first = block.index if first is None else first
            pieces.append(inside)
    if first is None:
        return None
    # within a block a line break is the source's (the page wraps the words itself)
    return {"block": first, "text": "\n".join(" ".join(p.split("\n")).strip() for p in pieces)}


def block_at(blocks: Sequence[TextBlock], position: int) -> int | None:
    """The first block whose text starts at or after source `position` (or holds it)."""
    for block in blocks:
        if block.spans and block.spans[-1][1] > position:
            return block.index
    return None
