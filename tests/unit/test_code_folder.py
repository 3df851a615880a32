"""The folder `crewboard reverse` offers: what each tool answers, what it refuses, its bounds."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from crewboard.cli.reverse.folder import MIB, CodeFolder, Limits

SECRETS = [
    ".env",
    ".env.local",
    "key.pem",
    "id_rsa",
    "id_ed25519.pub",
    "server.KEY",
    ".netrc",
    "credentials-prod.json",
    "vault.kdbx",
]


def write(root: Path, rel: str, text: str = "x\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A folder with every kind of thing the rules tell apart."""
    root = tmp_path / "repo"
    write(root, ".gitignore", "*.log\n!keep.log\nbuild/\n/top.txt\n")
    write(root, "src/app.py", "import os\n\ndef main():\n    return 'Hello World'\n")
    write(root, "src/util.py", "HELLO = 1\n")
    write(root, "README.md", "# Demo\nhello there\n")
    write(root, "debug.log", "hello from a log\n")
    write(root, "keep.log", "kept hello\n")
    write(root, "top.txt", "hello top\n")
    write(root, "docs/top.txt", "hello docs top\n")  # /top.txt is anchored to the root
    write(root, "build/out.js", "hello build\n")
    write(root, "tools/build", "a file named build, not a folder\n")
    write(root, "sub/.gitignore", "generated.txt\n!*.log\n")
    write(root, "sub/generated.txt", "hello generated\n")
    write(root, "sub/trace.log", "hello trace\n")  # re-included by the deeper .gitignore
    write(root, "generated.txt", "hello root generated\n")  # sub's rule does not reach here
    write(root, ".git/config", "[remote]\nurl = https://user:hello@example.com\n")
    write(root, ".git/info/exclude", "local-notes.txt\n")
    write(root, "local-notes.txt", "hello notes\n")
    for name in SECRETS:
        write(root, name, "hello SECRET=1\n")
    write(root, "config/.env.production", "hello SECRET=2\n")
    write(root, "state/crewboard.db", "")
    write(root, "state/notes.txt", "hello in crewboard data\n")
    (root / "bin.dat").write_bytes(b"hello\0\x01\x02")
    write(tmp_path / "outside" / "secret.txt", "hello outside\n")
    (root / "out-link").symlink_to(tmp_path / "outside" / "secret.txt")
    (root / "out-dir").symlink_to(tmp_path / "outside")
    (root / "app-link.py").symlink_to(root / "src" / "app.py")
    (root / "innocent").symlink_to(root / ".env")
    return root


def code(answer: dict[str, Any]) -> str:
    assert "error" in answer, answer
    assert answer["error"]["message"]
    return str(answer["error"]["code"])


def paths(answer: dict[str, Any]) -> list[str]:
    return [entry["path"] for entry in answer["entries"]]


# -- list_folder ----------------------------------------------------------------------------


def test_listing_shows_files_and_folders_and_leaves_out_secrets_ignored_and_links_out(
    repo: Path,
) -> None:
    answer = CodeFolder(repo).answer("list_folder", {})
    assert answer["path"] == "."
    shown = paths(answer)
    assert {"src", "README.md", "keep.log", "app-link.py", "docs", "tools", "sub"} <= set(shown)
    for left_out in [
        ".git", "debug.log", "top.txt", "build", "local-notes.txt", "state", "out-link",
        "out-dir", "innocent", *SECRETS,
    ]:  # fmt: skip
        assert left_out not in shown
    # .git is left out without being counted; the rest are counted as hidden.
    assert answer["hidden"] == 8 + len(SECRETS)
    assert answer["truncated"] is False
    kinds = {entry["path"]: entry for entry in answer["entries"]}
    assert kinds["src"] == {"path": "src", "kind": "folder"}
    assert kinds["README.md"] == {"path": "README.md", "kind": "file", "size": 19}


def test_listing_deeper_applies_nested_gitignore_files_and_anchors(repo: Path) -> None:
    shown = paths(CodeFolder(repo).answer("list_folder", {"path": ".", "depth": 3}))
    assert "src/app.py" in shown
    assert "docs/top.txt" in shown  # /top.txt is anchored to the root folder
    assert "tools/build" in shown  # build/ matches folders only
    assert "sub/trace.log" in shown  # the deeper .gitignore re-includes *.log
    assert "sub/generated.txt" not in shown
    assert "generated.txt" in shown  # sub/.gitignore's rule stays in sub
    assert "config" in shown
    assert "config/.env.production" not in shown
    assert not [p for p in shown if p.startswith((".git/", "state/", "build/", "out-dir/"))]


def test_listing_a_sub_folder_names_paths_from_the_root(repo: Path) -> None:
    answer = CodeFolder(repo).answer("list_folder", {"path": "./src/../src/"})
    assert answer["path"] == "src"
    assert paths(answer) == ["src/app.py", "src/util.py"]


def test_listing_stops_at_500_entries_and_says_it_was_truncated(tmp_path: Path) -> None:
    for n in range(510):
        write(tmp_path, f"f{n:03}.txt")
    answer = CodeFolder(tmp_path).answer("list_folder", {})
    assert len(answer["entries"]) == 500
    assert answer["truncated"] is True


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"depth": 0}, "depth"),
        ({"depth": 4}, "depth"),
        ({"depth": "2"}, "depth"),
        ({"depth": True}, "depth"),
        ({"path": 3}, "path"),
        ({"recursive": True}, "recursive"),
    ],
)
def test_listing_refuses_bad_arguments_naming_the_field(
    repo: Path, arguments: dict[str, Any], field: str
) -> None:
    answer = CodeFolder(repo).answer("list_folder", arguments)
    assert code(answer) == "bad_arguments"
    assert field in answer["error"]["message"]


def test_listing_a_file_is_refused_pointing_at_read_file(repo: Path) -> None:
    answer = CodeFolder(repo).answer("list_folder", {"path": "README.md"})
    assert code(answer) == "bad_arguments"
    assert "read_file" in answer["error"]["message"]


def test_an_unknown_tool_names_the_three(repo: Path) -> None:
    answer = CodeFolder(repo).answer("delete_file", {"path": "README.md"})
    assert code(answer) == "bad_arguments"
    assert "list_folder, read_file, search_text" in answer["error"]["message"]


# -- read_file: what is refused ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        *[(name, "secret") for name in SECRETS],
        ("config/.env.production", "secret"),
        ("state/notes.txt", "secret"),  # a folder holding crewboard.db is Crewboard's data
        ("state/crewboard.db", "secret"),
        ("innocent", "secret"),  # a link inside whose target is .env
        ("debug.log", "ignored"),
        ("top.txt", "ignored"),
        ("build/out.js", "ignored"),
        ("sub/generated.txt", "ignored"),
        ("local-notes.txt", "ignored"),  # .git/info/exclude
        (".git/config", "ignored"),
        ("out-link", "outside_folder"),
        ("out-dir/secret.txt", "outside_folder"),
        ("../outside/secret.txt", "outside_folder"),
        ("src/../../outside/secret.txt", "outside_folder"),
        ("/etc/passwd", "outside_folder"),
        ("C:\\Windows\\win.ini", "outside_folder"),
        ("missing.py", "not_found"),
        ("bin.dat", "not_text"),
    ],
)
def test_reading_is_refused_with_the_rule_that_applies(
    repo: Path, path: str, expected: str
) -> None:
    assert code(CodeFolder(repo).answer("read_file", {"path": path})) == expected


def test_a_file_inside_an_ignored_folder_stays_ignored_even_when_negated(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "build/\n!build/keep.txt\n")
    write(tmp_path, "build/keep.txt", "kept?\n")
    answer = CodeFolder(tmp_path).answer("read_file", {"path": "build/keep.txt"})
    assert code(answer) == "ignored"  # git too: nothing comes back out of an ignored folder


def test_a_pipe_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    write(tmp_path, "a.txt", "needle\n")
    folder = CodeFolder(tmp_path)
    assert code(folder.answer("read_file", {"path": "pipe"})) == "not_text"
    listing = folder.answer("list_folder", {})
    assert (paths(listing), listing["hidden"]) == (["a.txt"], 1)
    assert found(folder.answer("search_text", {"query": "needle"})) == {"a.txt"}
    assert folder.answer("search_text", {"query": "needle", "path": "pipe"})["matches"] == []


def test_the_crewboard_data_folder_given_is_refused_wherever_it_is(tmp_path: Path) -> None:
    write(tmp_path, "var/data/notes.txt", "hello\n")
    folder = CodeFolder(tmp_path, data_dirs=[tmp_path / "var" / "data"])
    assert code(folder.answer("read_file", {"path": "var/data/notes.txt"})) == "secret"
    assert paths(folder.answer("list_folder", {"path": "var"})) == []


def test_negated_and_nested_rules_let_files_be_read(repo: Path) -> None:
    folder = CodeFolder(repo)
    for path in ["keep.log", "sub/trace.log", "docs/top.txt", "tools/build", "generated.txt"]:
        assert "error" not in folder.answer("read_file", {"path": path}), path


def test_a_link_inside_pointing_inside_is_read_under_the_name_given(repo: Path) -> None:
    answer = CodeFolder(repo).answer("read_file", {"path": "app-link.py"})
    assert answer["path"] == "app-link.py"
    assert "Hello World" in answer["text"]


# -- read_file: windows and caps --------------------------------------------------------------


def numbered(n: int, width: int = 0) -> str:
    return "".join(f"line {i}".ljust(width) + "\n" for i in range(1, n + 1))


def test_reading_gives_the_first_200_lines_and_counts_them_all(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", numbered(1000))
    answer = CodeFolder(tmp_path).answer("read_file", {"path": "a.txt"})
    assert (answer["startLine"], answer["endLine"], answer["totalLines"]) == (1, 200, 1000)
    lines = answer["text"].split("\n")
    assert lines[0] == "line 1"
    assert lines[-1] == "line 200"
    assert answer["truncated"] is False


def test_reading_a_window_gives_exactly_those_lines(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", numbered(1000).replace("\n", "\r\n"))
    answer = CodeFolder(tmp_path).answer(
        "read_file", {"path": "a.txt", "startLine": 10, "endLine": 12}
    )
    assert answer["text"] == "line 10\nline 11\nline 12"
    assert answer["endLine"] == 12


def test_a_window_wider_than_400_lines_is_cut_to_400_and_says_so(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", numbered(1000))
    answer = CodeFolder(tmp_path).answer(
        "read_file", {"path": "a.txt", "startLine": 1, "endLine": 900}
    )
    assert answer["endLine"] == 400
    assert len(answer["text"].split("\n")) == 400
    assert answer["truncated"] is True


def test_a_window_past_the_end_stops_at_the_last_line(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", numbered(5))
    folder = CodeFolder(tmp_path)
    answer = folder.answer("read_file", {"path": "a.txt", "startLine": 4, "endLine": 50})
    assert (answer["endLine"], answer["text"], answer["truncated"]) == (5, "line 4\nline 5", False)
    past = folder.answer("read_file", {"path": "a.txt", "startLine": 9})
    assert (past["endLine"], past["text"], past["totalLines"]) == (8, "", 5)


def test_a_long_line_is_cut_at_2000_characters(tmp_path: Path) -> None:
    write(tmp_path, "min.js", "short\n" + "x" * 50_000 + "\nafter\n")
    answer = CodeFolder(tmp_path).answer("read_file", {"path": "min.js"})
    short, long, after = answer["text"].split("\n")
    assert (short, after) == ("short", "after")
    assert long.startswith("x" * 2000)
    assert not long.startswith("x" * 2001)
    assert answer["truncated"] is True
    assert answer["totalLines"] == 3


def test_the_text_stays_within_64_kib_ending_on_a_whole_line(tmp_path: Path) -> None:
    write(tmp_path, "wide.txt", numbered(400, width=1000))
    answer = CodeFolder(tmp_path).answer("read_file", {"path": "wide.txt", "endLine": 400})
    assert len(answer["text"].encode()) <= 64 * 1024
    lines = answer["text"].split("\n")
    assert answer["endLine"] == len(lines) < 400
    assert lines[-1].rstrip() == f"line {len(lines)}"
    assert answer["truncated"] is True


def sparse(path: Path, size: int, head: str, tail: str = "") -> None:
    """A file of `size` bytes made in no time: text, a hole (NUL bytes), text. The text
    before the hole is longer than the 8 KiB that tell binary from text."""
    assert len(head) > 8 * 1024
    with path.open("wb") as file:
        file.write(head.encode())
        file.truncate(size - len(tail.encode()))
        file.seek(0, os.SEEK_END)
        file.write(tail.encode())


def test_a_20_mb_file_is_read_by_window_and_not_counted(tmp_path: Path) -> None:
    sparse(tmp_path / "big.log.txt", 20 * 1000 * 1000, numbered(2000), "\nlast line\n")
    folder = CodeFolder(tmp_path)
    answer = folder.answer("read_file", {"path": "big.log.txt", "startLine": 250, "endLine": 252})
    assert answer["text"] == "line 250\nline 251\nline 252"
    assert answer["totalLines"] is None
    end = folder.answer("read_file", {"path": "big.log.txt", "startLine": 2002, "endLine": 2010})
    assert end["text"] == "last line"  # line 2001 is the hole, up to its newline


def test_a_huge_file_is_read_only_up_to_the_window(tmp_path: Path) -> None:
    sparse(tmp_path / "huge.txt", 20 * 1024 * MIB, numbered(2000))  # 20 GiB; reading it would hang
    started = time.monotonic()
    answer = CodeFolder(tmp_path).answer("read_file", {"path": "huge.txt", "endLine": 3})
    assert answer["text"] == "line 1\nline 2\nline 3"
    assert time.monotonic() - started < 10  # reading it whole would take minutes


def test_a_window_too_far_into_a_big_file_is_too_large(tmp_path: Path) -> None:
    sparse(tmp_path / "big.txt", 20 * 1024 * MIB, numbered(2000), "\nfar away\n")
    started = time.monotonic()
    answer = CodeFolder(tmp_path).answer("read_file", {"path": "big.txt", "startLine": 2002})
    assert code(answer) == "too_large"  # after 64 MiB of the one 20 GiB line, not the whole
    assert time.monotonic() - started < 10


def test_a_window_reaching_past_the_scan_bound_ends_there(tmp_path: Path) -> None:
    sparse(tmp_path / "big.txt", 20 * 1024 * MIB, numbered(2000), "\nfar away\n")
    answer = CodeFolder(tmp_path).answer(
        "read_file", {"path": "big.txt", "startLine": 1999, "endLine": 2010}
    )
    assert answer["text"].startswith("line 1999\nline 2000\n")
    assert answer["endLine"] == 2001  # the hole's line, cut
    assert answer["truncated"] is True


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "path"),
        ({"path": ""}, "path"),
        ({"path": ["a.txt"]}, "path"),
        ({"path": "a.txt", "startLine": 0}, "startLine"),
        ({"path": "a.txt", "startLine": 1.5}, "startLine"),
        ({"path": "a.txt", "startLine": 5, "endLine": 4}, "endLine"),
        ({"path": "a.txt", "lines": 4}, "lines"),
    ],
)
def test_reading_refuses_bad_arguments_naming_the_field(
    tmp_path: Path, arguments: dict[str, Any], field: str
) -> None:
    write(tmp_path, "a.txt")
    answer = CodeFolder(tmp_path).answer("read_file", arguments)
    assert code(answer) == "bad_arguments"
    assert field in answer["error"]["message"]


def test_reading_a_folder_points_at_list_folder(repo: Path) -> None:
    answer = CodeFolder(repo).answer("read_file", {"path": "src"})
    assert code(answer) == "bad_arguments"
    assert "list_folder" in answer["error"]["message"]


# -- search_text ----------------------------------------------------------------------------


def found(answer: dict[str, Any]) -> set[str]:
    return {match["path"] for match in answer["matches"]}


def test_search_is_literal_and_case_insensitive_and_skips_what_may_not_be_read(
    repo: Path,
) -> None:
    answer = CodeFolder(repo).answer("search_text", {"query": "HELLO"})
    # app-link.py is not there: a link is searched where it really is (src/app.py).
    assert found(answer) == {
        "src/app.py", "src/util.py", "README.md", "keep.log", "docs/top.txt", "sub/trace.log",
        "generated.txt",
    }  # fmt: skip
    assert {"path": "src/app.py", "line": 4, "text": "    return 'Hello World'"} in answer[
        "matches"
    ]
    assert answer["truncated"] is False
    assert answer["filesSearched"] >= len(found(answer))


def test_search_can_be_case_sensitive_limited_by_glob_and_by_path(repo: Path) -> None:
    folder = CodeFolder(repo)
    assert found(folder.answer("search_text", {"query": "HELLO", "caseSensitive": True})) == {
        "src/util.py"
    }
    assert found(folder.answer("search_text", {"query": "hello", "glob": "*.py"})) == {
        "src/app.py",
        "src/util.py",
    }
    assert found(folder.answer("search_text", {"query": "hello", "glob": "sub/*"})) == {
        "sub/trace.log"
    }
    assert found(folder.answer("search_text", {"query": "hello", "path": "docs"})) == {
        "docs/top.txt"
    }
    assert found(folder.answer("search_text", {"query": "hello", "path": "README.md"})) == {
        "README.md"
    }
    assert found(folder.answer("search_text", {"query": "a.b", "glob": None})) == set()


def test_search_refuses_a_path_the_rules_refuse(repo: Path) -> None:
    folder = CodeFolder(repo)
    assert code(folder.answer("search_text", {"query": "x", "path": "state"})) == "secret"
    assert code(folder.answer("search_text", {"query": "x", "path": "build"})) == "ignored"
    assert code(folder.answer("search_text", {"query": "x", "path": "../"})) == "outside_folder"


def test_search_skips_files_over_2_mib(tmp_path: Path) -> None:
    write(tmp_path, "big.txt", "needle\n" + "x" * (2 * MIB))
    write(tmp_path, "small.txt", "needle\n")
    answer = CodeFolder(tmp_path).answer("search_text", {"query": "needle"})
    assert found(answer) == {"small.txt"}
    assert answer["filesSearched"] == 1


def test_search_stops_at_100_matches(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "needle\n" * 150)
    answer = CodeFolder(tmp_path).answer("search_text", {"query": "needle"})
    assert len(answer["matches"]) == 100
    assert answer["truncated"] is True


def test_search_stops_after_50_mib_scanned(tmp_path: Path) -> None:
    block = ("y" * 1023 + "\n").encode() * (2 * 1024)  # 2 MiB: the most a searched file has
    for n in range(26):
        (tmp_path / f"f{n:02}.txt").write_bytes(block)
    answer = CodeFolder(tmp_path).answer("search_text", {"query": "needle"})
    assert answer["filesSearched"] == 25
    assert answer["truncated"] is True


def test_search_stops_after_5_seconds(tmp_path: Path) -> None:
    for n in range(20):
        write(tmp_path, f"f{n:02}.txt", "needle\n")
    ticks = iter(range(1000))
    answer = CodeFolder(tmp_path, clock=lambda: float(next(ticks))).answer(
        "search_text", {"query": "needle"}
    )
    assert 0 < answer["filesSearched"] < 20
    assert answer["truncated"] is True


def test_search_shows_a_long_matching_line_around_the_match(tmp_path: Path) -> None:
    write(tmp_path, "min.js", "a" * 5000 + "needle" + "b" * 5000 + "\n")
    answer = CodeFolder(tmp_path).answer("search_text", {"query": "needle"})
    text = answer["matches"][0]["text"]
    assert "needle" in text
    assert len(text) <= Limits().match_chars + 2


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "x" * 201}, "query"),
        ({"query": "x", "caseSensitive": "yes"}, "caseSensitive"),
        ({"query": "x", "glob": 5}, "glob"),
        ({"query": "x", "regex": True}, "regex"),
    ],
)
def test_search_refuses_bad_arguments_naming_the_field(
    tmp_path: Path, arguments: dict[str, Any], field: str
) -> None:
    answer = CodeFolder(tmp_path).answer("search_text", arguments)
    assert code(answer) == "bad_arguments"
    assert field in answer["error"]["message"]
