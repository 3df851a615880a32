"""The webhooks workload's receiver: a threaded HTTP server on loopback that answers 204 at
once and notes when each delivery arrived, keyed by (webhook, event id).

Arrivals are kept on two clocks: `time.perf_counter()` (the bench process's own, to compare
with when the writer's REST call returned) and `time.time()` (the machine's wall clock, to
compare with the event's `at`, which the server's transaction took at the start of the write).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Arrival:
    """One delivery as it came: the event's type, task and `at`, and both arrival clocks."""

    event_type: str
    task_id: str | None
    at: str
    perf: float
    wall: float


class HookReceiver:
    """Start with `start()`, stop with `stop()`; `arrivals` maps (webhook, event id) to the
    first arrival of that event (a redelivery would not move it), `created` maps (webhook,
    task id) to the arrival of that task's `task.created`."""

    def __init__(self) -> None:
        self.arrivals: dict[tuple[str, int], Arrival] = {}
        self.created: dict[tuple[str, str], Arrival] = {}
        self.duplicates = 0
        self.changed = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def count(self) -> int:
        with self.changed:
            return len(self.arrivals)

    def wait_created(self, keys: set[tuple[str, str]], timeout: float) -> bool:
        """Whether every (webhook, task id)'s `task.created` arrived within `timeout` s."""
        with self.changed:
            return self.changed.wait_for(lambda: keys <= self.created.keys(), timeout)

    def created_count(self, keys: set[tuple[str, str]]) -> int:
        with self.changed:
            return len(keys & self.created.keys())

    def _note(self, body: bytes) -> None:
        perf, wall = time.perf_counter(), time.time()  # first: the parse is not the server's
        data: dict[str, Any] = json.loads(body)
        event = data["event"]
        if event.get("id") is None:
            return  # a ping: no event of the log
        key = (str(data["webhookId"]), int(event["id"]))
        arrival = Arrival(str(event["type"]), event.get("taskId"), str(event["at"]), perf, wall)
        with self.changed:
            if key in self.arrivals:
                self.duplicates += 1
            else:
                self.arrivals[key] = arrival
                if arrival.event_type == "task.created" and arrival.task_id is not None:
                    self.created[(key[0], arrival.task_id)] = arrival
            self.changed.notify_all()

    def start(self) -> HookReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver._note(body)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass  # one line a delivery would drown the bench's own progress

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
