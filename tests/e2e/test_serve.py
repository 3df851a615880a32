"""`crewboard serve` as a user runs it: a real process, a real port, a clean stop."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

import httpx2
from sqlalchemy.engine import URL

from tests.support.cli import crewboard_env, run_crewboard
from tests.support.serve import serve_env, start_serve, stop_serve, wait_healthy
from tests.support.server import free_port
from tests.support.sse import Reader

TOKEN = re.compile(r"\bcb_[0-9A-Za-z]{38}\b")


def test_serve_initialises_prints_a_working_token_and_stops_cleanly(
    empty_database_url: URL, tmp_path: Path
) -> None:
    port = free_port()
    env = serve_env(empty_database_url, tmp_path / "data", port)
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "first.log"
    process = start_serve(env, log)
    try:
        wait_healthy(url, process, log)
        output = log.read_text()
        secrets_found = TOKEN.findall(output)
        assert secrets_found, output
        token = secrets_found[0]
        me = httpx2.get(f"{url}/api/v1/me", headers={"Authorization": f"Bearer {token}"})
        assert me.status_code == 200
        assert f"{url}/mcp" in output
        assert "password:" in output
    finally:
        assert stop_serve(process) == 0

    log = tmp_path / "second.log"
    process = start_serve(env, log)
    try:
        wait_healthy(url, process, log)
        output = log.read_text()
        assert TOKEN.findall(output) == []
        assert "password:" not in output
        assert (
            httpx2.get(f"{url}/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code
            == 200
        )
    finally:
        assert stop_serve(process) == 0


def test_a_stop_ends_open_event_streams_with_a_reason_instead_of_waiting_on_them(
    empty_database_url: URL, tmp_path: Path
) -> None:
    port = free_port()
    env = serve_env(empty_database_url, tmp_path / "data", port)
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    process = start_serve(env, log)
    try:
        wait_healthy(url, process, log)
        token = TOKEN.findall(log.read_text())[0]
        reader = Reader(f"{url}/api/v1/projects/DEMO/events", token)
        assert reader.ready.wait(10)
        started = time.monotonic()
    finally:
        assert stop_serve(process) == 0
    assert time.monotonic() - started < 10  # not the 20 s grace: the stream ended at once
    reader.join(10)
    assert reader.controls == [("end", {"reason": "The server is stopping; reconnect to resume."})]


def test_a_taken_port_stops_serve_with_what_to_do_before_anything_is_set_up(
    tmp_path: Path,
) -> None:
    """A second `make serve` (or another program on the port): one plain message naming the
    port and the way out, exit 1, and no data folder made nor first-start secrets printed."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        data = tmp_path / "data"
        done = run_crewboard(crewboard_env(data, port=str(port)), "serve")
    assert done.returncode == 1, done.stderr
    assert f"Port {port} on 127.0.0.1 is already taken" in done.stderr
    assert "crewboard serve --port" in done.stderr
    assert "Traceback" not in done.stderr
    assert "password" not in done.stdout + done.stderr
    assert not data.exists()
