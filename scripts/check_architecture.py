"""Hold the code to the architecture written once in pyproject.toml ([tool.crewboard.architecture]).

Rules, each checked over the import graph grimp builds (imports inside functions included,
imports under `if TYPE_CHECKING:` left out, since they never run):

- floors: a module imports only its own floor and the floors below it, and every module of the
  package stands on a floor;
- areas: on every floor, and across floors, a module of an area imports only its own area and
  the areas below it, never a higher one or a peer;
- doors: no door imports another door (the composition root wires them);
- wiring: the floors above services take from storage only the wiring the list names;
- cycles: no import circle among modules;
- size: no module over the line limit, outside the exempt folders and the pending splits;
- noqa: an import inside a function (`# noqa: PLC0415`) says why, on its line or the one above.

Run `python scripts/check_architecture.py` (make check runs it); it prints one line per
breach, naming the file, the line, the rule and how to fix it, and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import re
import sys
import time
import tokenize
import tomllib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grimp

REPO = Path(__file__).resolve().parent.parent

Edge = tuple[str, str]


@dataclass(frozen=True)
class Floor:
    name: str
    modules: tuple[str, ...]
    why: str = ""


@dataclass(frozen=True)
class Rules:
    """The one list, as read from pyproject.toml (see `rules_from`)."""

    root: str
    floors: tuple[Floor, ...]
    areas: tuple[tuple[str, ...], ...]  # lowest first; one inner tuple holds peers
    gatherers: frozenset[str] = frozenset()  # areas any higher floor's areas may call
    area_homes: dict[str, str] = field(default_factory=dict)  # floor module -> area container
    doors: tuple[str, ...] = ()
    door_entries: dict[str, tuple[str, ...]] = field(default_factory=dict)  # door -> entries
    wiring_floor: str = ""  # the floor the upper floors take only wiring from (storage)
    wiring_below: str = ""  # the highest floor that may take anything from it (services)
    wiring: tuple[str, ...] = ()
    exceptions: dict[Edge, str] = field(default_factory=dict)  # allowed import -> why
    max_module_lines: int = 600
    size_exempt: tuple[str, ...] = ()
    pending_splits: frozenset[str] = frozenset()
    noqa_dirs: tuple[str, ...] = ()

    def area_rank(self) -> dict[str, int]:
        return {area: rank for rank, peers in enumerate(self.areas) for area in peers}


@dataclass(frozen=True)
class Violation:
    rule: str
    path: str
    line: int
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.rule}] {self.message} Fix: {self.fix}"


def rules_from(pyproject: Path) -> Rules:
    """The [tool.crewboard.architecture] table of `pyproject`."""
    table: dict[str, Any] = tomllib.loads(pyproject.read_text())["tool"]["crewboard"]
    raw = table["architecture"]
    rules = Rules(
        root=raw["root"],
        floors=tuple(
            Floor(f["name"], tuple(f["modules"]), f.get("why", "")) for f in raw["floors"]
        ),
        areas=tuple(tuple(peers) for peers in raw["areas"]),
        gatherers=frozenset(raw.get("gatherers", ())),
        area_homes=dict(raw.get("area_homes", {})),
        doors=tuple(raw.get("doors", ())),
        door_entries={
            door: tuple(entries) for door, entries in raw.get("door_entries", {}).items()
        },
        wiring_floor=raw.get("wiring", {}).get("floor", ""),
        wiring_below=raw.get("wiring", {}).get("below", ""),
        wiring=tuple(raw.get("wiring", {}).get("allowed", ())),
        exceptions={_edge(e["import"]): e["why"] for e in raw.get("exceptions", ())},
        max_module_lines=raw.get("max_module_lines", 600),
        size_exempt=tuple(raw.get("size_exempt", ())),
        pending_splits=frozenset(raw.get("pending_splits", ())),
        noqa_dirs=tuple(raw.get("noqa_dirs", ())),
    )
    return _listed_once(rules)


def _listed_once(rules: Rules) -> Rules:
    """The list itself is sound: each area and each floor module named once, gatherers areas."""
    areas = [area for peers in rules.areas for area in peers]
    modules = [module for floor in rules.floors for module in floor.modules]
    for kind, names in (("area", areas), ("floor module", modules)):
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"[tool.crewboard.architecture] names the {kind} {twice[0]} twice")
    unknown = sorted(rules.gatherers - set(areas))
    if unknown:
        raise ValueError(f"[tool.crewboard.architecture] gatherers: {unknown[0]} is no area")
    return rules


def _shown(path: Path) -> str:
    """The path as the reader's editor takes it: relative to where the check runs."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _edge(text: str) -> Edge:
    importer, _, imported = text.partition("->")
    return importer.strip(), imported.strip()


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


class Architecture:
    """The rules applied to one package's import graph."""

    def __init__(self, rules: Rules, graph: grimp.ImportGraph, package_dir: Path) -> None:
        self.rules = rules
        self.graph = graph
        self.package_dir = package_dir
        self.base = package_dir.parent
        self.ranks = rules.area_rank()
        self.edges: list[Edge] = sorted(
            (importer, imported)
            for importer in graph.modules
            for imported in graph.find_modules_directly_imported_by(importer)
        )

    # --- where a module stands -------------------------------------------------------------

    def floor_of(self, module: str) -> int | None:
        """The index of the module's floor (0 is the top), or None when it stands on none."""
        best: tuple[int, int] | None = None
        for index, floor in enumerate(self.rules.floors):
            for prefix in floor.modules:
                if _under(module, prefix) and (best is None or len(prefix) > best[1]):
                    best = (index, len(prefix))
        return None if best is None else best[0]

    def area_of(self, module: str) -> str | None:
        for floor in self.rules.floors:
            for prefix in floor.modules:
                home = self.rules.area_homes.get(prefix, prefix)
                if module.startswith(home + "."):
                    name = module[len(home) + 1 :].split(".", maxsplit=1)[0]
                    if name in self.ranks:
                        return name
        return None

    def door_of(self, module: str) -> str | None:
        return next((door for door in self.rules.doors if _under(module, door)), None)

    def path_of(self, module: str) -> Path:
        relative = Path(*module.split("."))
        package = self.base / relative / "__init__.py"
        return package if package.exists() else (self.base / relative).with_suffix(".py")

    def where(self, module: str) -> str:
        return _shown(self.path_of(module))

    def line_of(self, importer: str, imported: str) -> int:
        details = self.graph.get_import_details(importer=importer, imported=imported)
        return min((int(d["line_number"]) for d in details), default=1)

    # --- the rules -------------------------------------------------------------------------

    def check(self) -> list[Violation]:
        return [
            *self.check_placed(),
            *self.check_floors(),
            *self.check_areas(),
            *self.check_doors(),
            *self.check_wiring(),
            *self.check_cycles(),
            *self.check_size(),
        ]

    def _breach(self, rule: str, edge: Edge, message: str, fix: str) -> Violation:
        importer, imported = edge
        return Violation(rule, self.where(importer), self.line_of(importer, imported), message, fix)

    def _allowed(self, edge: Edge) -> bool:
        return edge in self.rules.exceptions

    def check_placed(self) -> Iterator[Violation]:
        for module in sorted(self.graph.modules):
            if module != self.rules.root and self.floor_of(module) is None:
                yield Violation(
                    "floors",
                    self.where(module),
                    1,
                    f"{module} stands on no floor.",
                    "add it (or its package) to a floor in [tool.crewboard.architecture] floors.",
                )

    def check_floors(self) -> Iterator[Violation]:
        for edge in self.edges:
            importer, imported = edge
            if imported == self.rules.root or self._allowed(edge):
                continue
            if importer == self.rules.root:
                yield self._breach(
                    "floors",
                    edge,
                    f"the root package imports {imported}.",
                    "keep the root package free of imports; everything imports it.",
                )
                continue
            upper, lower = self.floor_of(importer), self.floor_of(imported)
            if upper is None or lower is None or lower >= upper:
                continue
            low, high = self.rules.floors[upper].name, self.rules.floors[lower].name
            yield self._breach(
                "floors",
                edge,
                f"{importer} (floor {low}) imports {imported} (floor {high}, above it).",
                f"imports go down only: move what {low} needs from {imported} down to "
                f"{low} or below, or let {high} pass it in.",
            )

    def check_areas(self) -> Iterator[Violation]:
        for edge in self.edges:
            importer, imported = edge
            mine, theirs = self.area_of(importer), self.area_of(imported)
            if mine is None or theirs is None or mine == theirs or self._allowed(edge):
                continue
            if self.ranks[theirs] < self.ranks[mine] or self._gathered(edge, theirs):
                continue
            relation = "a peer of" if self.ranks[theirs] == self.ranks[mine] else "above"
            yield self._breach(
                "areas",
                edge,
                f"{importer} (area {mine}) imports {imported} (area {theirs}, {relation} {mine}).",
                f"an area imports only itself and the areas below it: move the piece {mine} "
                f"needs down to {mine} (or lower, or a floor's shared module), or have "
                f"{theirs} call {mine} instead.",
            )

    def _gathered(self, edge: Edge, area: str) -> bool:
        """A gatherer called from a higher floor (a page asking for its data)."""
        if area not in self.rules.gatherers:
            return False
        upper, lower = self.floor_of(edge[0]), self.floor_of(edge[1])
        return upper is not None and lower is not None and upper < lower

    def check_doors(self) -> Iterator[Violation]:
        for edge in self.edges:
            importer, imported = edge
            mine, theirs = self.door_of(importer), self.door_of(imported)
            if mine is None or theirs is None or mine == theirs or self._allowed(edge):
                continue
            if imported in self.rules.door_entries.get(mine, ()):
                continue
            yield self._breach(
                "doors",
                edge,
                f"the door {mine} imports the door {theirs} ({importer} -> {imported}).",
                "move what both doors use below the doors (crewboard.http, the contract, "
                "services); only the composition root wires doors together.",
            )

    def check_wiring(self) -> Iterator[Violation]:
        if not self.rules.wiring_floor:
            return
        below = self.floor_of(self.rules.wiring_below)
        if below is None:
            return
        for edge in self.edges:
            importer, imported = edge
            floor = self.floor_of(importer)
            if floor is None or floor >= below or not _under(imported, self.rules.wiring_floor):
                continue
            if any(_under(imported, w) for w in self.rules.wiring) or self._allowed(edge):
                continue
            yield self._breach(
                "wiring",
                edge,
                f"{importer} reaches into {imported}.",
                f"above {self.rules.wiring_below} take only the wiring from "
                f"{self.rules.wiring_floor} ({', '.join(self.rules.wiring)}): call a service.",
            )

    def check_cycles(self) -> Iterator[Violation]:
        for component in strongly_connected(self.graph.modules, self.edges):
            members = set(component)
            inside = [(a, b) for a, b in self.edges if a in members and b in members]
            shown = ", ".join(f"{a} -> {b} (line {self.line_of(a, b)})" for a, b in inside[:8])
            more = f" and {len(inside) - 8} more" if len(inside) > 8 else ""
            first = min(component)
            yield Violation(
                "cycles",
                self.where(first),
                1,
                f"an import circle among {len(component)} modules: {shown}{more}.",
                "break it for real: move the piece both sides need into a module below both, "
                "or let the upper side hand the lower one what it needs (registration).",
            )

    def check_size(self) -> Iterator[Violation]:
        limit = self.rules.max_module_lines
        seen: set[str] = set()
        for path in sorted(self.package_dir.rglob("*.py")):
            module = ".".join(path.relative_to(self.base).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            if any(_under(module, exempt) for exempt in self.rules.size_exempt):
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            shown = _shown(path)
            if module in self.rules.pending_splits:
                seen.add(module)
                if lines <= limit:
                    yield Violation(
                        "size",
                        shown,
                        1,
                        f"{module} is {lines} lines, within {limit}, but still listed as a "
                        "pending split.",
                        "take it out of pending_splits in [tool.crewboard.architecture].",
                    )
                continue
            if lines > limit:
                yield Violation(
                    "size",
                    shown,
                    limit + 1,
                    f"{module} is {lines} lines, over {limit}.",
                    "split it along its seams (one module per part, a package when several).",
                )
        for module in sorted(self.rules.pending_splits - seen):
            yield Violation(
                "size",
                "pyproject.toml",
                1,
                f"pending_splits names {module}, which is no module any more.",
                "take it out of pending_splits in [tool.crewboard.architecture].",
            )


def strongly_connected(nodes: Iterable[str], edges: Iterable[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Kosaraju: finish order on
    the graph, then what each node reaches backwards, in reverse finish order)."""
    forward: dict[str, list[str]] = defaultdict(list)
    backward: dict[str, list[str]] = defaultdict(list)
    everything = set(nodes)
    for a, b in edges:
        forward[a].append(b)
        backward[b].append(a)
        everything.update((a, b))
    taken: set[str] = set()
    found = []
    for node in reversed(_finish_order(forward, sorted(everything))):
        if node not in taken:
            component = _reach(backward, node, taken)
            if len(component) > 1:
                found.append(sorted(component))
    return found


def _finish_order(graph: dict[str, list[str]], nodes: list[str]) -> list[str]:
    order: list[str] = []
    seen: set[str] = set()
    for start in nodes:
        if start in seen:
            continue
        seen.add(start)
        work = [(start, iter(graph[start]))]
        while work:
            node, targets = work[-1]
            step = next((t for t in targets if t not in seen), None)
            if step is None:
                work.pop()
                order.append(node)
            else:
                seen.add(step)
                work.append((step, iter(graph[step])))
    return order


def _reach(graph: dict[str, list[str]], start: str, taken: set[str]) -> list[str]:
    taken.add(start)
    reached, stack = [start], [start]
    while stack:
        for target in graph[stack.pop()]:
            if target not in taken:
                taken.add(target)
                reached.append(target)
                stack.append(target)
    return reached


# A noqa comment, its codes, and what follows them: a reason starts with a dash or a colon.
_NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)(?P<rest>.*)")
_REASON = re.compile(r"\s*[-–:]\s*\w")


def check_noqa(root: Path, folders: Iterable[str]) -> Iterator[Violation]:
    """Every import inside a function (`# noqa: PLC0415`) gives its reason, after the codes or
    in a comment line just above. Only comments count (tokenize), not text in strings."""
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "PLC0415" not in text:
                continue
            lines = text.splitlines()
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                match = _NOQA.search(token.string) if token.type == tokenize.COMMENT else None
                if match is None or "PLC0415" not in match["codes"]:
                    continue
                number = token.start[0]
                above = lines[number - 2].strip() if number > 1 else ""
                if _REASON.match(match["rest"]) or above.startswith("#"):
                    continue
                yield Violation(
                    "noqa",
                    str(path.relative_to(root)),
                    number,
                    "an import inside a function without its reason.",
                    "say why after the code (`# noqa: PLC0415 - only with PostgreSQL`) or move "
                    "the import to the top of the module.",
                )


def package_dir(root: str) -> Path:
    spec = importlib.util.find_spec(root)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"cannot find the package {root!r} on the path")
    return Path(next(iter(spec.submodule_search_locations)))


def build(rules: Rules) -> Architecture:
    graph = grimp.build_graph(rules.root, cache_dir=None, exclude_type_checking_imports=True)
    return Architecture(rules, graph, package_dir(rules.root))


def main(argv: list[str] | None = None) -> int:
    if str(REPO / "src") not in sys.path:  # this checkout's code, not an installed one
        sys.path.insert(0, str(REPO / "src"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyproject", type=Path, default=REPO / "pyproject.toml")
    options = parser.parse_args(argv)
    started = time.perf_counter()
    rules = rules_from(options.pyproject)
    architecture = build(rules)
    found = [*architecture.check(), *check_noqa(options.pyproject.parent, rules.noqa_dirs)]
    for violation in found:
        print(violation)
    took = time.perf_counter() - started
    summary = (
        f"architecture: {len(architecture.graph.modules)} modules, "
        f"{len(architecture.edges)} imports, {len(found)} breaches ({took:.1f} s)"
    )
    print(summary, file=sys.stderr if found else sys.stdout)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
