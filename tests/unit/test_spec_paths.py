"""Spec file rules with no database (domain/specs): the paths a file may have, text or binary,
and the sparse line index windows start from."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crewboard.domain.files import (
    MARK_EVERY,
    MAX_DEPTH,
    MAX_PATH,
    MAX_SEGMENT,
    FileKind,
    folder_prefix,
    index_lines,
    kind_of,
    normalise_path,
)
from crewboard.domain.specs import content_version
from crewboard.errors import ErrorCode, LimitExceeded, ValidationFailed
from tests.support.errors import refused


def line_starts(data: bytes) -> list[int]:
    """Where each line starts, the slow and obvious way: after every `\\n` but a final one."""
    if not data:
        return []
    return [0] + [at + 1 for at, byte in enumerate(data[:-1]) if byte == ord("\n")]


# --- paths -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("docs/design.md", "docs/design.md"),
        ("./a//b/", "a/b"),
        ("a/./b/.", "a/b"),
        ("spec.md", "spec.md"),
        ("déjà vu/漢字.md", "déjà vu/漢字.md"),
        ("..notes/a..b.md", "..notes/a..b.md"),  # dots inside a name are only a name
    ],
)
def test_a_path_is_stored_with_forward_slashes_and_no_empty_or_dot_segments(
    raw: str, stored: str
) -> None:
    assert normalise_path(raw) == stored


@pytest.mark.parametrize(
    "raw",
    ["../x.md", "docs/../../x.md", "docs/..", "/etc/passwd", "/", "C:x.md", "c:/x.md", "D:"],
)
def test_a_path_that_climbs_out_or_starts_at_a_root_is_refused_naming_the_field(raw: str) -> None:
    error = refused(ErrorCode.VALIDATION, normalise_path, raw, "targetPath")

    assert error.details["field"] == "targetPath"
    assert error.message.startswith("targetPath: ")


@pytest.mark.parametrize("raw", ["docs\\spec.md", "..\\x.md", "a\\b"])
def test_a_backslash_is_refused_with_forward_slashes_suggested(raw: str) -> None:
    error = refused(ErrorCode.VALIDATION, normalise_path, raw)

    assert error.details["field"] == "path"
    assert "forward slash" in error.message


@pytest.mark.parametrize("raw", ["a\x00b.md", "docs/\x01.md", "a\tb.md", "line\nbreak.md", "x\x7f"])
def test_nul_and_other_control_characters_are_refused(raw: str) -> None:
    error = refused(ErrorCode.VALIDATION, normalise_path, raw)

    assert error.details["field"] == "path"
    assert "control" in error.message


@pytest.mark.parametrize("raw", ["", ".", "./", ".//.", "./././"])
def test_a_path_with_no_name_in_it_is_refused_as_empty(raw: str) -> None:
    error = refused(ErrorCode.VALIDATION, normalise_path, raw)

    assert error.details["field"] == "path"
    assert "empty" in error.message


def test_a_path_over_512_characters_is_refused_with_the_limit_and_its_length() -> None:
    longest = "/".join(["a" * 100] * 5) + "/" + "b" * 7  # 512 characters
    assert len(longest) == MAX_PATH
    assert normalise_path(longest) == longest

    error = refused(ErrorCode.LIMIT_EXCEEDED, normalise_path, longest + "c")

    assert error.details == {"field": "path", "limit": MAX_PATH, "actual": MAX_PATH + 1}


def test_the_length_limit_counts_the_normalised_path_not_the_slashes_given() -> None:
    padded = "./" * 300 + "a.md"

    assert normalise_path(padded) == "a.md"


def test_a_path_deeper_than_16_levels_is_refused() -> None:
    deepest = "/".join(["d"] * (MAX_DEPTH - 1) + ["f.md"])
    assert normalise_path(deepest) == deepest

    error = refused(ErrorCode.LIMIT_EXCEEDED, normalise_path, "d/" + deepest, "folder")

    assert error.details == {"field": "folder", "limit": MAX_DEPTH, "actual": MAX_DEPTH + 1}


def test_a_name_over_255_characters_is_refused() -> None:
    assert normalise_path("docs/" + "n" * MAX_SEGMENT) == "docs/" + "n" * MAX_SEGMENT

    error = refused(ErrorCode.LIMIT_EXCEEDED, normalise_path, "docs/" + "n" * (MAX_SEGMENT + 1))

    assert error.details == {"field": "path", "limit": MAX_SEGMENT, "actual": MAX_SEGMENT + 1}


def test_a_folder_filter_ends_with_one_slash_however_it_is_written() -> None:
    assert folder_prefix("docs") == folder_prefix("docs/") == folder_prefix("./docs//") == "docs/"
    assert refused(ErrorCode.VALIDATION, folder_prefix, "../docs").details["field"] == "path"


@given(st.text(max_size=40))
def test_a_stored_path_is_a_fixed_point_of_the_rules(raw: str) -> None:
    """Whatever is accepted comes back in a form the rules accept unchanged, with no empty,
    `.` or `..` segment and no leading or trailing slash."""
    try:
        stored = normalise_path(raw)
    except (ValidationFailed, LimitExceeded):
        return  # any other error fails the test
    assert normalise_path(stored) == stored
    assert all(part not in ("", ".", "..") for part in stored.split("/"))


# --- text or binary --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", FileKind.TEXT),
        (b"# Title\r\nBody\n", FileKind.TEXT),
        ("漢字 🙂\n".encode(), FileKind.TEXT),
        (b"\xef\xbb\xbfwith a BOM", FileKind.TEXT),
        (b"text with a \x00 NUL", FileKind.BINARY),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", FileKind.BINARY),
        (b"latin-1 caf\xe9", FileKind.BINARY),
        ("cut in half 🙂".encode()[:-1], FileKind.BINARY),
    ],
)
def test_text_is_valid_utf8_without_nul_and_anything_else_is_binary(
    data: bytes, kind: FileKind
) -> None:
    assert kind_of(data) is kind


def test_the_content_version_is_opaque_and_changes_with_each_revision_and_content() -> None:
    first = content_version("spf_1", 1, "a" * 64)

    assert first.startswith("cv_")
    assert not first[3:].isdigit()
    assert len(first) <= 40  # the column's width
    assert first == content_version("spf_1", 1, "a" * 64)
    others = {
        content_version("spf_1", 2, "a" * 64),  # the same bytes saved again
        content_version("spf_1", 1, "b" * 64),
        content_version("spf_2", 1, "a" * 64),
    }
    assert first not in others
    assert len(others) == 3


# --- the line index --------------------------------------------------------------------------


def test_an_empty_file_has_no_lines() -> None:
    index = index_lines(b"")

    assert index.total_lines == 0
    assert index.nearest(1) == (1, 0)


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"a", 1),
        (b"a\n", 1),
        (b"a\nb", 2),
        (b"a\nb\n", 2),
        (b"\n", 1),
        (b"\n\n", 2),
        (b"a\r\nb\r\n", 2),
        (b"a\r\nb", 2),
        (b"a\rb\r", 1),  # a lone CR ends no line
    ],
)
def test_lines_end_after_each_newline_and_the_last_needs_none(data: bytes, lines: int) -> None:
    assert index_lines(data).total_lines == lines


def test_the_index_marks_the_start_of_every_256th_line() -> None:
    data = b"".join(b"line %d\r\n" % n for n in range(1, 1001))
    starts = line_starts(data)

    index = index_lines(data)

    assert index.total_lines == 1000
    assert index.every == MARK_EVERY == 256
    assert index.marks == (starts[0], starts[256], starts[512], starts[768])
    assert data[index.marks[1] :].startswith(b"line 257\r\n")


@pytest.mark.parametrize(
    ("line", "nearest"),
    [(1, 1), (2, 1), (256, 1), (257, 257), (258, 257), (769, 769), (1000, 769), (5000, 769)],
)
def test_nearest_gives_the_closest_marked_line_at_or_before_the_one_asked(
    line: int, nearest: int
) -> None:
    data = b"".join(b"%d\n" % n for n in range(1, 1001))
    starts = line_starts(data)

    found = index_lines(data).nearest(line)

    assert found == (nearest, starts[nearest - 1])


def test_a_last_line_without_a_newline_on_a_mark_is_marked() -> None:
    data = b"a\nb\nc"  # with a mark every 2 lines: lines 1 and 3

    index = index_lines(data, every=2)

    assert index.total_lines == 3
    assert index.marks == (0, 4)


@given(st.binary(max_size=200), st.integers(min_value=1, max_value=5))
def test_the_index_agrees_with_counting_newlines(data: bytes, every: int) -> None:
    data = data.replace(b"\x00", b"\n")  # plenty of lines
    starts = line_starts(data)

    index = index_lines(data, every=every)

    assert index.total_lines == len(starts)
    assert list(index.marks) == (starts[::every] or [0])
    for line in range(1, len(starts) + 1):
        marked, offset = index.nearest(line)
        assert line - every < marked <= line
        assert offset == starts[marked - 1]
