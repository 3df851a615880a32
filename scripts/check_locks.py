"""Check that the two lock files agree with each other and with pyproject.toml.

`requirements.lock` pins what serving needs ([project] dependencies); `requirements-dev.lock`
pins that plus the `dev` extra. `make serve` installs the first, `make test` adds the second
on top, so every package of the first must appear in the second at the same version, under
the same environment marker and with the same hashes: otherwise the second install would
replace a runtime package, or pip would refuse it. And a dependency added to pyproject.toml
without `make lock` must be noticed before a fresh clone fails to start.

`python scripts/check_locks.py` prints each problem and exits 1 when there is one (make check
runs it; tests/unit/test_locks.py holds it too).
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUNTIME_LOCK = "requirements.lock"
DEV_LOCK = "requirements-dev.lock"

# `name==version ; marker \` opens an entry; its `--hash=` lines follow.
_ENTRY = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)\s*(?P<rest>.*)$"
)
_HASH = re.compile(r"--hash=(\S+)")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class Pin:
    """One entry of a lock: a package at a version, under a marker, with its hashes."""

    name: str
    version: str
    marker: str
    hashes: frozenset[str]


def normalised(name: str) -> str:
    """A distribution name as pip compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(text: str) -> dict[tuple[str, str], Pin]:
    """The lock's entries keyed by (name, marker): a universal lock may pin one package twice,
    at two versions for two markers."""
    pins: dict[tuple[str, str], Pin] = {}
    entries: list[tuple[str, str, str, list[str]]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        found = _ENTRY.match(line)
        if found:
            marker = found["rest"].rstrip("\\").strip().removeprefix(";").strip()
            entries.append((normalised(found["name"]), found["version"], marker, []))
        elif entries:
            entries[-1][3].extend(_HASH.findall(stripped))
    for name, version, marker, hashes in entries:
        pins[name, marker] = Pin(name, version, marker, frozenset(hashes))
    return pins


def mismatches(runtime: dict[tuple[str, str], Pin], dev: dict[tuple[str, str], Pin]) -> list[str]:
    """What the dev lock pins differently from the runtime lock."""
    problems = []
    for key, pin in sorted(runtime.items()):
        other = dev.get(key)
        where = f"{pin.name}" + (f" ; {pin.marker}" if pin.marker else "")
        if other is None:
            problems.append(f"{where}: in {RUNTIME_LOCK} ({pin.version}) but not in {DEV_LOCK}")
        elif other.version != pin.version:
            problems.append(
                f"{where}: {pin.version} in {RUNTIME_LOCK}, {other.version} in {DEV_LOCK}"
            )
        elif other.hashes != pin.hashes:
            problems.append(f"{where}: the two locks list different hashes for {pin.version}")
    return problems


def missing(requirements: list[str], lock: dict[tuple[str, str], Pin], lock_name: str) -> list[str]:
    """The requirements of pyproject.toml that the lock does not pin at all."""
    pinned = {pin.name for pin in lock.values()}
    problems = []
    for requirement in requirements:
        found = _NAME.match(requirement)
        if found and normalised(found[1]) not in pinned:
            problems.append(f"{requirement!r} is in pyproject.toml but not in {lock_name}")
    return problems


def problems_in(repo: Path) -> list[str]:
    """Every disagreement between the locks and pyproject.toml in `repo`."""
    project = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = read_lock((repo / RUNTIME_LOCK).read_text(encoding="utf-8"))
    dev = read_lock((repo / DEV_LOCK).read_text(encoding="utf-8"))
    return (
        mismatches(runtime, dev)
        + missing(project["dependencies"], runtime, RUNTIME_LOCK)
        + missing(project["dependencies"], dev, DEV_LOCK)
        + missing(project["optional-dependencies"]["dev"], dev, DEV_LOCK)
    )


def main() -> int:
    problems = problems_in(REPO)
    for problem in problems:
        print(problem)
    if problems:
        print("Run `make lock` to re-pin both lock files from pyproject.toml.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
