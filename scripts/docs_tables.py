"""Write the tables the docs site and CONTRIBUTING.md show of the code, from the code.

Each table sits between two marker comments, `<!-- begin: NAME ... -->` and `<!-- end: NAME -->`;
this script rewrites what lies between them and leaves the prose around alone:

- `tools` (docs/reference/tools.md): every MCP tool, by toolset, from the catalogue (its
  scopes besides `read`, and whether it writes);
- `rest` (docs/reference/rest.md): every REST route, from the endpoint table OpenAPI is built
  from;
- `cli` (docs/reference/cli.md): every `crewboard` command, from the click tree;
- `settings` (docs/reference/settings.md): every field of `crewboard.config.Settings`;
- `map`: the floors, and the areas × floors map, from [tool.crewboard.architecture] in
  pyproject.toml and the source tree.

`python scripts/docs_tables.py` rewrites the files; `--check` only says which differ (make
check runs it, and tests/unit/test_docs_tables.py fails the same way); `--show map` prints
the map (or another table) and writes nothing.
"""

from __future__ import annotations

import argparse
import re
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

REPO = Path(__file__).resolve().parent.parent
FILES = (
    "docs/reference/tools.md",
    "docs/reference/rest.md",
    "docs/reference/cli.md",
    "docs/reference/settings.md",
    "CONTRIBUTING.md",
)
_BLOCK = re.compile(
    r"(<!-- begin: (?P<name>\w+)[^\n]*-->\n)(?P<body>.*?)(<!-- end: (?P=name) -->)", re.S
)


def tools_table() -> str:
    """The catalogue's tools, toolset by toolset (the toolsets' own order), each in catalogue
    order."""
    from crewboard.contract.catalogue import DEFAULT_TOOLSETS, default_catalogue  # noqa: PLC0415 - after main() puts this checkout first
    from crewboard.domain.identity.access import Toolset  # noqa: PLC0415 - after main() puts this checkout first

    operations = list(default_catalogue())
    rows = ["| tool | toolset | scopes besides `read` | writes |", "| --- | --- | --- | --- |"]
    for toolset in Toolset:
        shown = f"`{toolset.value}`" + (" (default)" if toolset in DEFAULT_TOOLSETS else "")
        for op in (o for o in operations if o.toolset is toolset):
            name = op.name + (" (stdio only)" if op.stdio_only else "")
            scopes = ", ".join(f"`{s.value}`" for s in op.scopes) or "—"
            writes = (
                "files on your disk" if op.writes_locally else ("no" if op.read_only else "yes")
            )
            rows.append(f"| {name} | {shown} | {scopes} | {writes} |")
    return "\n".join(rows) + "\n"


def rest_table() -> str:
    """Every REST route in OpenAPI's order, with the query parameters it reads (as OpenAPI
    lists them: not the fields the path already carries, such as projectId under {project})."""
    from crewboard.api.routes import all_endpoints  # noqa: PLC0415 - after main() puts this checkout first

    rows = ["| method | path | what |", "| --- | --- | --- |"]
    for endpoint in all_endpoints():
        path = endpoint.path
        if endpoint.query is not None:
            carried = endpoint.carried_fields
            names = [
                name
                for name in (f.alias or n for n, f in endpoint.query.model_fields.items())
                if name not in carried
            ]
            path += "?" + "&".join(names)
        summary = endpoint.summary.replace("|", "\\|")
        rows.append(f"| `{endpoint.method}` | `{path}` | {summary} |")
    return "\n".join(rows) + "\n"


def map_tables(pyproject: Path = REPO / "pyproject.toml") -> str:
    """The floors, top first, and where each area stands on each floor (lowest area first)."""
    from check_architecture import package_dir, rules_from  # noqa: PLC0415 - after main() puts this checkout first

    rules = rules_from(pyproject)
    base = package_dir(rules.root).parent
    lines = ["| floor | packages and modules | why |", "| --- | --- | --- |"]
    for floor in rules.floors:
        names = ", ".join(f"`{_relative(module, rules.root)}`" for module in floor.modules)
        lines.append(f"| {floor.name} | {names} | {floor.why} |")

    homes = [
        rules.area_homes.get(module, module)
        for floor in reversed(rules.floors)
        for module in floor.modules
    ]
    cells = {(area, home): _room(base, home, area) for home in homes for area in rules.area_rank()}
    used = [home for home in homes if any(cells[(area, home)] for area in rules.area_rank())]
    header = [f"`{_relative(home, rules.root)}/`" for home in used]
    lines += ["", "| area | " + " | ".join(header) + " |", "| --- |" + " --- |" * len(used)]
    for peers in rules.areas:
        for area in peers:
            row = [cells[(area, home)] or "—" for home in used]
            lines.append(f"| {area} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def _relative(module: str, root: str) -> str:
    return module.removeprefix(root + ".").replace(".", "/")


def _room(base: Path, home: str, area: str) -> str:
    """The area's room on a floor: `name.py`, or `name/` and its modules and subpackages."""
    folder = base.joinpath(*home.split("."), area)
    if folder.with_suffix(".py").is_file():
        return f"`{area}.py`"
    if not (folder / "__init__.py").is_file():
        return ""
    parts = sorted(
        p.stem if p.is_file() else f"{p.name}/"
        for p in folder.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    )
    return f"`{area}/` " + ", ".join(parts) if parts else f"`{area}/`"


def cli_table() -> str:
    """Every `crewboard` command that runs something, groups walked depth first in name order:
    its words, its one-line help and its options (`--help` aside)."""
    import click  # noqa: PLC0415 - after main() puts this checkout first

    from crewboard.cli.main import cli  # noqa: PLC0415 - after main() puts this checkout first

    rows = ["| command | what it does | options |", "| --- | --- | --- |"]
    for words, command in _commands(cli, ("crewboard",)):
        arguments = [p.human_readable_name for p in command.params if isinstance(p, click.Argument)]
        options = [
            f"`{_longest(p.opts)}`"
            for p in command.params
            if isinstance(p, click.Option) and p.name != "help"
        ]
        name = " ".join((*words, *arguments))
        what = _cell(command.get_short_help_str(limit=200))
        rows.append(f"| `{name}` | {what} | {', '.join(options) or '—'} |")
    return "\n".join(rows) + "\n"


def _commands(group: Any, words: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    import click  # noqa: PLC0415 - after main() puts this checkout first

    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, (*words, name))
        else:
            yield (*words, name), command


def _longest(opts: list[str]) -> str:
    return max(opts, key=len)


def settings_table() -> str:
    """Every field of Settings, in the class's order: its environment variable, what it takes,
    its default and its description."""
    from crewboard.config import ENV_PREFIX, Settings  # noqa: PLC0415 - after main() puts this checkout first

    rows = ["| variable | takes | default | what it sets |", "| --- | --- | --- | --- |"]
    for name, field in Settings.model_fields.items():
        variable = f"`{ENV_PREFIX}{name.upper()}`"
        default = "empty" if field.default_factory is not None else _shown(field.default)
        what = _cell(field.description or "")
        rows.append(f"| {variable} | {_takes(field)} | {default} | {what} |")
    return "\n".join(rows) + "\n"


def _takes(field: Any) -> str:
    """What a setting accepts, in words: its type, its bounds, its values."""
    kind = field.annotation
    if isinstance(kind, types.UnionType):  # `X | None`: unset is its default, said there
        kind = next(a for a in get_args(kind) if a is not type(None))
    if get_origin(kind) is Literal:
        return " or ".join(f"`{value}`" for value in get_args(kind))
    if kind is bool:
        return "`true` or `false`"
    if get_origin(kind) is list:
        return "comma-separated list"
    words = {int: "whole number", float: "number", Path: "path", str: "text"}
    taken = words.get(kind, "secret text" if kind.__name__ == "SecretStr" else "text")
    bounds = {type(m).__name__: m for m in field.metadata}
    low = next((getattr(bounds[k], k.lower()) for k in ("Ge", "Gt") if k in bounds), None)
    high = bounds["Le"].le if "Le" in bounds else None
    if low is not None and high is not None:
        taken += (
            f", more than {_number(low)} up to {_number(high)}"
            if "Gt" in bounds
            else f", {_number(low)} to {_number(high)}"
        )
    if "MaxLen" in bounds:
        taken += f", at most {bounds['MaxLen'].max_length} characters"
    return taken


def _number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _shown(default: object) -> str:
    if default is None:
        return "unset"
    if default == "":
        return "empty"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, float):
        return f"`{default:g}`"
    return f"`{default}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


BLOCKS: dict[str, Callable[[], str]] = {
    "tools": tools_table,
    "rest": rest_table,
    "cli": cli_table,
    "settings": settings_table,
    "map": map_tables,
}


def rendered(text: str, tables: dict[str, str]) -> str:
    """`text` with every marked block's body replaced by its table."""

    def body(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in tables:
            raise SystemExit(f"no table named {name!r}; the names are {', '.join(tables)}")
        return match[1] + "\n" + tables[name] + "\n" + match[4]

    return _BLOCK.sub(body, text)


def blocks_in(text: str) -> list[str]:
    return [match["name"] for match in _BLOCK.finditer(text)]


def main(argv: list[str] | None = None) -> int:
    for folder in (REPO / "scripts", REPO / "src"):  # this checkout's code, not an installed one
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which files differ")
    parser.add_argument("--show", choices=sorted(BLOCKS), help="print one table, write nothing")
    options = parser.parse_args(argv)
    if options.show:
        print(BLOCKS[options.show](), end="")
        return 0
    tables = {name: make() for name, make in BLOCKS.items()}
    stale = []
    for name in FILES:
        path = REPO / name
        text = path.read_text(encoding="utf-8")
        new = rendered(text, tables)
        if new == text:
            continue
        stale.append(name)
        if not options.check:
            path.write_text(new, encoding="utf-8")
            print(f"wrote {name}")
    if options.check and stale:
        print(
            f"{' and '.join(stale)} differ from the code: run `python scripts/docs_tables.py`",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
