"""Run the real app on a real port, in this process, for HTTP tests."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from crewboard.app import create_app
from crewboard.config import Settings
from crewboard.contract.catalogue import Catalogue
from crewboard.storage.database import Database
from tests.support.schema_audit import SchemaAudit


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Server(uvicorn.Server):
    """uvicorn's own server, told to stop by an event instead of its 0.1 s polling tick.

    A test suite starts and stops about a thousand of these; waiting out a tick (and the
    tick-sized pauses of a graceful stop) on each would add minutes of idle time to a run.
    The stop itself is uvicorn's: close the listener, end the connections, wait for them and
    their tasks, then run the app's lifespan shutdown.
    """

    TICK = 0.005  # seconds between looks at closing connections and tasks during a stop

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()

    def stop(self) -> None:
        """Ask the server (running in another thread) to stop, now."""
        self.should_exit = True
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended by itself
                loop.call_soon_threadsafe(self._wake.set)

    async def main_loop(self) -> None:
        self._loop = asyncio.get_running_loop()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 10) % 864000  # each pass stands for ten of uvicorn's ticks
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=1.0)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        # uvicorn sets no event when its last connection or task ends: look every TICK.
        while self.server_state.connections or self.server_state.tasks:  # noqa: ASYNC110
            await asyncio.sleep(self.TICK)
        for server in self.servers:
            await server.wait_closed()
        await self.lifespan.shutdown()


def _listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound before the app is built so that the port is held early."""
    host = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


@contextmanager
def running_server(
    settings: Settings, database: Database, catalogue: Catalogue | None = None
) -> Iterator[str]:
    """Serve `create_app(settings)` on settings.host:settings.port; yield its base URL.

    Every tool call the server takes is held against the schema it publishes (SchemaAudit):
    a call the schema would refuse fails the test when the server stops.
    """
    sock = _listening_socket(settings.host, settings.port)
    try:
        audit = SchemaAudit(create_app(settings, database=database, catalogue=catalogue))
        config = uvicorn.Config(audit, log_level="warning", lifespan="on")
        server = _Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the test server did not start within 10 s")
            time.sleep(0.005)
        try:
            yield f"http://{settings.host}:{settings.port}"
        finally:
            server.stop()
            thread.join(timeout=10)
    finally:
        sock.close()
    assert not audit.violations, "calls the published schema refuses:\n" + "\n".join(
        audit.violations
    )
