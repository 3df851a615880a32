"""A TCP proxy on loopback that a test puts between a node and its database, to make the
database go away the ways it does in production:

- `reset()`: every connection through the proxy is closed with a RST (what a PostgreSQL
  restart or a fail-over looks like to a client) and, until `heal()`, new connections are
  refused the same way;
- `silence()`: connections stay open but no byte passes either way, and new connections are
  accepted and then get nothing (a network partition: nothing tells either side);
- `heal()`: back to forwarding. Connections silenced stay as they were (bytes held in the
  proxy's buffers go on), as after a partition heals.

It forwards to one upstream address. `url_for(url)` rewrites a database URL to go through it.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator
from types import TracebackType

from sqlalchemy.engine import URL, make_url

_CHUNK = 65536


def _hard_close(sock: socket.socket) -> None:
    """Close with a RST instead of a FIN, as a dead peer or a restarted server would.

    A pump thread may be blocked reading this socket: closing the descriptor alone would not
    wake it, and the kernel would keep the connection open (no RST, the peer waiting forever)
    for as long as that read lasts. Shutting down the reading side first wakes it, sending
    nothing; the close then aborts the connection with a RST."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RD)
    with contextlib.suppress(OSError):
        sock.close()


class TcpProxy:
    """Forwards 127.0.0.1:<port> to `upstream`; `reset`, `silence` and `heal` cut it."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._pairs: set[tuple[socket.socket, socket.socket]] = set()
        self._flowing = threading.Event()
        self._flowing.set()
        self._refusing = False
        self._closed = False
        self.accepted = 0
        self._thread = threading.Thread(target=self._accept, name="tcp-proxy", daemon=True)
        self._thread.start()

    # --- what a test does ------------------------------------------------------------------

    def url_for(self, url: str | URL) -> URL:
        """`url` with its host and port pointed at this proxy."""
        return make_url(url).set(host="127.0.0.1", port=self.port)

    def reset(self) -> None:
        """RST every open connection; refuse new ones until `heal()`."""
        with self._lock:
            self._refusing = True
            pairs, self._pairs = self._pairs, set()
        for client, server in pairs:
            _hard_close(client)
            _hard_close(server)

    def silence(self) -> None:
        """Stop every byte both ways, on open and new connections, until `heal()`."""
        self._flowing.clear()

    def heal(self) -> None:
        with self._lock:
            self._refusing = False
        self._flowing.set()

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._pairs)

    def close(self) -> None:
        self._closed = True
        self._flowing.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        self.reset()
        self._thread.join(timeout=5)

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.close()

    # --- the forwarding --------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                refusing = self._refusing
            if refusing:
                _hard_close(client)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                _hard_close(client)
                continue
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            pair = (client, server)
            with self._lock:
                self._pairs.add(pair)
                self.accepted += 1
            for source, sink in ((client, server), (server, client)):
                threading.Thread(
                    target=self._pump, args=(pair, source, sink), name="tcp-proxy-pump", daemon=True
                ).start()

    def _pump(
        self, pair: tuple[socket.socket, socket.socket], source: socket.socket, sink: socket.socket
    ) -> None:
        try:
            while True:
                data = source.recv(_CHUNK)
                if not data:
                    break
                # Bytes read while silenced are held here until the partition heals.
                while not self._flowing.wait(0.2):
                    if pair not in self._pairs:
                        return
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                present = pair in self._pairs
                self._pairs.discard(pair)
            if present:
                for sock in pair:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
                    with contextlib.suppress(OSError):
                        sock.close()


@contextlib.contextmanager
def proxied(url: str | URL) -> Iterator[tuple[TcpProxy, URL]]:
    """A proxy in front of the database server of `url`, and `url` rewritten to use it."""
    parsed = make_url(url)
    proxy = TcpProxy((parsed.host or "127.0.0.1", parsed.port or 5432))
    try:
        yield proxy, proxy.url_for(parsed)
    finally:
        proxy.close()
