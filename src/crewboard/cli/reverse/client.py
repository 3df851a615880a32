"""The bridge's loop on the developer's machine: connect out, take calls, answer them.

Plain HTTPS long polling to the server's REST API (docs/code-bridge.md): no port is opened
here, proxies and CA certificates come from the usual environment variables (trust_env), and
whatever breaks on the way (the network, a restarting server) is retried by itself with a
back-off; the person sees one line when the connection is lost and one when it is back.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx2

from crewboard.cli.reverse.folder import CodeFolder, error

ANSWER_BYTES = 256 * 1024  # the most the server takes for one answer's JSON
WAIT_SECONDS = 20
BACKOFF_FIRST = 1.0
BACKOFF_MOST = 15.0
MOST_ANSWERS = 50  # answers an exchange carries
BATCH_SECONDS = 10.0  # answering before the answers so far are sent

Say = Callable[[str], None]
# Waits out a back-off; True when the bridge was told to stop meanwhile.
Wait = Callable[[float], bool]


class Finished(Exception):
    """The loop ends: the exit status, and the line that says why (none for a clean stop)."""

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Server:
    """Where the bridge connects, as whom, for which project, offering what folder name."""

    url: str
    token: str
    project: str
    folder_name: str
    client: str


class BridgeClient:
    """One `crewboard reverse` run. `stop` ends it cleanly (Ctrl-C does the same)."""

    def __init__(
        self,
        server: Server,
        folder: CodeFolder,
        *,
        say: Say,
        warn: Say,
        quiet: bool = False,
        stop: threading.Event | None = None,
        backoff_first: float = BACKOFF_FIRST,
        wait: Wait | None = None,
    ) -> None:
        self.server = server
        self.folder = folder
        self.say = say
        self.warn = warn
        self.quiet = quiet
        self.stop = stop or threading.Event()
        self.backoff_first = backoff_first
        self.wait = wait or self.stop.wait
        self.bridge_id: str | None = None
        self.wait_seconds = WAIT_SECONDS
        self._lost = False
        self._delay = backoff_first

    def run(self) -> int:
        """Serve until stopped, replaced or refused; the exit status: 0 after a clean stop,
        1 when another bridge took over or the server refused something else, 2 for a
        token the server does not take."""
        with httpx2.Client(
            base_url=self.server.url.rstrip("/"),
            trust_env=True,  # HTTPS_PROXY, NO_PROXY, SSL_CERT_FILE as every HTTP client
            follow_redirects=False,
            headers={
                "authorization": f"Bearer {self.server.token}",
                "user-agent": self.server.client,
            },
            timeout=httpx2.Timeout(15.0, read=WAIT_SECONDS + 15.0),
        ) as http:
            try:
                self._serve(http)
            except Finished as finished:
                if finished.status != 0:
                    self.warn(finished.message)
                    return finished.status
            except KeyboardInterrupt:
                pass
            self._close(http)
            return 0

    def _serve(self, http: httpx2.Client) -> None:
        todo: list[dict[str, Any]] = []  # calls taken and not answered yet
        answers: list[dict[str, Any]] = []  # answered, not yet delivered
        while not self.stop.is_set():
            if self.bridge_id is None:
                self._register(http)
                todo, answers = [], []  # a new bridge: the old one's calls go back to the queue
                continue
            answers += self._answer_some(todo)
            sent = answers[:MOST_ANSWERS]
            busy = bool(todo) or len(answers) > len(sent)
            body = {"answers": sent, "waitSeconds": 0 if busy else self.wait_seconds}
            response = self._send(http, "POST", f"/api/v1/bridges/{self.bridge_id}/exchange", body)
            if response is None:
                continue  # answers kept: they go again with the next exchange
            if response.status_code in (404, 410):
                self.say("The server closed this bridge; connecting again.")
                self.bridge_id = None
            elif response.status_code == 409:
                raise Finished(
                    1,
                    "Another `crewboard reverse` for this project took over: this one stops.",
                )
            elif response.status_code == 200:
                answers = answers[len(sent) :]
                known = {call.get("callId") for call in todo}
                todo += [call for call in _calls(response) if call.get("callId") not in known]
            else:
                raise self._refusal(response, "exchanging calls")

    def _answer_some(self, todo: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Answers to the first calls of `todo` (taken off it), for at most BATCH_SECONDS: the
        server hands a call taken but unanswered for 30 s to the queue again, so answers go
        back in time even when many slow searches came at once."""
        started = time.monotonic()
        answers: list[dict[str, Any]] = []
        while todo and len(answers) < MOST_ANSWERS and time.monotonic() - started < BATCH_SECONDS:
            answers.append(self._answer(todo.pop(0)))
        return answers

    def _register(self, http: httpx2.Client) -> None:
        body = {"folder": self.server.folder_name, "client": self.server.client}
        project = quote(self.server.project, safe="")
        response = self._send(http, "POST", f"/api/v1/projects/{project}/bridges", body)
        if response is None:
            return
        if response.status_code != 201:
            raise self._refusal(
                response, f"registering the bridge for project {self.server.project}"
            )
        try:
            answer = response.json()
            self.bridge_id = str(answer["bridge"]["id"])
        except (ValueError, KeyError, TypeError) as failure:
            raise Finished(
                1, f"{self.server.url} answered registering with no bridge: is it Crewboard's URL?"
            ) from failure
        wait = answer.get("waitSeconds", WAIT_SECONDS)
        self.wait_seconds = wait if isinstance(wait, int) and 0 <= wait <= 25 else WAIT_SECONDS
        self.say(f"Connected (bridge {self.bridge_id}); waiting for a session's calls.")

    def _send(
        self, http: httpx2.Client, method: str, url: str, body: dict[str, Any]
    ) -> httpx2.Response | None:
        """The server's answer, or None after a failure worth retrying (the network, a 5xx,
        429), once the back-off has been waited out.

        Raises:
            Finished: the bridge was told to stop while waiting.
        """
        try:
            response = http.request(method, url, json=body)
        except httpx2.TransportError as failure:
            self._retry(
                f"{type(failure).__name__}: {failure}" if str(failure) else type(failure).__name__
            )
            return None
        if response.status_code >= 500 or response.status_code == 429:
            self._retry(f"HTTP {response.status_code}")
            return None
        if self._lost:
            self._lost = False
            self._delay = self.backoff_first
            self.say(f"Connected again to {self.server.url}.")
        return response

    def _retry(self, reason: str) -> None:
        if not self._lost:
            self._lost = True
            self._delay = self.backoff_first
            self.say(
                f"Lost the connection to {self.server.url} ({reason}); "
                "trying again by itself, every 15 s at most."
            )
        if self.wait(self._delay):
            raise Finished(0)
        self._delay = min(self._delay * 2, BACKOFF_MOST)

    def _answer(self, call: dict[str, Any]) -> dict[str, Any]:
        """One call's answer in the exchange's shape, logged as one line unless quiet."""
        served = serve_call(self.folder, str(call.get("tool")), call.get("arguments"))
        if not self.quiet:
            self.say(served.line)
        if served.error is not None:
            return {"callId": call.get("callId"), "error": served.error}
        return {"callId": call.get("callId"), "result": served.result}

    def _refusal(self, response: httpx2.Response, doing: str) -> Finished:
        said = _server_message(response)
        status = response.status_code
        if response.is_redirect:
            where = response.headers.get("location", "")
            return Finished(
                1,
                f"The server redirects to {where} instead of {doing}: pass the server's own "
                "base URL as --url.",
            )
        if status in (401, 403):
            why = (
                "does not take the token: check CREWBOARD_TOKEN or --token"
                if status == 401
                else "refuses the token here: it needs read and write access and the write "
                f"role on project {self.server.project}"
            )
            return Finished(2, f"The server {why} (HTTP {status}{said}).")
        return Finished(1, f"The server refused {doing} (HTTP {status}{said}).")

    def _close(self, http: httpx2.Client) -> None:
        """Tell the server the bridge is gone, so a session stops waiting on it at once."""
        if self.bridge_id is not None:
            # On failure it goes stale by itself: not live once unseen for 45 s.
            with contextlib.suppress(httpx2.HTTPError):
                http.delete(f"/api/v1/bridges/{self.bridge_id}", timeout=5.0)
        self.say("Stopped: the folder is no longer offered.")


def _calls(response: httpx2.Response) -> list[dict[str, Any]]:
    try:
        calls = response.json().get("calls", [])
    except (ValueError, AttributeError):
        return []
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _server_message(response: httpx2.Response) -> str:
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return ""
    return f": {message}" if isinstance(message, str) else ""


@dataclass(frozen=True)
class Served:
    """One call answered from the folder: its result or its error {"code", "message"}
    (exactly one of them), and the line it is logged as."""

    result: dict[str, Any] | None
    error: dict[str, Any] | None
    line: str


def serve_call(folder: CodeFolder, tool: str, arguments: object) -> Served:
    """A call's answer from `folder`, never over what the server takes for one answer: for
    `crewboard reverse` over HTTP and for `crewboard mcp --code` in-process alike."""
    if isinstance(arguments, dict):
        answer = folder.answer(tool, arguments)
    else:
        answer = error("bad_arguments", f"{tool}'s arguments must be a JSON object.")
    if len(json.dumps(answer, ensure_ascii=False).encode("utf-8")) > ANSWER_BYTES:
        answer = error("too_large", "The answer came out over 256 KiB: ask for less at once.")
    line = describe(tool, arguments if isinstance(arguments, dict) else {}, answer)
    if "error" in answer:
        return Served(None, answer["error"], line)
    return Served(answer, None, line)


def describe(tool: str, arguments: dict[str, Any], answer: dict[str, Any]) -> str:
    """The one line a served call is logged as: the tool, its path, what went back."""
    path = arguments.get("path", ".")
    if "error" in answer:
        return f"{tool} {path}: refused ({answer['error']['code']})"
    if tool == "read_file":
        return f"read_file {answer['path']} lines {answer['startLine']}-{answer['endLine']}"
    if tool == "list_folder":
        return f"list_folder {answer['path']} ({len(answer['entries'])} entries)"
    query = arguments.get("query", "")
    return f"search_text {query!r} in {path} ({len(answer['matches'])} matches)"
