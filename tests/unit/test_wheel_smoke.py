"""scripts/wheel_smoke.py's content check: a wheel missing a tracked package file fails, naming
it (the whole smoke run, build and install included, is `make wheel-smoke`)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "scripts") not in sys.path:  # the scripts are files, not a package
    sys.path.insert(0, str(REPO / "scripts"))
wheel_smoke = importlib.import_module("wheel_smoke")


def _package_files() -> list[str]:
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "src/crewboard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [path.removeprefix("src/") for path in listed]


def _wheel(tmp_path: Path, names: list[str]) -> Path:
    wheel = tmp_path / "crewboard-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in names:
            archive.writestr(name, b"")
    return wheel


def test_a_wheel_with_every_tracked_file_passes(tmp_path: Path) -> None:
    wheel_smoke.check_wheel_contents(_wheel(tmp_path, _package_files()), REPO)


def test_a_wheel_without_a_vendored_file_fails_naming_it(tmp_path: Path) -> None:
    files = _package_files()
    vendored = next(name for name in files if "/static/vendor/" in name)
    wheel = _wheel(tmp_path, [name for name in files if name != vendored])
    with pytest.raises(wheel_smoke.SmokeFailure, match=vendored):
        wheel_smoke.check_wheel_contents(wheel, REPO)
