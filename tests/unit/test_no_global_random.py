"""Server code never draws from the process-wide `random` generator.

Background loops (the supervisor's back-off, a provider's retry jitter) run in threads beside
whatever else the process does; in the test suites that includes Hypothesis, which fails a
test when the global generator moves while it draws. Code that wants jitter keeps a
`random.Random()` of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import crewboard

SRC = Path(crewboard.__file__).parent


def _global_draws(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "random"
        and node.func.attr not in {"Random", "SystemRandom"}
    ]


def test_no_module_of_the_server_draws_from_the_process_wide_random_generator() -> None:
    found = {
        str(path.relative_to(SRC)): lines
        for path in sorted(SRC.rglob("*.py"))
        if (lines := _global_draws(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}
