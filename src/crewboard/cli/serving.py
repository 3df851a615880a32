"""Serving HTTP (`crewboard serve`).

Kept apart from cli/main.py so the app and uvicorn load only for the command that serves:
every other command (a script calling `crewboard user list`, `crewboard mcp` over stdio)
starts in a fraction of the time.
"""

from __future__ import annotations

import signal
import socket
from types import FrameType

import uvicorn

from crewboard.app import create_app
from crewboard.config import Settings
from crewboard.services.live import Broker
from crewboard.storage.database import Database


def serve(settings: Settings, db: Database) -> None:
    """Serve the whole app over HTTP until SIGTERM or SIGINT; then stop gracefully."""
    app = create_app(settings, database=db)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        lifespan="on",
        server_header=False,
        timeout_graceful_shutdown=GRACE,
    )
    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then re-raises the signal to the
    # handler that was there before it: make that one end the process with status 0.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_after_graceful_shutdown)
    _Server(config, app.state.broker).run()


GRACE = 20  # seconds a stopping server waits for requests still running before cutting them


class _Server(uvicorn.Server):
    """Ends the live streams as the first step of a graceful stop: uvicorn waits for every open
    response to finish, and a stream never would. Each stream gets `event: end` with the
    reason, and its client resumes on another node from its Last-Event-ID."""

    def __init__(self, config: uvicorn.Config, broker: Broker) -> None:
        super().__init__(config)
        self.broker = broker

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.broker.close_all("The server is stopping; reconnect to resume.")
        await super().shutdown(sockets)


def _exit_after_graceful_shutdown(_signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(0)
