"""The real `crewboard` command, run as a process against a fresh data folder, prints with
`--json` exactly what docs/cli-json.md says: the keys its section lists (and those of the shared
shapes a section names, recursively) with the documented types, and the error shape on failure.

The field lists are read from the page, so the page and the output cannot drift apart. The
commands run once for the module, side by side (each process spends most of its second or two
importing the app)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import crewboard_env, run_crewboard

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli-json.md"
LINK = r"\[(\w+)\]\(#[\w-]+\)"
ROW = re.compile(r"^\| `(\w+)` \| (.+?) \| .* \|$", re.MULTILINE)
HEADING = re.compile(r"^#{1,3} ", re.MULTILINE)
PRIMITIVES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}

READS = [
    ("project", "list"),
    ("user", "list"),
    ("token", "list"),
    ("team", "list", "DEMO"),
    ("inbox", "list"),
]
REFUSED = ("project", "list", "--as", "nobody@example.com")


@dataclass(frozen=True)
class Shape:
    """What a section documents: an object's fields (name → type cell), or an array of them."""

    fields: dict[str, str]
    array: bool = False


def _block(text: str, marker: str) -> str:
    """The part of the page after `marker`, up to the next heading."""
    start = text.index(marker) + len(marker)
    end = HEADING.search(text, start)
    return text[start : end.start() if end else len(text)]


def _shape(text: str, block: str) -> Shape:
    lead = re.search(r"^\*\*(?:Prints|Fields):\*\* (.*)$", block, re.MULTILINE)
    fields: dict[str, str] = {}
    array = False
    if lead is not None:
        array = lead.group(1).startswith("array of")
        based = re.search(LINK, lead.group(1))
        if based is not None:
            fields.update(_named(text, based.group(1)).fields)
    fields.update(dict(ROW.findall(block)))
    return Shape(fields, array)


def _named(text: str, name: str) -> Shape:
    return _shape(text, _block(text, f"<!-- shape: {name} -->"))


def documented(command: tuple[str, ...]) -> Shape:
    text = DOC.read_text(encoding="utf-8")
    words = " ".join(word for word in command if re.fullmatch(r"[a-z][a-z-]*", word))
    return _shape(text, _block(text, f"<!-- json: crewboard {words} -->"))


def check(value: Any, shape: Shape, where: str) -> None:
    """`value` has exactly the documented keys, each of its documented type."""
    if shape.array:
        assert isinstance(value, list), f"{where}: documented as an array, printed {value!r:.80}"
        for index, item in enumerate(value):
            check(item, Shape(shape.fields), f"{where}[{index}]")
        return
    assert isinstance(value, dict), f"{where}: documented as an object, printed {value!r:.80}"
    assert sorted(value) == sorted(shape.fields), f"{where}: keys differ from {DOC.name}"
    for key, cell in shape.fields.items():
        _check_field(value[key], cell, f"{where}.{key}")


def _check_field(value: Any, cell: str, where: str) -> None:
    kind = cell.removesuffix(" or null")
    if value is None:
        assert kind != cell, f"{where} is null; {DOC.name} says {cell!r}"
        return
    linked = re.fullmatch(f"(array of )?{LINK}", kind)
    if linked is not None:
        shape = _named(DOC.read_text(encoding="utf-8"), linked.group(2))
        check(value, Shape(shape.fields, array=linked.group(1) is not None), where)
        return
    allowed = PRIMITIVES[kind.split()[0]]
    wrong = not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed)
    assert not wrong, f"{where} is {value!r:.80}; {DOC.name} says {cell!r}"


@dataclass(frozen=True)
class Ran:
    status: int
    stdout: str
    stderr: str


def _crewboard(data: Path, *args: str) -> Ran:
    done = run_crewboard(crewboard_env(data), *args)
    return Ran(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, ...], Ran]]:
    """Each command of the module, run once with --json on one freshly initialised folder."""
    data = tmp_path_factory.mktemp("cli-json")
    started = _crewboard(data, "init")
    assert started.status == 0, started.stderr
    commands = [*READS, REFUSED]
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = pool.map(lambda command: _crewboard(data, *command, "--json"), commands)
        yield dict(zip(commands, results, strict=True))


@pytest.mark.parametrize("command", READS, ids=" ".join)
def test_a_read_command_prints_exactly_the_documented_fields(
    printed: dict[tuple[str, ...], Ran], command: tuple[str, ...]
) -> None:
    ran = printed[command]
    assert ran.status == 0, ran.stderr
    assert ran.stderr == ""
    check(json.loads(ran.stdout), documented(command), "crewboard " + " ".join(command))


def test_a_refusal_prints_the_documented_error_on_stderr_and_exits_1(
    printed: dict[tuple[str, ...], Ran],
) -> None:
    ran = printed[REFUSED]
    assert ran.status == 1
    assert ran.stdout == ""
    error = json.loads(ran.stderr)
    assert list(error) == ["error"]
    check(error["error"], _named(DOC.read_text(encoding="utf-8"), "Error"), "error")
    assert error["error"]["code"] == "NOT_FOUND"


def test_the_checker_names_a_key_the_page_does_not_list() -> None:
    with pytest.raises(AssertionError, match="keys differ"):
        check({"id": "usr_1", "extra": 1}, Shape({"id": "string"}), "user")
