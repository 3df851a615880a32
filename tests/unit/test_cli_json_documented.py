"""Every `crewboard` command with `--json` has a section in docs/cli-json.md, found by its
`<!-- json: crewboard … -->` marker; the page documents no command that does not exist (a
section still marked `<!-- json: todo -->` is one whose command is being written)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click

from crewboard.cli.main import cli
from tests.support.cli_docs import generated_section, page_section

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli-json.md"
MARKER = re.compile(r"<!-- json: (crewboard(?: [a-z][a-z-]*)*) -->")
TODO = "<!-- json: todo -->"


def _commands(group: click.Group, path: str) -> Iterator[tuple[str, click.Command]]:
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, f"{path} {name}")
        else:
            yield f"{path} {name}", command


def _takes_json(command: click.Command) -> bool:
    return any(isinstance(p, click.Option) and "--json" in p.opts for p in command.params)


def _sections() -> dict[str, str]:
    """The page's sections by the command their marker names: the text up to the next heading."""
    text = DOC.read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for match in MARKER.finditer(text):
        rest = text[match.end() :]
        end = re.search(r"^#{1,3} ", rest, re.MULTILINE)
        name = match.group(1)
        assert name not in found, f"{name} has two sections in {DOC.name}"
        found[name] = rest[: end.start() if end else len(rest)]
    return found


def test_every_command_with_json_output_has_a_section() -> None:
    sections = _sections()
    missing = [name for name, command in _commands(cli, "crewboard") if _takes_json(command)]
    missing = [name for name in missing if name not in sections]
    assert not missing, (
        f"{DOC.name} has no section for: {', '.join(missing)}; add one with the marker "
        f"<!-- json: COMMAND --> saying what --json prints"
    )


def test_every_written_section_names_a_command_with_json_output() -> None:
    existing = {name for name, command in _commands(cli, "crewboard") if _takes_json(command)}
    stale = [
        name for name, body in _sections().items() if TODO not in body and name not in existing
    ]
    assert not stale, f"{DOC.name} documents commands with no --json: {', '.join(stale)}"


def test_every_written_section_says_what_it_prints() -> None:
    silent = [
        name for name, body in _sections().items() if TODO not in body and "**Prints:**" not in body
    ]
    assert not silent, f"these sections of {DOC.name} have no **Prints:** line: {silent}"


def test_the_built_commands_section_is_the_one_the_catalogue_makes() -> None:
    page = page_section(DOC.read_text(encoding="utf-8"))
    assert page == generated_section(), (
        f"{DOC.name} does not match the catalogue's commands: run python -m tests.support.cli_docs"
    )
