"""The spec file page's markdown with source positions: every character the page shows knows
the source characters it comes from, so a selection made on the rendered text becomes the
exact source passage, whatever formatting it crosses."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from crewboard.web.spec_text import (
    Highlight,
    TextBlock,
    passage_on_page,
    render_spec,
    shown_text,
    source_span,
)

PROBE = "\ue000"  # a private-use character: no markdown syntax, a letter to the flanking rules


class _BlockTexts(HTMLParser):
    """The text the browser shows inside each `span[data-b]`, read from the HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: dict[int, str] = {}
        self.open: list[int | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "img", "hr"):
            return
        found = dict(attrs).get("data-b") if tag == "span" else None
        self.open.append(int(found) if found is not None else None)
        if found is not None:
            self.texts[int(found)] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("br", "img", "hr") and self.open:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        inside = [n for n in self.open if n is not None]
        if inside:
            self.texts[inside[-1]] += data


def page_texts(source: str) -> dict[int, str]:
    reader = _BlockTexts()
    reader.feed(str(render_spec(source).html))
    return reader.texts


def shown_from(block: TextBlock, start: int, end: int) -> str:
    """The characters of `block` whose source lies inside `start`..`end`."""
    return "".join(c for c, s in zip(block.text, block.spans, strict=True) if start <= s[0] < end)


# --- documents made of the constructs people write -------------------------------------------------

WORDS = st.sampled_from(["cart", "summary", "total", "e", "x", "tax", "Sessions", "15", "a b"])
INLINE = st.one_of(
    WORDS,
    WORDS.map(lambda w: f"**{w}**"),
    WORDS.map(lambda w: f"*{w}*"),
    WORDS.map(lambda w: f"_{w}_"),
    st.tuples(WORDS, WORDS).map(lambda p: f"[{p[0]}]({p[1]})"),
    st.tuples(WORDS, WORDS).map(lambda p: f'[{p[0]}](http://{p[1].replace(" ", "")}.io "{p[1]}")'),
    st.tuples(WORDS, WORDS).map(lambda p: f"![{p[0]}]({p[1].replace(' ', '')}.png)"),
    WORDS.map(lambda w: f"`{w}`"),
    WORDS.map(lambda w: f"`` {w} ``"),
    WORDS.map(lambda w: f"<http://{w.replace(' ', '')}.io>"),
    st.sampled_from(["\\*", "&amp;", "&lt;", "&#42;", "**", "[", "]", "*", "`", "  \n", "\n"]),
)
LINE = st.lists(INLINE, min_size=1, max_size=6).map(" ".join)
BLOCK = st.one_of(
    LINE,
    LINE.map(lambda t: f"# {t}"),
    LINE.map(lambda t: f"## {t} ##"),
    st.lists(LINE, min_size=1, max_size=3).map(lambda items: "\n".join(f"- {i}" for i in items)),
    st.tuples(LINE, LINE).map(lambda p: f"1. {p[0]}\n   - {p[1]}"),
    LINE.map(lambda t: f"> {t}"),
    st.tuples(WORDS, WORDS).map(lambda p: f"| {p[0]} | h |\n|---|---|\n| {p[1]} | **{p[0]}** |"),
    WORDS.map(lambda w: f"```\n{w} *no*\n```"),
    WORDS.map(lambda w: f"    {w} [x](y)"),
)
DOCUMENT = st.tuples(st.lists(BLOCK, min_size=1, max_size=5), st.booleans()).map(
    lambda d: "\n\n".join(d[0]).replace("\n", "\r\n" if d[1] else "\n") + "\n"
)


@settings(max_examples=150, deadline=None)
@given(DOCUMENT)
def test_each_blocks_text_is_what_the_page_shows_and_its_spans_run_forward(source: str) -> None:
    blocks = render_spec(source).blocks
    texts = page_texts(source)
    assert [b.text for b in blocks] == [texts[b.index] for b in blocks]
    previous = 0
    for block in blocks:
        assert len(block.spans) == len(block.text)
        for start, end in block.spans:
            assert previous <= start < end <= len(source)
            previous = end


@settings(max_examples=150, deadline=None)
@given(DOCUMENT, st.data())
def test_a_shown_character_comes_from_the_source_character_its_span_names(
    source: str, data: st.DataObject
) -> None:
    """Changing that one source character changes that one shown character, and nothing
    else: the map never points into a link's destination or at markup."""
    blocks = render_spec(source).blocks
    letters = [
        (b.index, k)
        for b in blocks
        for k, (char, span) in enumerate(zip(b.text, b.spans, strict=True))
        if char.isalnum()
        and span[1] - span[0] == 1
        and source[span[0]] == char
        # an autolink's scheme is syntax: a changed letter makes it plain text
        and not re.search(r"<[A-Za-z]*$", source[: span[0] + 1])
    ]
    if not letters:
        return
    index, k = data.draw(st.sampled_from(letters))
    at = blocks[index].spans[k][0]
    probed = render_spec(source[:at] + PROBE + source[at + 1 :]).blocks
    text = blocks[index].text
    assert probed[index].text == text[:k] + PROBE + text[k + 1 :]


@settings(max_examples=200, deadline=None)
@given(DOCUMENT, st.data())
def test_any_selection_of_shown_text_maps_to_a_source_span_that_shows_exactly_it(
    source: str, data: st.DataObject
) -> None:
    blocks = render_spec(source).blocks
    if not any(b.text for b in blocks):
        return
    first = data.draw(st.sampled_from([b for b in blocks if b.text]))
    last = data.draw(st.sampled_from([b for b in blocks[first.index :] if b.text]))
    start = data.draw(st.integers(0, len(first.text) - 1))
    low = start + 1 if last is first else 1
    end = data.draw(st.integers(low, len(last.text)))
    span = source_span(blocks, (first.index, start), (last.index, end))
    assert span is not None
    shown = [shown_from(b, *span) for b in blocks[first.index : last.index + 1]]
    expected = shown_text(blocks, (first.index, start), (last.index, end)).split("\n")
    assert "\n".join(shown).split("\n") == expected


def select(source: str, words: str, until: str | None = None) -> str:
    """The source passage for a selection from `words` to the end of `until` on the page."""
    blocks = render_spec(source).blocks
    starts = [(b.index, b.text.find(words)) for b in blocks if words in b.text]
    ends = [(b.index, b.text.find(until or words) + len(until or words)) for b in blocks]
    ends = [e for e, b in zip(ends, blocks, strict=True) if (until or words) in b.text]
    span = source_span(blocks, starts[0], ends[-1] if until else ends[0])
    assert span is not None
    return source[span[0] : span[1]]


SPEC = (
    "# Checkout\n\n"
    "The **cart summary** shows the [total](https://example.com/total) and\n"
    "the `tax` line.\n\n"
    "- First item\n"
    "- Second *item*\n"
)


def test_a_selection_across_bold_a_link_a_line_break_and_list_items_is_the_source_between() -> None:
    assert select(SPEC, "cart summary shows the total") == ("cart summary** shows the [total")
    assert select(SPEC, "summary", "tax line") == (
        "summary** shows the [total](https://example.com/total) and\nthe `tax` line"
    )
    assert select(SPEC, "total and", "Second item") == (
        "total](https://example.com/total) and\nthe `tax` line.\n\n- First item\n- Second *item"
    )


def test_a_letter_after_a_link_is_never_mapped_into_its_destination() -> None:
    assert select('[e](e)e and [e](e "e")e\n', "ee and ee") == 'e](e)e and [e](e "e")e'


def test_escapes_entities_and_windows_line_ends_map_to_their_whole_source() -> None:
    source = "Price \\* 2 &amp; tax\r\nnext line\r\n"
    assert select(source, "* 2 &", "next") == "\\* 2 &amp; tax\r\nnext"


def test_passages_are_marked_open_or_resolved_and_found_again_on_the_page() -> None:
    start = SPEC.index("cart")
    end = SPEC.index("total") + len("total")
    later = SPEC.index("First")
    rendered = render_spec(
        SPEC,
        [Highlight("sct_a", start, end, False), Highlight("sct_b", later, later + 5, True)],
    )
    page = str(rendered.html)
    assert '<strong><mark class="hl open" data-threads="sct_a">cart summary</mark></strong>' in page
    assert '<mark class="hl resolved" data-threads="sct_b">First</mark>' in page
    assert "https://example.com/total" in page  # the link is kept, its words marked
    found = passage_on_page(rendered.blocks, start, end)
    assert found == {"block": 1, "text": "cart summary shows the total"}
    assert passage_on_page(rendered.blocks, SPEC.index("(https"), SPEC.index(") and")) is None


def test_the_page_never_runs_markup_from_the_file() -> None:
    page = str(render_spec("<script>alert(1)</script>\n\n[x](javascript:alert(1))\n").html)
    assert "<script>" not in page
    assert 'href="javascript' not in page
