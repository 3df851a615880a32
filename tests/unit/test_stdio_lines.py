"""The stdio reader behind `crewboard mcp`: lines however the bytes arrive, a line over the
limit skipped whole, the last line kept without its newline."""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crewboard.mcp.stdio import _Lines

LIMIT = 64


def read_all(chunks: list[bytes], limit: int = LIMIT) -> list[str]:
    async def run() -> list[str]:
        reader = asyncio.StreamReader()
        for chunk in chunks:
            reader.feed_data(chunk)
        reader.feed_eof()
        return [line async for line in _Lines(reader, limit)]

    return asyncio.run(run())


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


lines_of_text = st.lists(
    st.text(alphabet=st.characters(blacklist_characters="\n", codec="utf-8"), max_size=20),
    max_size=8,
)


@given(lines=lines_of_text, cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_lines_come_out_whole_however_the_bytes_are_cut(lines: list[str], cuts: list[int]) -> None:
    data = "".join(line + "\n" for line in lines).encode()
    assert read_all(split(data, cuts)) == [line + "\n" for line in lines]


@given(
    long=st.integers(min_value=LIMIT + 1, max_value=4 * LIMIT),
    cuts=st.lists(st.integers(min_value=0), max_size=12),
)
def test_a_line_over_the_limit_is_skipped_and_the_next_one_read(long: int, cuts: list[int]) -> None:
    data = b'{"first": 1}\n' + b"x" * long + b'\n{"next": 2}\n'
    assert read_all(split(data, cuts)) == ['{"first": 1}\n', '{"next": 2}\n']


def test_the_skip_is_logged_once_with_the_limit(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="crewboard.mcp.stdio"):
        read_all([b"y" * 40] * 10 + [b"\nok\n"])
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert f"longer than {LIMIT} bytes" in warnings[0]


def test_the_last_line_counts_without_its_newline_and_bad_utf8_is_replaced() -> None:
    assert read_all([b'{"a": 1}\n{"b":', b" 2}"]) == ['{"a": 1}\n', '{"b": 2}']
    assert read_all([b"\xff\n"]) == ["\ufffd\n"]
    assert read_all([]) == []


def test_a_line_of_exactly_the_limit_is_kept() -> None:
    line = b"z" * (LIMIT - 1) + b"\n"
    assert read_all([line[:10], line[10:]]) == [line.decode()]
