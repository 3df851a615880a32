"""A header-adding reverse proxy for tests: it puts `Authorization: Bearer …` on every request.

Clients that cannot send headers (the MCP conformance suite) talk to the proxy; the proxy sends
each request on to the real server with the token added and everything else as it came —
method, path, query, body and headers, Host and Origin included, so the server's own
Host/Origin checks still see what the client sent — and hands the status, headers and body
back as the server sent them. Only hop-by-hop headers (Connection, Transfer-Encoding, …)
belong to each connection and are not copied. Stdlib only; it runs in a background thread.

    with AuthProxy("http://127.0.0.1:8787", token) as proxy:
        ...  # proxy.url, proxy.exchanges
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

# RFC 9110 §7.6.1: these describe one connection, not the message; a proxy never forwards them.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
BODY_SAMPLE = 4096  # bytes of each body kept in the exchange log
REDACTED = "Bearer <redacted>"


@dataclass
class Exchange:
    """One request as the proxy forwarded it and the answer it passed back (for test reports)."""

    method: str
    path: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    status: int = 0
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    response_body: bytes = b""
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "request": {
                "method": self.method,
                "path": self.path,
                "headers": self.request_headers,
                "body": self.request_body[:BODY_SAMPLE].decode("utf-8", "replace"),
            },
            "response": {
                "status": self.status,
                "headers": self.response_headers,
                "body": self.response_body[:BODY_SAMPLE].decode("utf-8", "replace"),
            },
            **({"error": self.error} if self.error else {}),
        }


class AuthProxy:
    """Forward everything to `upstream` (http://host:port), adding `Authorization: Bearer token`.

    A client's own Authorization header is replaced. Listens on `host`:`port` (0: a free port),
    from `start()` (or `with`) until `stop()`.
    """

    def __init__(
        self,
        upstream: str,
        token: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout: float = 60.0,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname or parts.path not in ("", "/"):
            raise ValueError(f"upstream must be http://host:port, not {upstream!r}")
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port or 80
        self.authorization = f"Bearer {token}"
        self.timeout = timeout
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), _handler_for(self), bind_and_activate=True)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = str(self._server.server_address[0])
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    def start(self) -> AuthProxy:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"auth-proxy-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> AuthProxy:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)

    def take_exchanges(self) -> list[Exchange]:
        """The exchanges since the last call, oldest first."""
        with self._lock:
            taken, self.exchanges = self.exchanges, []
        return taken


def _handler_for(proxy: AuthProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(_ProxyHandler):
        owner = proxy

    return Handler


class _ProxyHandler(BaseHTTPRequestHandler):
    owner: AuthProxy
    protocol_version = "HTTP/1.1"  # keep-alive and chunked bodies, like a real proxy

    # Every method goes through the same path.
    def do_GET(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def do_PUT(self) -> None:
        self._forward()

    def do_PATCH(self) -> None:
        self._forward()

    def do_DELETE(self) -> None:
        self._forward()

    def do_HEAD(self) -> None:
        self._forward()

    def do_OPTIONS(self) -> None:
        self._forward()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the exchanges are kept on the proxy instead of printed."""

    def _forward(self) -> None:
        body = self._read_body()
        if body is None:
            return
        headers = [
            (name, value)
            for name, value in self.headers.items()
            if name.lower() not in HOP_BY_HOP
            # Replaced below; Expect: the body is already here, so the upstream must not wait.
            and name.lower() not in ("authorization", "content-length", "expect")
        ]
        if body or "content-length" in self.headers or self.command in ("POST", "PUT", "PATCH"):
            headers.append(("Content-Length", str(len(body))))
        headers.append(("Authorization", self.owner.authorization))
        exchange = Exchange(
            method=self.command,
            path=self.path,
            request_headers=[(n, REDACTED if n == "Authorization" else v) for n, v in headers],
            request_body=body,
        )
        self.owner.record(exchange)
        connection = http.client.HTTPConnection(
            self.owner.upstream_host, self.owner.upstream_port, timeout=self.owner.timeout
        )
        try:
            try:
                # No Host or Accept-Encoding of http.client's own: the upstream sees the client's.
                connection.putrequest(
                    self.command, self.path, skip_host=True, skip_accept_encoding=True
                )
                for name, value in headers:
                    connection.putheader(name, value)
                connection.endheaders(body)
                response = connection.getresponse()
            except OSError as error:
                exchange.error = f"upstream unreachable: {error}"
                self._answer_bad_gateway(exchange.error)
                return
            self._relay(response, exchange)
        finally:
            connection.close()

    def _read_body(self) -> bytes | None:
        """The request body (chunked or sized); None after answering a malformed one."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size_line = self.rfile.readline(65537)
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    self.send_error(400, "Malformed chunked request body")
                    return None
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline(3)
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        try:
            return self.rfile.read(int(length))
        except ValueError:
            self.send_error(400, "Malformed Content-Length")
            return None

    def _relay(self, response: http.client.HTTPResponse, exchange: Exchange) -> None:
        """Status, headers and body as the upstream sent them; streamed, so SSE flows through."""
        exchange.status = response.status
        passed = [(n, v) for n, v in response.getheaders() if n.lower() not in HOP_BY_HOP]
        exchange.response_headers = passed
        # send_response_only: no Server/Date of our own (the upstream's pass through).
        self.send_response_only(response.status, response.reason)
        for name, value in passed:
            self.send_header(name, value)
        bodyless = self.command == "HEAD" or response.status in (204, 304) or response.status < 200
        sized = response.getheader("Content-Length") is not None
        chunked = not bodyless and not sized
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        if response.getheader("Connection", "").lower() == "close":
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if bodyless:
            return
        sample = bytearray()
        for piece in _pieces(response):
            if len(sample) < BODY_SAMPLE:
                sample += piece[: BODY_SAMPLE - len(sample)]
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece)
            self.wfile.flush()
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        exchange.response_body = bytes(sample)

    def _answer_bad_gateway(self, message: str) -> None:
        body = message.encode()
        self.send_response_only(502, "Bad Gateway")
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _pieces(response: http.client.HTTPResponse) -> Iterator[bytes]:
    while piece := response.read1(65536):
        yield piece
