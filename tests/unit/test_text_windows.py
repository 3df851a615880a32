"""Cutting long texts to fit an answer and reading them in windows (services/text_windows)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from crewboard.errors import CrewboardError
from crewboard.services.text_windows import (
    ANSWER_BUDGET,
    WINDOW_LIMIT,
    check_window,
    cut_text,
    cut_texts,
    fitting_chars,
    json_size,
    text_size,
    window,
)

MIXED = 'plain ascii, 漢字かな, emoji 🙂🚀, \u0001\u001f control, "quotes" and \\ backslash\n'


def read_all(
    text: str, limit: int = WINDOW_LIMIT, budget: int = ANSWER_BUDGET
) -> list[dict[str, Any]]:
    windows, offset = [], 0
    while True:
        part = window(
            {"field": "brief"},
            text,
            offset=offset,
            limit=limit,
            budget=budget,
            offset_field="textOffset",
        )
        windows.append(part)
        if part["nextOffset"] is None:
            return windows
        offset = part["nextOffset"]


def test_sizes_count_utf8_bytes_and_json_escapes() -> None:
    assert text_size("a") == 1
    assert text_size("漢") == 3
    assert text_size("🙂") == 4
    assert text_size('"') == text_size("\\") == text_size("\n") == 2
    assert text_size("\u0001") == 6
    assert json_size({"a": "漢"}) == len('{"a":"漢"}'.encode())


def test_fitting_chars_never_goes_over_the_room() -> None:
    text = MIXED * 50
    for room in (0, 1, 5, 6, 7, 100, 1000):
        kept = fitting_chars(text, room)
        assert text_size(text[:kept]) <= room
        assert text_size(text[: kept + 1]) > room
    assert fitting_chars("\u0001" * 10, 17) == 2
    assert fitting_chars("abc", 100, start=1, limit=1) == 1


def test_windows_of_a_mixed_text_give_back_the_original_exactly() -> None:
    text = MIXED * 3000  # about 200,000 characters
    windows = read_all(text)
    assert "".join(w["text"] for w in windows) == text
    assert all(json_size(w) <= ANSWER_BUDGET for w in windows)
    assert all(w["length"] == len(text) for w in windows)
    assert [w["offset"] for w in windows[1:]] == [w["nextOffset"] for w in windows[:-1]]


def test_a_window_of_cjk_or_control_characters_holds_fewer_than_the_limit() -> None:
    for text in ("漢" * 100_000, "\u0001" * 100_000, "🙂" * 100_000):
        first = window({}, text, offset=0, limit=WINDOW_LIMIT, offset_field="textOffset")
        assert json_size(first) <= ANSWER_BUDGET
        assert 0 < len(first["text"]) < WINDOW_LIMIT
        assert first["nextOffset"] == len(first["text"])


def test_a_small_limit_is_kept_and_the_end_has_no_next_offset() -> None:
    first = window({}, "abcdef", offset=0, limit=4, offset_field="textOffset")
    last = window({}, "abcdef", offset=4, limit=4, offset_field="textOffset")
    end = window({}, "abcdef", offset=6, limit=4, offset_field="textOffset")
    assert (first["text"], first["nextOffset"]) == ("abcd", 4)
    assert (last["text"], last["nextOffset"]) == ("ef", None)
    assert (end["text"], end["nextOffset"], end["length"]) == ("", None, 6)


def test_a_window_always_moves_on_even_in_a_tiny_budget() -> None:
    windows = read_all("🙂" * 5, budget=10)
    assert "".join(w["text"] for w in windows) == "🙂" * 5


def test_an_offset_past_the_end_is_refused_naming_the_field() -> None:
    with pytest.raises(CrewboardError) as refused:
        window({}, "abc", offset=4, limit=10, offset_field="contentOffset")
    assert refused.value.code == "VALIDATION"
    assert refused.value.details["field"] == "contentOffset"


@pytest.mark.parametrize(
    ("offset", "limit", "field"),
    [(-1, 10, "textOffset"), (0, 0, "textLimit"), (0, WINDOW_LIMIT + 1, "textLimit")],
)
def test_window_bounds_are_checked_naming_the_field(offset: int, limit: int, field: str) -> None:
    with pytest.raises(CrewboardError) as refused:
        check_window(offset, limit, offset_field="textOffset", limit_field="textLimit")
    assert refused.value.code == "VALIDATION"
    assert refused.value.details["field"] == field


def test_cut_texts_shares_the_room_and_flags_what_it_cut() -> None:
    view = {"title": "t", "brief": "b" * 10_000, "description": "d" * 100, "n": 1}
    out = cut_texts(view, ("brief", "description"), 2000)
    assert out["description"] == "d" * 100
    assert "descriptionTruncated" not in out
    assert out["brief"] == "b" * len(out["brief"])
    assert (out["briefTruncated"], out["briefLength"]) == (True, 10_000)
    assert text_size(out["brief"]) + text_size(out["description"]) <= 2000
    assert list(out)[:4] == ["title", "brief", "briefTruncated", "briefLength"]
    assert cut_texts(view, ("brief", "description"), 20_000) is view


def test_two_long_texts_get_even_shares() -> None:
    view = {"brief": "漢" * 50_000, "description": "a" * 50_000}
    out = cut_texts(view, ("brief", "description"), 30_000)
    assert abs(text_size(out["brief"]) - text_size(out["description"])) < 200
    assert (out["briefTruncated"], out["descriptionTruncated"]) == (True, True)


def test_cut_text_fits_the_whole_view_in_the_room() -> None:
    view = {"id": "mem_1", "content": MIXED * 5000}
    out = cut_text(view, "content", 4096)
    assert json_size(out) <= 4096
    assert out["contentLength"] == len(view["content"])
    assert view["content"].startswith(out["content"])
    assert json.loads(json.dumps(out)) == out
