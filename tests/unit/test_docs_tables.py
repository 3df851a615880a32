"""README.md's tool and REST tables and CONTRIBUTING.md's map of floors and areas are what
scripts/docs_tables.py writes from the code: a tool, a route, an area or a module added without
running it fails here."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

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
