"""`crewboard serve` as its own process, started the way an operator starts it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from sqlalchemy.engine import URL

START_TIMEOUT = 30.0  # seconds for `serve` to migrate, initialise and answer /healthz


def serve_env(database_url: URL, data_dir: Path, port: int) -> dict[str, str]:
    """This process's environment with the instance's settings (and no config file)."""
    env = {
        **os.environ,
        "CREWBOARD_DATA_DIR": str(data_dir),
        "CREWBOARD_DATABASE_URL": database_url.render_as_string(hide_password=False),
        "CREWBOARD_PORT": str(port),
    }
    env.pop("CREWBOARD_CONFIG_FILE", None)
    return env


def start_serve(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """`python -m crewboard serve`, its output (both streams) in `log`."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "crewboard", "serve"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Return once /healthz answers 200; fail the test if serve exits or takes too long."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"serve exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.05)  # a process start-up has no event to wait on; the bound is above
    pytest.fail(f"serve did not answer /healthz within {START_TIMEOUT:.0f} s:\n{log.read_text()}")


def stop_serve(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM, as an operator stops it; the exit code."""
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=15)


def kill_serve(process: subprocess.Popen[bytes]) -> int:
    """SIGKILL (`kill -9`): no shutdown, no flush, connections cut where they are."""
    process.kill()
    return process.wait(timeout=15)
