"""Run the real app on a real port, in this process, for HTTP tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from crewboard.app import create_app
from crewboard.config import Settings
from crewboard.mcp.catalogue import Catalogue
from crewboard.storage.database import Database
from tests.support.schema_audit import SchemaAudit


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_server(
    settings: Settings, database: Database, catalogue: Catalogue | None = None
) -> Iterator[str]:
    """Serve `create_app(settings)` on settings.host:settings.port; yield its base URL.

    Every tool call the server takes is held against the schema it publishes (SchemaAudit):
    a call the schema would refuse fails the test when the server stops.
    """
    audit = SchemaAudit(create_app(settings, database=database, catalogue=catalogue))
    config = uvicorn.Config(
        audit,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        lifespan="on",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start within 10 s")
        time.sleep(0.01)
    try:
        yield f"http://{settings.host}:{settings.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert not audit.violations, "calls the published schema refuses:\n" + "\n".join(
        audit.violations
    )
