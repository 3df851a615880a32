"""scripts/check_architecture.py: each rule fails on a small package built to break it (imports
inside functions count, those under TYPE_CHECKING do not), and the real tree passes."""

from __future__ import annotations

import dataclasses
import importlib
import sys
import textwrap
import uuid
from pathlib import Path
from types import ModuleType

import grimp
import pytest

REPO = Path(__file__).resolve().parents[2]


def _script(name: str) -> ModuleType:
    """The scripts are files, not a package: import them from their folder."""
    if str(REPO / "scripts") not in sys.path:
        sys.path.insert(0, str(REPO / "scripts"))
    return importlib.import_module(name)


arch = _script("check_architecture")

# A small house that keeps every rule: the CLI starts the app, the app wires two doors, the
# doors call services, services use storage and the domain; screens gathers across areas.
HOUSE = {
    "__init__.py": "",
    "cli/__init__.py": "from {p} import app\nfrom {p}.web import serve\n",
    "app.py": "from {p}.api import routes\nfrom {p}.web import pages\nfrom {p}.storage import database\n",
    "api/__init__.py": "",
    "api/routes.py": "from {p}.services.board import tasks\n",
    "web/__init__.py": "",
    "web/serve.py": "",
    "web/pages.py": "from {p}.services.screens import page\n",
    "web/board.py": "from {p}.services.screens import page\n",
    "services/__init__.py": "",
    "services/board/__init__.py": "",
    "services/board/tasks.py": (
        "from {p}.storage.board import rows\nfrom {p}.services.identity import people\n"
    ),
    "services/board/helpers.py": "",
    "services/identity/__init__.py": "",
    "services/identity/people.py": "from {p}.domain import rules\n",
    "services/review/__init__.py": "",
    "services/review/drafts.py": "from {p}.services.board import tasks\n",
    "services/specs/__init__.py": "",
    "services/specs/files.py": "",
    "services/screens/__init__.py": "",
    "services/screens/page.py": "from {p}.services.review import drafts\n",
    "storage/__init__.py": "",
    "storage/database.py": "",
    "storage/board/__init__.py": "",
    "storage/board/rows.py": "from {p}.domain import rules\n",
    "storage/old/__init__.py": "",
    "domain/__init__.py": "",
    "domain/rules.py": "",
}


def _rules(package: str, **changes: object) -> object:
    p = package
    rules = arch.Rules(
        root=p,
        floors=tuple(
            arch.Floor(name, tuple(f"{p}.{m}" for m in modules))
            for name, modules in [
                ("cli", ["cli"]),
                ("app", ["app"]),
                ("doors", ["api", "web"]),
                ("services", ["services"]),
                ("storage", ["storage"]),
                ("domain", ["domain"]),
            ]
        ),
        areas=(("identity",), ("board",), ("review", "specs"), ("screens",)),
        gatherers=frozenset({"screens"}),
        doors=(f"{p}.cli", f"{p}.api", f"{p}.web"),
        door_entries={f"{p}.cli": (f"{p}.web.serve",)},
        wiring_floor=f"{p}.storage",
        wiring_below=f"{p}.services",
        wiring=(f"{p}.storage.database",),
        max_module_lines=20,
        size_exempt=(f"{p}.storage.old",),
    )
    return dataclasses.replace(rules, **changes)


def _house(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str] | None = None
) -> str:
    """Write the house (with `files` added or replaced) as a fresh package under tmp_path; its
    name (`{p}` in a file's text)."""
    package = f"house_{uuid.uuid4().hex[:8]}"
    tree = {**HOUSE, **(files or {})}
    for name, text in tree.items():
        path = tmp_path / package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).format(p=package))
    monkeypatch.syspath_prepend(str(tmp_path))
    return package


def _check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str] | None = None
) -> list[str]:
    package = _house(tmp_path, monkeypatch, files)
    return _check_package(package, _rules(package))


def _check_package(package: str, rules: object) -> list[str]:
    graph = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=True)
    return [str(v) for v in arch.Architecture(rules, graph, arch.package_dir(package)).check()]


def test_the_small_house_keeps_every_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _check(tmp_path, monkeypatch) == []


def test_an_import_up_a_floor_fails_even_inside_a_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _check(
        tmp_path,
        monkeypatch,
        {"domain/rules.py": "def f():\n    from {p}.services.board import helpers\n"},
    )
    assert len(found) == 1
    assert "rules.py:2: [floors]" in found[0]
    assert "(floor domain) imports" in found[0]
    assert "(floor services, above it)" in found[0]
    assert "Fix: imports go down only" in found[0]


def test_an_import_under_type_checking_does_not_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from {p}.api import routes\n"
    assert _check(tmp_path, monkeypatch, {"domain/rules.py": text}) == []


def test_a_module_on_no_floor_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = _check(tmp_path, monkeypatch, {"loose.py": ""})
    assert len(found) == 1
    assert "[floors]" in found[0]
    assert "loose stands on no floor" in found[0]


def test_an_area_importing_a_higher_area_fails_across_floors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "def f():\n    from {p}.storage.board import rows\n"
    found = _check(tmp_path, monkeypatch, {"services/identity/people.py": text})
    assert len(found) == 1
    assert "people.py:2: [areas]" in found[0]
    assert "(area identity) imports" in found[0]
    assert "(area board, above identity)" in found[0]


def test_an_area_importing_a_peer_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "from {p}.services.board import tasks\nfrom {p}.services.specs import files\n"
    found = _check(tmp_path, monkeypatch, {"services/review/drafts.py": text})
    assert len(found) == 1
    assert "drafts.py:2: [areas]" in found[0]
    assert "(area specs, a peer of review)" in found[0]


def test_a_gatherer_serves_higher_floors_but_not_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # web/board.py (area board, a door) calls screens in the house already; a board service
    # calling it is an area calling a higher one.
    found = _check(
        tmp_path,
        monkeypatch,
        {"services/board/helpers.py": "from {p}.services.screens import page\n"},
    )
    assert len(found) == 1
    assert "[areas]" in found[0]
    assert "(area screens, above board)" in found[0]


def test_a_listed_exception_lets_one_import_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "from {p}.storage.board import rows\n"
    package = _house(tmp_path, monkeypatch, {"services/identity/people.py": text})
    broken = _check_package(package, _rules(package))
    assert len(broken) == 1
    edge = (f"{package}.services.identity.people", f"{package}.storage.board.rows")
    assert _check_package(package, _rules(package, exceptions={edge: "a reason"})) == []


def test_a_door_importing_another_door_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "from {p}.services.board import tasks\nfrom {p}.web import pages\n"
    found = _check(tmp_path, monkeypatch, {"api/routes.py": text})
    assert len(found) == 1
    assert "routes.py:2: [doors]" in found[0]
    assert "the door " in found[0]
    assert "below the doors" in found[0]


def test_the_cli_reaches_another_door_only_by_its_named_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "from {p} import app\nfrom {p}.web import serve\nfrom {p}.web import pages\n"
    found = _check(tmp_path, monkeypatch, {"cli/__init__.py": text})
    assert len(found) == 1
    assert "[doors]" in found[0]
    assert "web.pages" in found[0]


def test_a_door_reaching_past_the_storage_wiring_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "from {p}.services.board import tasks\nfrom {p}.storage.board import rows\n"
    found = _check(tmp_path, monkeypatch, {"api/routes.py": text})
    assert len(found) == 1
    assert "routes.py:2: [wiring]" in found[0]
    assert "call a service" in found[0]


def test_an_import_circle_fails_even_behind_a_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _check(
        tmp_path,
        monkeypatch,
        {
            "storage/database.py": "def f():\n    from {p}.storage.board import rows\n",
            "storage/board/rows.py": "from {p}.domain import rules\nfrom {p}.storage import database\n",
        },
    )
    assert len(found) == 1
    assert "[cycles] an import circle among 2 modules" in found[0]
    assert "storage.database -> " in found[0]
    assert "storage.board.rows (line 2)" in found[0]
    assert "break it for real" in found[0]


def test_strongly_connected_finds_each_circle_and_nothing_else() -> None:
    edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "d"), ("f", "a")]
    found = arch.strongly_connected(["a", "b", "c", "d", "e", "f", "g"], edges)
    assert sorted(found) == [["a", "b", "c"], ["d", "e"]]


def test_a_module_over_the_limit_fails_unless_exempt_or_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = "x = 1\n" * 21
    package = _house(
        tmp_path,
        monkeypatch,
        {
            "services/board/helpers.py": long,
            "services/specs/files.py": long,
            "storage/old/big.py": long,
        },
    )
    found = _check_package(package, _rules(package))
    assert [f.split(" Fix: ")[0] for f in found] == [
        f"{_shown(tmp_path, package, 'services/board/helpers.py')}:21: [size] "
        f"{package}.services.board.helpers is 21 lines, over 20.",
        f"{_shown(tmp_path, package, 'services/specs/files.py')}:21: [size] "
        f"{package}.services.specs.files is 21 lines, over 20.",
    ]
    pending = frozenset({f"{package}.services.board.helpers", f"{package}.services.specs.files"})
    assert _check_package(package, _rules(package, pending_splits=pending)) == []


def test_a_pending_split_within_the_limit_must_leave_the_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = _house(tmp_path, monkeypatch)
    pending = frozenset({f"{package}.services.board.tasks", f"{package}.services.gone"})
    found = _check_package(package, _rules(package, pending_splits=pending))
    assert len(found) == 2
    assert "still listed as a pending split" in found[0]
    assert "names " + f"{package}.services.gone, which is no module any more" in found[1]


def _shown(tmp_path: Path, package: str, relative: str) -> str:
    return arch._shown(tmp_path / package / relative)


def test_an_import_inside_a_function_gives_its_reason(tmp_path: Path) -> None:
    noqa = "# noqa: " + "PLC0415"  # split, so that this file holds no such comment itself
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(
        "def f():\n"
        f"    import json  {noqa}\n"
        f"    import csv  # noqa: F401, {noqa[8:]} - only to say whether it is there\n"
        "    # Loaded only when asked for, to keep the start fast.\n"
        f"    import zlib  {noqa}\n"
        f"    import gzip  {noqa}\n"
        f"    text = '{noqa} in a string is no comment'\n"
        f"    import bz2  {noqa} (trailing words are no reason)\n"
    )
    found = [str(v) for v in arch.check_noqa(tmp_path, ["src"])]
    assert [f.split(" Fix: ")[0] for f in found] == [
        "src/a.py:2: [noqa] an import inside a function without its reason.",
        "src/a.py:6: [noqa] an import inside a function without its reason.",
        "src/a.py:8: [noqa] an import inside a function without its reason.",
    ]
    assert found[0].endswith(
        "Fix: say why after the code (`# noqa: PLC0415 - only with PostgreSQL`) or move the "
        "import to the top of the module."
    )


def test_the_real_tree_keeps_every_rule() -> None:
    rules = arch.rules_from(REPO / "pyproject.toml")
    found = [str(v) for v in arch.build(rules).check()]
    found += [str(v) for v in arch.check_noqa(REPO, rules.noqa_dirs)]
    assert found == [], "\n".join(found)


def test_the_list_itself_names_each_area_once(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        "[tool.crewboard.architecture]\n"
        'root = "house"\n'
        'areas = [["identity"], ["board", "identity"]]\n'
        '[[tool.crewboard.architecture.floors]]\nname = "domain"\nmodules = ["house.domain"]\n'
    )
    with pytest.raises(ValueError, match="names the area identity twice"):
        arch.rules_from(pyproject)
