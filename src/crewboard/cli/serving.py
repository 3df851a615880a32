"""Serving HTTP (`crewboard serve`).

Kept apart from cli/main.py so the app and uvicorn load only for the command that serves:
every other command (a script calling `crewboard user list`, `crewboard mcp` over stdio)
starts in a fraction of the time.
"""

from __future__ import annotations

import errno
import signal
import socket
from types import FrameType

import click
import uvicorn

from crewboard.app import create_app
from crewboard.config import Settings
from crewboard.http.logs import json_log_config, text_log_config
from crewboard.services.live import Broker
from crewboard.services.sessions.code import stop_long_polls
from crewboard.storage.database import Database


def listen(settings: Settings) -> socket.socket:
    """The server's listening socket, bound before anything else happens (no migration, no
    first-start secrets printed), so a port already taken stops `serve` with a plain message
    instead of uvicorn's errno after the start-up output."""
    host = settings.host
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds its own
    try:
        sock.bind((host, settings.port))
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise click.ClickException(
                f"Port {settings.port} on {host} is already taken, most likely by another "
                "`crewboard serve` (a stopping one takes up to "
                f"{GRACE} s). Stop it, or serve on another port: crewboard serve --port "
                f"{settings.port + 1 if settings.port < 65535 else 8788} (or set CREWBOARD_PORT)."
            ) from None
        raise click.ClickException(
            f"Cannot listen on {host}:{settings.port}: {error.strerror or error}. Check "
            "CREWBOARD_HOST (an address of this machine, such as 127.0.0.1 or 0.0.0.0) and "
            "CREWBOARD_PORT."
        ) from None
    sock.set_inheritable(True)
    return sock


def serve(settings: Settings, db: Database, sock: socket.socket) -> None:
    """Serve the whole app over HTTP on `sock` (from listen()) until SIGTERM or SIGINT; then
    stop gracefully."""
    app = create_app(settings, database=db)
    json_logs = settings.log_format == "json"
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        # JSON: every logger writes JSON lines, and the app's access log (with the request id
        # and the door) replaces uvicorn's. CREWBOARD_ACCESS_LOG=off turns either off.
        log_config=json_log_config(settings.log_level) if json_logs else text_log_config(),
        access_log=settings.access_log == "on" and not json_logs,
        lifespan="on",
        server_header=False,
        timeout_graceful_shutdown=GRACE,
    )
    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then re-raises the signal to the
    # handler that was there before it: make that one end the process with status 0.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_after_graceful_shutdown)
    _Server(config, app.state.broker, db).run(sockets=[sock])


GRACE = 20  # seconds a stopping server waits for requests still running before cutting them


class _Server(uvicorn.Server):
    """Ends the live streams and the bridges' long polls as the first step of a graceful stop:
    uvicorn waits for every open response to finish, and a stream never would (a long poll
    only after its wait). Each stream gets `event: end` with the reason, and its client
    resumes on another node from its Last-Event-ID; a bridge's exchange answers with no calls,
    and `crewboard reverse` reconnects."""

    def __init__(self, config: uvicorn.Config, broker: Broker, db: Database) -> None:
        super().__init__(config)
        self.broker = broker
        self.db = db

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.broker.close_all("The server is stopping; reconnect to resume.")
        stop_long_polls(self.db)
        await super().shutdown(sockets)


def _exit_after_graceful_shutdown(_signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(0)
