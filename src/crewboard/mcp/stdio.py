"""`crewboard mcp`: the same catalogue over stdio, the token checked again for every message.

The session (handshake, eras, cancellation) is the SDK's `stdio_server` and `Server.run`. Only
the byte I/O is ours where the wire allows it: the SDK reads stdin and writes stdout through
blocking file objects in worker threads (`anyio.wrap_file`), three thread hops a call (a
line, a write, a flush). When stdin and stdout are pipes, sockets or terminals, they are read
and written on the event loop instead: measured 0.5 ms less a call and 10 % less server CPU
(get_task and list_tasks, two servers interleaved on one machine). A regular file on either
side (`crewboard mcp < requests.jsonl`) gets the SDK's own I/O.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from crewboard.config import Settings
from crewboard.domain.identity.access import Toolset
from crewboard.jsonbody import MAX_UPLOAD_BODY
from crewboard.mcp.caller import STDIO_SECRET, STDIO_TOOLSETS
from crewboard.mcp.server import build_server
from crewboard.services.sessions.code import CodeBridges
from crewboard.services.sessions.runner import SessionRunner
from crewboard.services.supervisor import Loop, Supervisor
from crewboard.storage.database import Database

log = logging.getLogger(__name__)

# A message is one line; a longer line than an HTTP body may be is skipped with a warning
# (the SDK's own reader would hold it all in memory).
MAX_LINE = MAX_UPLOAD_BODY
_CHUNK = 64 * 1024
# How long the last answers may take to drain into a slow reader once stdin has closed.
_DRAIN_SECONDS = 5.0


async def serve_stdio(
    db: Database,
    settings: Settings,
    secret: str,
    toolsets: tuple[Toolset, ...] | None = None,
    loops: Mapping[str, Loop] | None = None,
) -> None:
    """Serve until stdin closes. stdout carries protocol only: while serving, fd 1 points at
    stderr and fd 0 at the null device, so stray output and reads miss the wire.

    `toolsets` None shows the token's own toolsets, else the default ones. `loops` are more
    background loops to keep running while serving, supervised beside the session runner
    (the CLI's in-process code bridge, `crewboard mcp --code`); they end when serving ends."""
    server = build_server(db, settings)
    STDIO_SECRET.set(secret)
    STDIO_TOOLSETS.set(toolsets)
    # Spec session turns this process queues (and any others due) run here while it serves,
    # so a session started over stdio gets its replies with no server running.
    code = CodeBridges(db, settings)  # the person's bridge may serve elsewhere, or in `loops`
    runner = SessionRunner(db, settings, code=code) if settings.session_runners > 0 else None
    supervised: dict[str, Loop] = {"sessions": runner.run} if runner is not None else {}
    supervised.update(loops or {})
    async with (
        _wire() as wire,
        stdio_server(*wire) as (read_stream, write_stream),
        anyio.create_task_group() as tasks,
    ):
        if supervised:  # a loop's failure cannot end the session
            tasks.start_soon(Supervisor().run, supervised)
        await server.run(read_stream, write_stream, server.create_initialization_options())
        tasks.cancel_scope.cancel()


class _Lines:
    """stdin as the SDK's reader wants it: an async iterator of text lines."""

    def __init__(self, reader: asyncio.StreamReader, limit: int) -> None:
        self.reader, self.limit = reader, limit
        self.buffer = bytearray()
        self.scanned = 0  # bytes of the buffer already searched for a newline
        self.skipping = False  # inside a line over the limit, dropped up to its newline

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self.buffer.find(b"\n", self.scanned)
            if end >= 0:
                line = bytes(self.buffer[: end + 1])
                del self.buffer[: end + 1]
                self.scanned = 0
                if self.skipping or self._over_limit(len(line)):
                    self.skipping = False
                    continue
                return line.decode("utf-8", errors="replace")
            self.scanned = len(self.buffer)
            if self._over_limit(self.scanned):  # drop what came of it, then up to its newline
                self.skipping = True
                self.buffer.clear()
                self.scanned = 0
            chunk = await self.reader.read(_CHUNK)
            if not chunk:
                if self.buffer and not self.skipping:  # a last line without its newline
                    line = bytes(self.buffer)
                    self.buffer.clear()
                    return line.decode("utf-8", errors="replace")
                raise StopAsyncIteration
            self.buffer += chunk

    def _over_limit(self, size: int) -> bool:
        """Whether a line of `size` bytes (so far) is too long; warns once a line."""
        if size <= self.limit:
            return False
        if not self.skipping:
            log.warning(
                "stdio: skipped a message longer than %d bytes (one JSON-RPC message a line); "
                "its request gets no answer",
                self.limit,
            )
        return True


class _Out:
    """stdout as the SDK's writer wants it: `write` and `flush` coroutines."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()  # waits only while the reader is behind


def _is_stream(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@asynccontextmanager
async def _wire() -> AsyncIterator[tuple[Any, Any]]:
    """(stdin, stdout) for `stdio_server`: loop-driven ones, or (None, None) for the SDK's."""
    if sys.platform == "win32" or not (_is_stream(0) and _is_stream(1)):
        yield None, None
        return
    import fcntl  # noqa: PLC0415 - POSIX only

    # Private duplicates above the standard range carry the wire; fds 0 and 1 are diverted
    # while serving and pointed back at the wire afterwards.
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    blocking = os.get_blocking(wire_in), os.get_blocking(wire_out)
    try:
        try:
            connected = await _connect(wire_in, wire_out)
        except (OSError, ValueError, RuntimeError) as error:  # a descriptor the loop refuses
            log.debug("stdio: serving through the SDK's file I/O (%s)", error)
            connected = None
        if connected is None:
            yield None, None
            return
        read_transport, writer, lines = connected
        try:
            sys.stdout.flush()
            null = os.open(os.devnull, os.O_RDONLY)
            try:
                os.dup2(null, 0)
            finally:
                os.close(null)
            os.dup2(2, 1)
            yield lines, _Out(writer)
        finally:
            writer.close()
            with suppress(Exception), anyio.move_on_after(_DRAIN_SECONDS, shield=True):
                await writer.wait_closed()
            read_transport.close()
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)
    finally:
        with suppress(OSError):
            os.set_blocking(wire_in, blocking[0])
            os.set_blocking(wire_out, blocking[1])
        os.close(wire_in)
        os.close(wire_out)


async def _connect(
    wire_in: int, wire_out: int
) -> tuple[asyncio.BaseTransport, asyncio.StreamWriter, _Lines]:
    """The wire on the running event loop (each transport owns a duplicate it closes)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(wire_in), "rb", 0)
    )
    try:
        write_transport, write_protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
            os.fdopen(os.dup(wire_out), "wb", 0),
        )
    except BaseException:
        read_transport.close()
        raise
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    return read_transport, writer, _Lines(reader, MAX_LINE)
