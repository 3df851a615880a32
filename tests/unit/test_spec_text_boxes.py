"""Checkbox lines on the spec file page under review: a line `- [ ] title` shows a box (no
text of the page) and its title as a numbered block of its own, its indented detail as the
blocks after it; a selection inside a title, or from a title into the next item's, maps to
exactly the source characters it shows, never to the box."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from crewboard.web.spec_text import TASK_LINE, SpecText, render_spec, shown_text, source_span
from tests.unit.test_spec_text import LINE, _BlockTexts, shown_from

BOX = st.sampled_from(["[ ]", "[x]", "[X]", "[-]"])
ITEM = st.tuples(BOX, LINE, st.lists(LINE, max_size=2), st.booleans()).map(
    lambda i: (
        f"- {i[0]} {i[1]}"
        + "".join(f"\n  {d}" for d in i[2])
        + ("\n  - a nested step" if i[3] else "")
    )
)
TASKS_MD = st.tuples(
    st.lists(ITEM, min_size=1, max_size=4),
    st.sampled_from(["", "# Plan\n\n", "Intro *words*.\n\n"]),
).map(lambda d: d[1] + "\n".join(d[0]) + "\n")


def page_texts(spec: SpecText) -> dict[int, str]:
    """The text of each numbered block as the page shows it: each title in its list item's
    label, as templates/tasks_md.html puts it."""
    html = str(spec.html)
    for line, title in spec.titles.items():
        opening = f'<li {TASK_LINE}="{line}">'
        html = html.replace(
            opening, f'{opening}<span class="src" data-b="{title.block}">{title.html}</span>'
        )
    reader = _BlockTexts()
    reader.feed(html)
    return reader.texts


@settings(max_examples=150, deadline=None)
@given(TASKS_MD)
def test_titles_are_numbered_blocks_the_page_shows_and_the_box_is_none_of_them(
    source: str,
) -> None:
    spec = render_spec(source)
    texts = page_texts(spec)
    assert [b.text for b in spec.blocks] == [texts[b.index] for b in spec.blocks]
    starts = [0] + [m.end() for m in re.finditer("\n", source)]
    boxes = [starts[line - 1] + source[starts[line - 1] :].index("[") for line in spec.titles]
    for block in spec.blocks:
        for start, end in block.spans:
            assert not any(start <= at + k < end for at in boxes for k in range(3))
    if re.match(r"- \[[ xX-]\] +[A-Za-z0-9]", source):
        assert 1 in spec.titles  # a first line with a title is a checkbox line


@settings(max_examples=200, deadline=None)
@given(TASKS_MD, st.data())
def test_a_selection_starting_in_a_title_maps_to_a_source_span_that_shows_exactly_it(
    source: str, data: st.DataObject
) -> None:
    spec = render_spec(source)
    blocks = spec.blocks
    titles = [blocks[t.block] for t in spec.titles.values() if blocks[t.block].text]
    if not titles:
        return
    first = data.draw(st.sampled_from(titles))
    last = data.draw(st.sampled_from([b for b in blocks[first.index :] if b.text]))
    start = data.draw(st.integers(0, len(first.text) - 1))
    end = data.draw(st.integers(start + 1 if last is first else 1, len(last.text)))
    span = source_span(blocks, (first.index, start), (last.index, end))
    assert span is not None
    shown = [shown_from(b, *span) for b in blocks[first.index : last.index + 1]]
    expected = shown_text(blocks, (first.index, start), (last.index, end)).split("\n")
    assert "\n".join(shown).split("\n") == expected


PLAN = (
    "# Plan\n\n"
    "- [ ] Write the migration for the **cart summary**\n"
    "  Two columns, both nullable.\n"
    "- [x] Parse the `totals` from the basket\n"
)


def between(words: str, until: str) -> str:
    spec = render_spec(PLAN)
    first = next(b for b in spec.blocks if words in b.text)
    last = next(b for b in spec.blocks if until in b.text)
    span = source_span(
        spec.blocks,
        (first.index, first.text.index(words)),
        (last.index, last.text.index(until) + len(until)),
    )
    assert span is not None
    return PLAN[span[0] : span[1]]


def test_words_in_a_title_map_to_the_title_not_the_box() -> None:
    assert between("migration", "cart summary") == "migration for the **cart summary"
    assert between("Write", "Write") == "Write"
    spec = render_spec(PLAN)
    assert [(line, spec.blocks[t.block].text) for line, t in spec.titles.items()] == [
        (3, "Write the migration for the cart summary"),
        (5, "Parse the totals from the basket"),
    ]
    assert str(spec.titles[3].html) == "Write the migration for the <strong>cart summary</strong>"


def test_a_selection_across_a_title_its_detail_and_the_next_title_is_the_source_between() -> None:
    assert between("cart summary", "Parse the totals") == (
        "cart summary**\n  Two columns, both nullable.\n- [x] Parse the `totals"
    )
    spec = render_spec(PLAN)
    assert '<li data-task-line="3"><p><span class="src"' in str(spec.html)
    assert "[x]" not in str(spec.html)
