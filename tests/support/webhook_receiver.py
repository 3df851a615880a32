"""A webhook receiver on loopback for the tests: a real HTTP server in a thread that records
every request it gets and answers as told (`mode`): 200, 500, a redirect, or a stall (holds
the answer until released or a bound passes). `stop` closes its port; `start` opens the same
port again."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from crewboard.domain.webhooks import SIGNATURE_HEADER, verify_signature

STALL_BOUND = 30.0  # seconds a stalled answer waits at most for `release`


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        return dict(json.loads(self.body))

    @property
    def event_id(self) -> int | None:
        value = self.headers.get("crewboard-event-id")
        return None if value is None else int(value)

    def verified(self, secret: str, now: float) -> bool:
        return verify_signature(secret, self.headers[SIGNATURE_HEADER.lower()], self.body, now)


class Receiver:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.held: list[Received] = []  # stalled requests, recorded when they arrive
        self.mode = "ok"
        self.released = threading.Event()
        self.got = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                mode = receiver.mode
                if mode == "stall":
                    with receiver.got:
                        receiver.held.append(Received(headers, body))
                        receiver.got.notify_all()
                    receiver.released.wait(STALL_BOUND)
                if mode == "ok":
                    with receiver.got:
                        receiver.requests.append(Received(headers, body))
                        receiver.got.notify_all()
                self._answer(mode)

            def _answer(self, mode: str) -> None:
                status = {"ok": 200, "fail": 500, "redirect": 302, "stall": 200}[mode]
                self.send_response(status)
                if mode == "redirect":
                    self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close the port (a receiver that is down)."""
        self.released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def wait_for(self, count: int, timeout: float = 10.0) -> bool:
        """Whether `count` requests were recorded within `timeout` seconds."""
        with self.got:
            return self.got.wait_for(lambda: len(self.requests) >= count, timeout)

    def wait_held(self, count: int, timeout: float = 10.0) -> bool:
        """Whether `count` stalled requests arrived within `timeout` seconds."""
        with self.got:
            return self.got.wait_for(lambda: len(self.held) >= count, timeout)

    def event_ids(self, webhook_id: str | None = None) -> list[int | None]:
        with self.got:
            return [
                r.event_id
                for r in self.requests
                if webhook_id is None or r.headers.get("crewboard-webhook") == webhook_id
            ]
