"""Anchors of comment threads: placing a quoted passage, and following it through a save."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewboard.domain.spec_comments import CONTEXT, Anchor, anchor_at, place, place_at, reanchor
from crewboard.errors import ValidationFailed

SPEC = (
    "# Rate limits\n"
    "\n"
    "Every token may send requests to the API.\n"
    "\n"
    "The rate limit is ten requests per second for each token.\n"
    "\n"
    "Bursts above the limit are answered with 429 and a Retry-After header.\n"
    "\n"
    "## Storage\n"
    "\n"
    "Counters live in memory and reset when the server restarts.\n"
)
QUOTE = "The rate limit is ten requests per second"


def placed(text: str = SPEC, quote: str = QUOTE) -> Anchor:
    return place(text, quote)


def follow(old: str, new: str, anchor: Anchor) -> Anchor | None:
    return reanchor(old, new, [anchor])[0]


def assert_on(text: str, anchor: Anchor | None, quote: str) -> None:
    assert anchor is not None
    assert anchor.quote == quote
    assert text[anchor.start : anchor.end] == quote
    assert anchor.prefix == text[max(0, anchor.start - CONTEXT) : anchor.start]
    assert anchor.suffix == text[anchor.end : anchor.end + CONTEXT]


# --- place ---------------------------------------------------------------------------------------


def test_a_unique_quote_is_placed_at_its_offsets_with_its_context() -> None:
    anchor = placed()
    start = SPEC.index(QUOTE)
    assert (anchor.start, anchor.end) == (start, start + len(QUOTE))
    assert_on(SPEC, anchor, QUOTE)


def test_a_selection_is_placed_where_the_page_says_even_when_its_words_repeat() -> None:
    text = "Tokens rotate daily.\nKeys rotate daily.\n"
    second = text.rindex("rotate daily.")
    assert place_at(text, "rotate daily.", second) == anchor_at(text, second, second + 13)
    with pytest.raises(ValidationFailed) as refused:
        place_at(text, "rotate hourly.", second)
    assert refused.value.details == {"field": "anchorQuote"}
    assert "read_spec_file" not in refused.value.message


def test_a_repeated_quote_is_singled_out_by_its_prefix_or_its_suffix() -> None:
    text = "- [ ] ship the export\n- [ ] ship the import\n- [ ] ship the export again\n"
    second_export = text.rindex("ship the export")
    by_prefix = place(text, "ship the export", prefix="import\n- [ ] ")
    by_suffix = place(text, "ship the export", suffix=" again")
    assert by_prefix.start == by_suffix.start == second_export
    first = place(text, "ship the export", suffix="\n- [ ] ship the import")
    assert first.start == text.index("ship the export")


def test_whitespace_where_the_prefix_meets_the_quote_may_differ() -> None:
    text = "Alpha: go now.\nBeta:   go now.\n"
    assert place(text, "go now.", prefix="Beta:").start == text.rindex("go now.")


def test_a_quote_not_in_the_text_is_refused_asking_for_an_exact_copy() -> None:
    with pytest.raises(ValidationFailed) as refused:
        place(SPEC, "The rate limit is 10 requests")
    assert refused.value.details["field"] == "anchorQuote"
    assert "copy it exactly" in refused.value.message


def test_a_repeated_quote_without_context_is_refused_asking_for_words_around_it() -> None:
    with pytest.raises(ValidationFailed) as refused:
        place(SPEC, "token")
    assert refused.value.details == {"field": "anchorQuote", "occurrences": 2}
    assert "anchorPrefix/anchorSuffix" in refused.value.message


def test_context_that_fits_several_copies_is_still_ambiguous() -> None:
    text = "a note: keep it\na note: keep it\n"
    with pytest.raises(ValidationFailed) as refused:
        place(text, "keep it", prefix="a note: ")
    assert refused.value.details == {"field": "anchorQuote", "occurrences": 2}


def test_context_that_fits_no_copy_is_refused_naming_it() -> None:
    with pytest.raises(ValidationFailed) as refused:
        place(SPEC, "token", prefix="every ")
    assert refused.value.details == {"field": "anchorPrefix", "occurrences": 2}
    with pytest.raises(ValidationFailed) as refused:
        place(SPEC, "token", suffix=" forever")
    assert refused.value.details["field"] == "anchorSuffix"


def test_an_empty_quote_is_refused() -> None:
    with pytest.raises(ValidationFailed) as refused:
        place(SPEC, "  \n")
    assert refused.value.details["field"] == "anchorQuote"


# --- reanchor ------------------------------------------------------------------------------------


def test_an_edit_above_the_passage_moves_it_down_unchanged() -> None:
    new = SPEC.replace("# Rate limits\n", "# Rate limits\n\nDraft, for review by Friday.\n")
    assert_on(new, follow(SPEC, new, placed()), QUOTE)


def test_an_edit_below_the_passage_leaves_it_where_it_was() -> None:
    new = SPEC.replace("reset when the server restarts", "survive a restart")
    moved = follow(SPEC, new, placed())
    assert moved == placed()


def test_a_small_edit_inside_the_passage_keeps_it_with_the_quote_as_it_now_reads() -> None:
    new = SPEC.replace("ten requests", "twelve requests")
    assert_on(new, follow(SPEC, new, placed()), "The rate limit is twelve requests per second")


def test_words_added_inside_the_passage_are_part_of_it() -> None:
    new = SPEC.replace("limit is ten", "limit is, for now, ten")
    assert_on(
        new, follow(SPEC, new, placed()), "The rate limit is, for now, ten requests per second"
    )


def test_edits_right_around_the_passage_keep_it_without_them() -> None:
    new = SPEC.replace("\nThe rate limit", "\nNote: The rate limit").replace(
        "per second for each token.", "per second for every token, always."
    )
    assert_on(new, follow(SPEC, new, placed()), QUOTE)


def test_text_inserted_right_after_the_passage_is_not_taken_into_it() -> None:
    at = SPEC.index(QUOTE) + len(QUOTE)
    new = SPEC[:at] + " (and twenty in bursts)" + SPEC[at:]
    assert_on(new, follow(SPEC, new, placed()), QUOTE)


def test_a_deleted_passage_has_no_anchor() -> None:
    new = SPEC.replace("The rate limit is ten requests per second for each token.\n\n", "")
    assert follow(SPEC, new, placed()) is None


def test_a_passage_rewritten_beyond_recognition_has_no_anchor() -> None:
    new = SPEC.replace(QUOTE, "Nothing is limited, ever, whatever you send")
    assert follow(SPEC, new, placed()) is None


def test_a_passage_moved_elsewhere_in_the_file_is_followed_there() -> None:
    paragraph = "The rate limit is ten requests per second for each token.\n\n"
    new = SPEC.replace(paragraph, "") + "\n" + paragraph
    moved = follow(SPEC, new, placed())
    assert_on(new, moved, QUOTE)
    assert moved is not None
    assert moved.start > SPEC.index("Counters")


def test_a_passage_moved_and_edited_is_found_by_a_near_match_where_its_context_went() -> None:
    paragraph = "The rate limit is ten requests per second for each token.\n\n"
    edited = paragraph.replace("ten", "twelve")
    new = SPEC.replace(paragraph, "").replace("## Storage\n\n", "## Storage\n\n" + edited)
    moved = follow(SPEC, new, place(SPEC, "limit is ten requests"))
    assert_on(new, moved, "limit is twelve requests")


def test_a_short_quote_gone_from_its_place_is_not_moved_to_an_unrelated_copy() -> None:
    text = "Alpha uses a queue.\nBeta writes files.\nGamma reads a queue slowly.\n"
    anchor = place(text, "queue", suffix=".\nBeta")
    new = text.replace("Alpha uses a queue.\n", "")
    assert follow(text, new, anchor) is None


def test_many_anchors_follow_one_save_each_to_its_own_passage() -> None:
    quotes = ["Every token may send", QUOTE, "answered with 429", "Counters live in memory"]
    anchors = [place(SPEC, q) for q in quotes]
    new = "Preface.\n\n" + SPEC.replace("answered with 429", "answered with 503").replace(
        "Counters live in memory and reset when the server restarts.\n", ""
    )
    moved = reanchor(SPEC, new, anchors)
    assert_on(new, moved[0], "Every token may send")
    assert_on(new, moved[1], QUOTE)
    assert_on(new, moved[2], "answered with 503")
    assert moved[3] is None


def test_an_unchanged_text_keeps_every_anchor_as_it_was() -> None:
    anchors = [placed(), place(SPEC, "Counters")]
    assert reanchor(SPEC, SPEC, anchors) == anchors


def test_an_anchor_at_the_very_start_or_end_of_the_text_follows_edits_next_to_it() -> None:
    first = anchor_at(SPEC, 0, len("# Rate limits"))
    last = place(SPEC, "restarts.\n")
    new = "<!-- draft -->\n" + SPEC + "Appendix.\n"
    moved = reanchor(SPEC, new, [first, last])
    assert_on(new, moved[0], "# Rate limits")
    assert_on(new, moved[1], "restarts.\n")


PASSAGE = "the passage under review"
TEXT = st.text(alphabet="abcde \n", max_size=60)


@settings(max_examples=300, deadline=None)
@given(
    before=TEXT,
    after=TEXT,
    inserted=st.text(alphabet="abcdeprs \n", min_size=1, max_size=40),
    where=st.floats(min_value=0, max_value=1),
    above=st.booleans(),
)
def test_an_insertion_that_does_not_touch_the_passage_keeps_the_anchor_on_the_same_text(
    before: str, after: str, inserted: str, where: float, above: bool
) -> None:
    """Any text inserted anywhere outside the passage (right next to it too): the anchor
    still covers the passage's exact text."""
    old = before + PASSAGE + after
    anchor = anchor_at(old, len(before), len(before) + len(PASSAGE))
    if above:
        at = round(where * len(before))
    else:
        at = len(before) + len(PASSAGE) + round(where * len(after))
    new = old[:at] + inserted + old[at:]
    assert_on(new, follow(old, new, anchor), PASSAGE)
