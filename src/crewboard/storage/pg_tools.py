"""Running PostgreSQL's client tools for backups: finding pg_dump and pg_restore, their
major version, and running one with its progress read from its verbose lines. The password
goes to the tool through PGPASSWORD, never on its command line or in what is shown."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import deque
from collections.abc import Callable
from pathlib import Path

from sqlalchemy.engine import URL

Advance = Callable[[str, int], None]

_VERSION = re.compile(r"\)\s*(\d+)")  # "pg_dump (PostgreSQL) 15.20 (Debian …)"


class BackupError(Exception):
    """A backup or restore refused or failed. `reason` is stable (tests and scripts match on
    it); the message says what is wrong and what to do."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise BackupError(
            "tool_missing",
            f"{name} is not installed (or not on PATH): install the PostgreSQL client tools "
            "of the server's major version (Debian/Ubuntu: postgresql-client)",
        )
    return found


def major_of(version_line: str) -> int:
    """The major version in a tool's `--version` line, 0 when it names none."""
    match = _VERSION.search(version_line)
    return int(match.group(1)) if match else 0


def tool_version(tool: str) -> tuple[str, int]:
    """`pg_dump --version`'s line and its major version."""
    done = subprocess.run(  # noqa: S603 - a PostgreSQL tool found on PATH, fixed arguments
        [tool, "--version"], capture_output=True, text=True, check=False
    )
    line = done.stdout.strip()
    match = _VERSION.search(line)
    if done.returncode != 0 or match is None:
        raise BackupError("tool_failed", f"`{tool} --version` answered {line or done.stderr!r}")
    return line, int(match.group(1))


def run(
    command: list[str], url: URL, progress_line: re.Pattern[str], step: str, advance: Advance
) -> None:
    """Run pg_dump or pg_restore; each of its verbose lines naming a table advances `step`.
    The password goes through PGPASSWORD, never the command line."""
    env = dict(os.environ)
    if url.password is not None:
        env["PGPASSWORD"] = str(url.password)
    errors: list[str] = []
    tail: deque[str] = deque(maxlen=8)
    process = subprocess.Popen(  # noqa: S603 - a PostgreSQL tool found on PATH
        command,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
    )
    with process:
        for line in process.stderr or ():
            if progress_line.search(line):
                advance(step, 1)
            elif "error" in line.lower() or "fatal" in line.lower():
                errors.append(line.rstrip())
            else:
                tail.append(line.rstrip())
    if process.returncode != 0:
        said = "\n".join(errors[:10] or list(tail))
        tool = Path(command[0]).name
        raise BackupError(
            "tool_failed", f"{tool} failed (exit status {process.returncode}):\n{said}"
        )


def libpq(url: URL) -> str:
    """The libpq spelling of the SQLAlchemy URL, without the password."""
    return url.set(drivername="postgresql", password=None).render_as_string(hide_password=False)


def shown(url: URL) -> str:
    return url.render_as_string(hide_password=True)
