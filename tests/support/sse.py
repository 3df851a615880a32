"""Reading a Server-Sent Events stream in a thread, as an outside client would."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx2


class Reader:
    """Reads one stream in a thread: the events (id, payload n) and control messages."""

    def __init__(
        self,
        url: str,
        secret: str | None,
        *,
        want: int = 10**9,
        last_id: str | None = None,
        cookies: dict[str, str] | None = None,
    ) -> None:
        """`secret` None: no Authorization header (a browser's stream, with its `cookies`)."""
        self.url, self.secret, self.want, self.last_id = url, secret, want, last_id
        self.cookies = cookies or {}
        self.until: int | None = None  # stop once an event with this id or later has come
        self.nodes: set[str] = set()
        self.dropped: str | None = None
        self.events: list[tuple[int, Any]] = []
        self.arrived: list[float] = []  # perf_counter() when each event came, for latencies
        self.controls: list[tuple[str, dict[str, Any]]] = []
        self.status = 0
        self.error: dict[str, Any] | None = None  # a refusal's JSON error
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        try:
            self._read()
        except httpx2.TransportError as error:  # the server went away mid-stream
            self.dropped = str(error)
        finally:
            self.ready.set()

    def _read(self) -> None:
        headers = {} if self.secret is None else {"Authorization": f"Bearer {self.secret}"}
        if self.last_id is not None:
            headers["Last-Event-ID"] = self.last_id
        with (
            httpx2.Client(timeout=httpx2.Timeout(30.0), cookies=self.cookies) as client,
            client.stream("GET", self.url, headers=headers) as answer,
        ):
            self.status = answer.status_code
            self.nodes.add(answer.headers.get("x-crewboard-node", ""))
            if answer.status_code != 200:
                self._refused(answer)
                return
            kind, data = "message", ""
            for line in answer.iter_lines():
                if line.startswith("retry:"):
                    self.ready.set()
                elif line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    data = line[5:].strip()
                elif line == "" and data:
                    body = json.loads(data)
                    if kind == "message":
                        self.arrived.append(time.perf_counter())
                        payload = body.get("payload") or {}  # the web app's stream sends none
                        self.events.append((body["id"], payload.get("n")))
                    else:
                        self.controls.append((kind, body))
                        if kind == "end":
                            return
                    kind, data = "message", ""
                    if len(self.events) >= self.want:
                        return
                    if self.until is not None and self.events and self.events[-1][0] >= self.until:
                        return

    def _refused(self, answer: httpx2.Response) -> None:
        answer.read()
        if answer.headers.get("content-type", "").startswith("application/json"):
            self.error = answer.json()["error"]
        self.ready.set()

    def join(self, timeout: float = 60.0) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"still reading after {timeout} s: {len(self.events)}"
