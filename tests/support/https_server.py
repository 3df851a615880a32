"""A small HTTPS server for tests, with a CA of its own: client ID metadata documents to fetch.

`make_tls(folder)` writes a fresh CA and a certificate for 127.0.0.1 and localhost signed by
it (the `cryptography` package; nothing is downloaded); a client trusts the server by loading
`ca_file`. `DocumentServer` answers each path as told — a body, a status, headers, chunked
without a Content-Length, or after a delay — and counts the requests each path got. Stdlib
only besides the certificates; it runs in a background thread.

    tls = make_tls(tmp_path)
    with DocumentServer(tls) as server:
        server.answer("/client.json", json_body={...})
        ...  # server.url("/client.json"), server.hits("/client.json")
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
import ssl
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

HOST = "127.0.0.1"


@dataclass(frozen=True)
class TlsFiles:
    ca_file: Path  # the CA's certificate (PEM): what a client trusts
    cert_file: Path  # the server's certificate (PEM)
    key_file: Path  # the server's key (PEM)


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_tls(folder: Path) -> TlsFiles:
    """A new CA and a server certificate for 127.0.0.1, ::1 and localhost, valid for a day."""
    now = datetime.now(UTC) - timedelta(minutes=5)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("Crewboard test CA")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address(HOST)),
        x509.IPAddress(ipaddress.ip_address("::1")),
    ]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = TlsFiles(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    files.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


@dataclass
class Answer:
    """How the server answers one path."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunked: bool = False  # no Content-Length: the body in chunks
    delay: float = 0.0  # seconds to hold the answer back (cut short when the server stops)


class DocumentServer:
    """HTTPS on 127.0.0.1 (a free port) from `start()` (or `with`) until `stop()`."""

    def __init__(self, tls: TlsFiles) -> None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls.cert_file, tls.key_file)
        self.answers: dict[str, Answer] = {}
        self.counts: dict[str, int] = {}
        self.released = threading.Event()  # set on stop: a delayed answer stops waiting
        self._lock = threading.Lock()
        self._server = _TlsServer((HOST, 0), _handler_for(self), context)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str) -> str:
        return f"https://{HOST}:{self.port}{path}"

    def answer(self, path: str, *, json_body: Any = None, body: bytes = b"", **how: Any) -> str:
        """Answer `path` so (a JSON body by default); its full URL."""
        if json_body is not None:
            body = json.dumps(json_body).encode()
            how.setdefault("headers", {}).setdefault("Content-Type", "application/json")
        self.answers[path] = Answer(body=body, **how)
        return self.url(path)

    def hits(self, path: str) -> int:
        with self._lock:
            return self.counts.get(path, 0)

    def count(self, path: str) -> None:
        with self._lock:
            self.counts[path] = self.counts.get(path, 0) + 1

    def start(self) -> DocumentServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"documents-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> DocumentServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


class _TlsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        context: ssl.SSLContext,
    ) -> None:
        super().__init__(address, handler)
        self.context = context

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = self.socket.accept()
        sock.settimeout(10)
        # The handshake runs in the request's own thread (finish_request), not the loop's.
        return self.context.wrap_socket(
            sock, server_side=True, do_handshake_on_connect=False
        ), address

    def finish_request(self, request: Any, client_address: Any) -> None:
        try:
            request.do_handshake()
        except (OSError, ssl.SSLError):
            return  # a client that gave up or refused our certificate
        super().finish_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a client that hangs up early (a refused or timed-out fetch) is expected."""


def _handler_for(owner: DocumentServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_owner = owner

    return Handler


class _Handler(BaseHTTPRequestHandler):
    server_owner: DocumentServer
    protocol_version = "HTTP/1.1"  # chunked bodies

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        owner = self.server_owner
        path = self.path.split("?", 1)[0]
        owner.count(path)
        answer = owner.answers.get(path, Answer(b'{"error": "not here"}', status=404))
        if answer.delay and owner.released.wait(answer.delay):
            return  # the server is stopping
        with contextlib.suppress(OSError):  # the client gave up (over a size or time bound)
            self._send(answer)

    def _send(self, answer: Answer) -> None:
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if answer.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(answer.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if not answer.chunked:
            self.wfile.write(answer.body)
            return
        for start in range(0, len(answer.body), 1024):
            piece = answer.body[start : start + 1024]
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")
