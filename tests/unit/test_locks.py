"""requirements.lock (serving) and requirements-dev.lock (serving + dev tools) agree with each
other and with pyproject.toml: scripts/check_locks.py, on the real files and on broken copies."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "scripts") not in sys.path:  # the scripts are files, not a package
    sys.path.insert(0, str(REPO / "scripts"))
check_locks = importlib.import_module("check_locks")


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for name in ("pyproject.toml", "requirements.lock", "requirements-dev.lock"):
        shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_repository_locks_agree() -> None:
    assert check_locks.problems_in(REPO) == []


def test_the_runtime_lock_holds_no_dev_tool() -> None:
    runtime = check_locks.read_lock((REPO / "requirements.lock").read_text(encoding="utf-8"))
    names = {pin.name for pin in runtime.values()}
    assert {"pytest", "mypy", "playwright", "ruff", "schemathesis"}.isdisjoint(names)
    assert {"uvicorn", "mcp", "prometheus-client"} <= names


def test_a_runtime_package_at_another_version_in_the_dev_lock_is_named(copy: Path) -> None:
    runtime = check_locks.read_lock((copy / "requirements.lock").read_text(encoding="utf-8"))
    pin = runtime["alembic", ""]
    _edit(copy / "requirements-dev.lock", f"alembic=={pin.version}", "alembic==0.0.1")
    problems = check_locks.problems_in(copy)
    assert len(problems) == 1
    assert "alembic" in problems[0]
    assert "0.0.1" in problems[0]


def test_a_hash_missing_from_the_dev_lock_is_named(copy: Path) -> None:
    runtime = check_locks.read_lock((copy / "requirements.lock").read_text(encoding="utf-8"))
    dropped = sorted(runtime["alembic", ""].hashes)[0]
    _edit(copy / "requirements-dev.lock", f"--hash={dropped}", "--hash=sha256:00")
    assert [p for p in check_locks.problems_in(copy) if "alembic" in p and "hashes" in p]


def test_a_dependency_added_without_relocking_is_named(copy: Path) -> None:
    _edit(
        copy / "pyproject.toml",
        '    "tzdata>=2024.1",\n',
        '    "tzdata>=2024.1",\n    "rich>=13",\n',
    )
    problems = check_locks.problems_in(copy)
    assert problems
    assert all("rich" in problem for problem in problems)
    assert any("requirements.lock" in problem for problem in problems)


def test_a_marker_forked_pin_is_read_once_per_marker() -> None:
    text = (
        "foo==1.0 ; python_full_version < '3.12' \\\n    --hash=sha256:aa\n"
        "foo==2.0 ; python_full_version >= '3.12' \\\n    --hash=sha256:bb \\\n"
        "    --hash=sha256:cc\n    # via bar\n"
    )
    pins = check_locks.read_lock(text)
    assert pins["foo", "python_full_version < '3.12'"].version == "1.0"
    newer = pins["foo", "python_full_version >= '3.12'"]
    assert newer.hashes == {"sha256:bb", "sha256:cc"}
