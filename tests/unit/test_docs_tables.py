"""The reference pages' tables (docs/reference/: tools, REST routes, CLI commands, settings) and
CONTRIBUTING.md's map of floors and areas are what scripts/docs_tables.py writes from the code: a
tool, a route, a command, a setting, an area or a module added without running it fails here."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click
import pytest

from crewboard.cli.main import cli
from crewboard.config import Settings
from crewboard.contract.catalogue import default_catalogue

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "scripts") not in sys.path:  # the scripts are files, not a package
    sys.path.insert(0, str(REPO / "scripts"))
docs_tables = importlib.import_module("docs_tables")


@pytest.fixture(scope="module")
def tables() -> dict[str, str]:
    return {name: make() for name, make in docs_tables.BLOCKS.items()}


@pytest.mark.parametrize("name", docs_tables.FILES)
def test_the_file_holds_the_tables_the_script_writes(name: str, tables: dict[str, str]) -> None:
    text = (REPO / name).read_text(encoding="utf-8")
    assert docs_tables.rendered(text, tables) == text, (
        f"{name} differs from the code: run `python scripts/docs_tables.py`"
    )


def test_every_table_has_its_place() -> None:
    found = [
        block
        for name in docs_tables.FILES
        for block in docs_tables.blocks_in((REPO / name).read_text(encoding="utf-8"))
    ]
    assert sorted(found) == sorted(docs_tables.BLOCKS)


def test_a_stale_table_is_rewritten_and_the_prose_around_it_kept() -> None:
    text = "Before.\n\n<!-- begin: tools (note) -->\n| old |\n<!-- end: tools -->\n\nAfter.\n"
    new = docs_tables.rendered(text, {"tools": "| new |\n"})
    assert (
        new
        == "Before.\n\n<!-- begin: tools (note) -->\n\n| new |\n\n<!-- end: tools -->\n\nAfter.\n"
    )


def test_the_tool_table_names_every_tool_of_the_catalogue(tables: dict[str, str]) -> None:
    rows = tables["tools"].splitlines()[2:]
    assert len(rows) == len(list(default_catalogue()))
    assert "| download_spec_file (stdio only) | `specs` | — | files on your disk |" in rows


def test_the_route_table_lists_the_query_parameters_openapi_lists(
    tables: dict[str, str],
) -> None:
    """A route's row names the parameters a client may send: OpenAPI's query, not the fields the
    path already fills (projectId under {project})."""
    from crewboard.api.openapi import openapi_document  # noqa: PLC0415 - the app's import cost only here

    paths = openapi_document("http://localhost")["paths"]
    for line in tables["rest"].splitlines()[2:]:
        method, target = (cell.strip().strip("`") for cell in line.split("|")[1:3])
        path, _, query = target.partition("?")
        parameters = paths[path][method.lower()].get("parameters", [])
        in_query = [p["name"] for p in parameters if p["in"] == "query"]
        assert (query.split("&") if query else []) == in_query, line


def _cells(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("|")[1:-1]] for line in table.splitlines()[2:]]


def _leaves(group: click.Group, words: str) -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found |= _leaves(command, f"{words} {name}")
        else:
            found[f"{words} {name}"] = command
    return found


def test_the_command_table_has_one_row_per_command_with_its_options(
    tables: dict[str, str],
) -> None:
    commands = _leaves(cli, "crewboard")
    rows = {}
    for name, _what, options in _cells(tables["cli"]):
        words = " ".join(w for w in name.strip("`").split() if not w.rstrip(".").isupper())
        rows[words] = options
    assert sorted(rows) == sorted(commands)
    for words, command in commands.items():
        shown = {o.strip("`") for o in rows[words].split(", ")} - {"—"}
        taken = {
            max(p.opts, key=len)
            for p in command.params
            if isinstance(p, click.Option) and p.name != "help"
        }
        assert shown == taken, words


def test_the_command_table_shows_a_command_s_arguments_and_one_line_help(
    tables: dict[str, str],
) -> None:
    assert (
        "| `crewboard review approve DRAFT_ID` | Approve a waiting draft; its task becomes "
        "approved. | `--memory`, `--collection`, `--document`, `--comment`, `--as`, `--json` |"
    ) in tables["cli"].splitlines()


def test_the_settings_table_names_every_setting_with_its_variable(
    tables: dict[str, str],
) -> None:
    rows = {cells[0].strip("`"): cells for cells in _cells(tables["settings"])}
    assert sorted(rows) == sorted(f"CREWBOARD_{name.upper()}" for name in Settings.model_fields)
    assert all(cells[3] for cells in rows.values()), "a setting without a description"
    assert rows["CREWBOARD_PORT"][1:3] == ["whole number, 0 to 65,535", "`8787`"]
    assert rows["CREWBOARD_SMTP_SECURITY"][1] == "`starttls` or `tls` or `none`"
    assert rows["CREWBOARD_SMTP_TIMEOUT"][1] == "number, more than 0 up to 600"
    assert rows["CREWBOARD_DATABASE_URL"][2] == "unset"
    assert rows["CREWBOARD_ALLOWED_HOSTS"][1:3] == ["comma-separated list", "empty"]
