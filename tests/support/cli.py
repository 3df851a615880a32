"""The `crewboard` command in tests: the shape of the in-process `run` fixture, and the real
command run as its own process (as an operator or a script runs it), on a pipe or on a
pseudo-terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy.engine import URL

from crewboard.cli.main import cli

RunCli = Callable[..., Result]


def cli_on(database_url: URL, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """The `crewboard` command in-process (click's runner) on `database_url`, its data folder
    `data_dir`, no config file: what the `run` fixtures hand a test."""
    monkeypatch.setenv("CREWBOARD_DATA_DIR", str(data_dir))
    monkeypatch.setenv("CREWBOARD_DATABASE_URL", database_url.render_as_string(hide_password=False))
    monkeypatch.delenv("CREWBOARD_CONFIG_FILE", raising=False)
    runner = CliRunner()

    def invoke(*args: str, stdin: str | None = None) -> Result:
        return runner.invoke(cli, list(args), input=stdin, catch_exceptions=False)

    return invoke


CREWBOARD = [sys.executable, "-m", "crewboard"]


def crewboard_env(data_dir: Path, **settings: str) -> dict[str, str]:
    """This process's environment without any CREWBOARD_ variable of its own, with the data
    folder and the given settings (`database_url="…"` → CREWBOARD_DATABASE_URL)."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("CREWBOARD_")}
    named = {f"CREWBOARD_{name.upper()}": value for name, value in settings.items()}
    return {**kept, "CREWBOARD_DATA_DIR": str(data_dir), **named}


def run_crewboard(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`crewboard ARGS…` as its own process, its output captured (standard error a pipe)."""
    return subprocess.run(
        [*CREWBOARD, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def on_a_terminal(
    env: dict[str, str], *args: str, only_stderr: bool = False
) -> tuple[int, str, str]:
    """`crewboard ARGS…` with a pseudo-terminal as its standard streams (with `only_stderr`,
    standard error alone; standard output then a pipe): its exit status, what the terminal
    showed, and what the pipe got."""
    controller, terminal = pty.openpty()
    output: int = subprocess.PIPE if only_stderr else terminal
    with subprocess.Popen(
        [*CREWBOARD, *args], env=env, stdin=terminal, stdout=output, stderr=terminal, text=True
    ) as process:
        os.close(terminal)
        shown = _read_all(controller)
        piped = process.stdout.read() if process.stdout else ""
        status = process.wait(timeout=60)
    return status, shown, piped


def _read_all(descriptor: int) -> str:
    chunks = []
    try:
        while chunk := os.read(descriptor, 65536):
            chunks.append(chunk)
    except OSError:  # EIO: the terminal closed with the process
        pass
    finally:
        os.close(descriptor)
    return b"".join(chunks).decode(errors="replace")
