"""`crewboard serve` with CREWBOARD_LOG_FORMAT=json: its log lines are JSON objects, its own
access line (with the door and the request id) replaces uvicorn's; CREWBOARD_ACCESS_LOG=off
writes neither."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy.engine import URL

from tests.support.serve import serve_env, start_serve, stop_serve, wait_healthy
from tests.support.server import free_port


def records(log: Path) -> list[dict[str, Any]]:
    """The JSON lines of the log (the first start's greeting is plain text on stdout)."""
    found = []
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            found.append(json.loads(line))
    return found


def test_json_logs_carry_each_request_with_its_id_and_door(
    empty_database_url: URL, tmp_path: Path
) -> None:
    port = free_port()
    env = {**serve_env(empty_database_url, tmp_path / "data", port), "CREWBOARD_LOG_FORMAT": "json"}
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    process = start_serve(env, log)
    try:
        wait_healthy(url, process, log)
        refused = httpx2.get(
            f"{url}/api/v1/projects", headers={"x-request-id": "req-rest-1"}, timeout=30
        )
        assert refused.status_code == 401
        assert refused.headers["x-request-id"] == "req-rest-1"
        page = httpx2.get(f"{url}/login", timeout=30)
        assert page.status_code == 200
        made = page.headers["x-request-id"]
        mcp = httpx2.get(f"{url}/mcp", timeout=30)
        assert mcp.status_code == 405
    finally:
        assert stop_serve(process) == 0

    lines = records(log)
    for line in lines:
        assert {"time", "level", "logger", "message"} <= line.keys(), line
    assert any(line["logger"].startswith("uvicorn") for line in lines), lines  # uvicorn's own
    access = {line["request_id"]: line for line in lines if line["logger"] == "crewboard.access"}
    rest = access["req-rest-1"]
    assert rest["method"] == "GET"
    assert rest["path"] == "/api/v1/projects"
    assert rest["status"] == 401
    assert rest["door"] == "rest"
    assert rest["duration_ms"] >= 0
    assert rest["level"] == "INFO"
    assert access[made]["door"] == "web"
    assert access[made]["status"] == 200
    assert any(line["door"] == "mcp" and line["status"] == 405 for line in access.values())
    # uvicorn's access lines are gone, not doubled.
    assert '"GET /login HTTP/1.1"' not in log.read_text()


def test_text_logs_keep_uvicorn_access_lines(empty_database_url: URL, tmp_path: Path) -> None:
    port = free_port()
    env = serve_env(empty_database_url, tmp_path / "data", port)
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    process = start_serve(env, log)
    try:
        wait_healthy(url, process, log)
        assert httpx2.get(f"{url}/login", timeout=30).status_code == 200
    finally:
        assert stop_serve(process) == 0
    text = log.read_text()
    assert '"GET /login HTTP/1.1" 200' in text
    assert records(log) == []


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_access_log_off_writes_no_line_per_request(
    empty_database_url: URL, tmp_path: Path, log_format: str
) -> None:
    port = free_port()
    env = {
        **serve_env(empty_database_url, tmp_path / "data", port),
        "CREWBOARD_LOG_FORMAT": log_format,
        "CREWBOARD_ACCESS_LOG": "OFF",  # any case, as the other on/off settings
    }
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    process = start_serve(env, log)
    try:
        wait_healthy(url, process, log)
        assert httpx2.get(f"{url}/login", timeout=30).status_code == 200
        assert httpx2.get(f"{url}/mcp", timeout=30).status_code == 405
    finally:
        assert stop_serve(process) == 0
    text = log.read_text()
    assert "GET /login" not in text
    assert "GET /mcp" not in text
    assert not [line for line in records(log) if line["logger"] == "crewboard.access"]
    if log_format == "json":
        assert any(line["logger"].startswith("uvicorn") for line in records(log))  # the rest stays
