"""`crewboard serve` as a user runs it: a real process, a real port, a clean stop."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from sqlalchemy.engine import URL

from tests.support.server import free_port

TOKEN = re.compile(r"\bcb_[0-9A-Za-z]{38}\b")


def _start(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "crewboard", "serve"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"serve exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.1)
    pytest.fail(f"serve did not answer /healthz within 30 s:\n{log.read_text()}")


def _stop(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=15)


def test_serve_initialises_prints_a_working_token_and_stops_cleanly(
    empty_database_url: URL, tmp_path: Path
) -> None:
    port = free_port()
    env = {
        **os.environ,
        "CREWBOARD_DATA_DIR": str(tmp_path / "data"),
        "CREWBOARD_DATABASE_URL": empty_database_url.render_as_string(hide_password=False),
        "CREWBOARD_PORT": str(port),
    }
    env.pop("CREWBOARD_CONFIG_FILE", None)
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "first.log"
    process = _start(env, log)
    try:
        _wait_healthy(url, process, log)
        output = log.read_text()
        secrets_found = TOKEN.findall(output)
        assert secrets_found, output
        token = secrets_found[0]
        me = httpx2.get(f"{url}/api/v1/me", headers={"Authorization": f"Bearer {token}"})
        assert me.status_code == 200
        assert f"{url}/mcp" in output
        assert "password:" in output
    finally:
        assert _stop(process) == 0

    log = tmp_path / "second.log"
    process = _start(env, log)
    try:
        _wait_healthy(url, process, log)
        output = log.read_text()
        assert TOKEN.findall(output) == []
        assert "password:" not in output
        assert (
            httpx2.get(f"{url}/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code
            == 200
        )
    finally:
        assert _stop(process) == 0
