"""`crewboard reverse`'s loop against a small HTTP server that speaks the bridge's wire.

The server here is a test double of the real one (docs/code-bridge.md, the wire of
crewboard.api.bridges): it registers, hands out queued calls, collects answers, and answers
with the statuses a test scripts (503, 404, 409, 410, 401, 403). The end-to-end test against
the real server lives with the server side.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crewboard.cli.main import cli
from crewboard.cli.reverse.client import BridgeClient, Server
from crewboard.cli.reverse.folder import CodeFolder

TOKEN = "cbt_test_token"


class FakeBridgeServer:
    """The server side of the wire, in memory; `exchange_script` and `register_script` are
    statuses for the next requests (0: answer normally)."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.queue: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str, Any, dict[str, str]]] = []
        self.exchange_script: list[int] = []
        self.register_script: list[int] = []
        self.registered = 0
        self.deleted: list[str] = []
        self.longest_wait = 0.2  # the client asks for 20 s; the double waits less
        self.url = ""

    def add_call(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        with self.changed:
            self.queue.append({"callId": call_id, "tool": tool, "arguments": arguments})
            self.changed.notify_all()

    def wait_for(self, condition: Callable[[], bool], timeout: float = 10) -> None:
        with self.changed:
            assert self.changed.wait_for(condition, timeout), "the client did not get there"

    def handle(self, method: str, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        with self.changed:
            self.requests.append((method, path, body, headers))
            self.changed.notify_all()
        if headers.get("authorization") != f"Bearer {TOKEN}":
            return 401, {"error": {"code": "UNAUTHENTICATED", "message": "No such token."}}
        if method == "POST" and path == "/api/v1/projects/DEMO/bridges":
            return self._register()
        if method == "POST" and path.endswith("/exchange"):
            return self._exchange(body)
        if method == "DELETE":
            with self.changed:
                self.deleted.append(path.rsplit("/", 1)[-1])
                self.changed.notify_all()
            return 204, None
        return 404, {"error": {"code": "NOT_FOUND", "message": "No such project."}}

    def _register(self) -> tuple[int, Any]:
        scripted = self.register_script.pop(0) if self.register_script else 0
        if scripted:
            return scripted, {"error": {"code": "REFUSED", "message": f"Scripted {scripted}."}}
        with self.changed:
            self.registered += 1
            bridge = {"id": f"brg_{self.registered}", "projectKey": "DEMO", "folder": "repo"}
            self.changed.notify_all()
        return 201, {"bridge": bridge, "waitSeconds": 20}

    def _exchange(self, body: dict[str, Any]) -> tuple[int, Any]:
        scripted = self.exchange_script.pop(0) if self.exchange_script else 0
        if scripted == 409:
            return 409, {
                "error": {
                    "code": "conflict",
                    "message": "Replaced.",
                    "details": {"reason": "replaced"},
                }
            }
        if scripted:
            return scripted, {"error": {"code": "SCRIPTED", "message": f"Scripted {scripted}."}}
        with self.changed:
            self.answers.extend(body["answers"])
            self.changed.notify_all()
            wait = min(body["waitSeconds"], self.longest_wait)
            self.changed.wait_for(lambda: bool(self.queue), wait)
            calls, self.queue[:] = list(self.queue), []
        return 200, {"calls": calls}


def _handler(fake: FakeBridgeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, answer = fake.handle(self.command, self.path, body, headers)
            data = b"" if answer is None else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            if 300 <= status < 400:
                self.send_header("location", "https://crew.example.com" + self.path)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_DELETE = _serve  # noqa: N815 - http.server's names

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-poll (a stopped bridge) is no error of the test's."""


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client honours proxy variables (trust_env); these tests talk to loopback directly."""
    for name in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ]:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake() -> Iterator[FakeBridgeServer]:
    server = FakeBridgeServer()
    http = _QuietServer(("127.0.0.1", 0), _handler(server))
    http.daemon_threads = True
    thread = threading.Thread(target=http.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    server.url = f"http://127.0.0.1:{http.server_address[1]}"
    yield server
    http.shutdown()
    http.server_close()
    thread.join(timeout=5)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hello')\nprint('bye')\n")
    (root / ".env").write_text("SECRET=1\n")
    return root


class Running:
    """A client run in a thread; its printed lines and, once it ends, its exit status."""

    def __init__(self, client: BridgeClient, lines: list[str]) -> None:
        self.client = client
        self.lines = lines
        self.status: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.status = self.client.run()

    def stop(self) -> int | None:
        self.client.stop.set()
        return self.finish()

    def finish(self) -> int | None:
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "the client did not stop"
        return self.status


def run_client(url: str, repo: Path, *, token: str = TOKEN, **options: Any) -> Running:
    lines: list[str] = []
    server = Server(url=url, token=token, project="DEMO", folder_name="repo", client="crewboard t")
    client = BridgeClient(
        server, CodeFolder(repo), say=lines.append, warn=lines.append, backoff_first=0.01, **options
    )
    return Running(client, lines)


def answered(fake: FakeBridgeServer, call_id: str) -> Callable[[], bool]:
    return lambda: any(a["callId"] == call_id for a in fake.answers)


def test_the_bridge_registers_answers_calls_and_closes_when_stopped(
    fake: FakeBridgeServer, repo: Path
) -> None:
    running = run_client(fake.url, repo)
    fake.wait_for(lambda: fake.registered == 1)
    fake.add_call("bcl_1", "read_file", {"path": "src/app.py"})
    fake.add_call("bcl_2", "read_file", {"path": ".env"})
    fake.wait_for(answered(fake, "bcl_2"))
    assert running.stop() == 0
    fake.wait_for(lambda: fake.deleted == ["brg_1"])

    by_id = {a["callId"]: a for a in fake.answers}
    assert by_id["bcl_1"]["result"]["text"] == "print('hello')\nprint('bye')"
    assert by_id["bcl_2"]["error"]["code"] == "secret"
    method, path, body, headers = fake.requests[0]
    assert (method, path) == ("POST", "/api/v1/projects/DEMO/bridges")
    assert body == {"folder": "repo", "client": "crewboard t"}
    assert headers["authorization"] == f"Bearer {TOKEN}"
    exchanges = [r for r in fake.requests if r[1] == "/api/v1/bridges/brg_1/exchange"]
    assert all(r[2]["waitSeconds"] == 20 for r in exchanges)
    assert "read_file src/app.py lines 1-2" in running.lines
    assert "read_file .env: refused (secret)" in running.lines


def test_many_calls_at_once_go_back_at_most_50_answers_an_exchange(
    fake: FakeBridgeServer, repo: Path
) -> None:
    for n in range(60):
        fake.add_call(f"bcl_{n}", "read_file", {"path": "src/app.py", "startLine": 2})
    fake.add_call("bcl_bad", "list_folder", ["not", "an", "object"])  # type: ignore[arg-type]
    running = run_client(fake.url, repo, quiet=True)
    fake.wait_for(answered(fake, "bcl_bad"))
    running.stop()
    assert sorted(a["callId"] for a in fake.answers if "result" in a) == sorted(
        f"bcl_{n}" for n in range(60)
    )
    assert fake.answers[-1]["error"]["code"] == "bad_arguments"
    exchanges = [r[2] for r in fake.requests if r[1].endswith("/exchange")]
    assert max(len(body["answers"]) for body in exchanges) == 50
    # The rest goes at once, without waiting for new calls.
    assert [b["waitSeconds"] for b in exchanges if len(b["answers"]) == 50] == [0]


def test_quiet_prints_no_line_per_call(fake: FakeBridgeServer, repo: Path) -> None:
    running = run_client(fake.url, repo, quiet=True)
    fake.add_call("bcl_1", "list_folder", {})
    fake.wait_for(answered(fake, "bcl_1"))
    running.stop()
    assert not [line for line in running.lines if line.startswith("list_folder")]


def test_a_server_error_is_retried_with_one_line_each_way_and_no_answer_is_lost(
    fake: FakeBridgeServer, repo: Path
) -> None:
    fake.add_call("bcl_1", "list_folder", {"path": "src"})
    fake.exchange_script = [0, 503, 502, 503]  # the call goes out, then three failures
    running = run_client(fake.url, repo)
    fake.wait_for(answered(fake, "bcl_1"))
    running.stop()
    assert len(fake.answers) == 1  # sent with the failed exchanges, arrived once
    assert fake.answers[0]["result"]["entries"] == [
        {"path": "src/app.py", "kind": "file", "size": 28}
    ]
    lost = [line for line in running.lines if line.startswith("Lost the connection")]
    back = [line for line in running.lines if line.startswith("Connected again")]
    assert len(lost) == 1
    assert "HTTP 503" in lost[0]
    assert len(back) == 1


def test_a_redirecting_server_names_where_it_redirects(repo: Path, fake: FakeBridgeServer) -> None:
    fake.register_script = [308]
    running = run_client(fake.url, repo)
    assert running.finish() == 1
    assert "https://crew.example.com/api/v1/projects/DEMO/bridges" in running.lines[-1]
    assert "--url" in running.lines[-1]


def test_an_unreachable_server_is_retried_backing_off_from_1_to_15_seconds(repo: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    delays: list[float] = []

    def wait(delay: float) -> bool:
        delays.append(delay)
        return len(delays) >= 7  # then the person presses Ctrl-C

    lines: list[str] = []
    server = Server(f"http://127.0.0.1:{port}", TOKEN, "DEMO", "repo", "crewboard t")
    client = BridgeClient(server, CodeFolder(repo), say=lines.append, warn=lines.append, wait=wait)
    assert client.run() == 0
    assert delays == [1, 2, 4, 8, 15, 15, 15]
    assert len([line for line in lines if line.startswith("Lost the connection")]) == 1


@pytest.mark.parametrize("status", [404, 410])
def test_a_closed_or_unknown_bridge_registers_again(
    fake: FakeBridgeServer, repo: Path, status: int
) -> None:
    fake.exchange_script = [status]
    running = run_client(fake.url, repo)
    fake.wait_for(lambda: fake.registered == 2)
    fake.add_call("bcl_1", "search_text", {"query": "HELLO"})
    fake.wait_for(answered(fake, "bcl_1"))
    assert running.stop() == 0
    assert fake.answers[0]["result"]["matches"][0]["path"] == "src/app.py"
    assert fake.deleted == ["brg_2"]


def test_a_replaced_bridge_stops_saying_another_took_over(
    fake: FakeBridgeServer, repo: Path
) -> None:
    fake.exchange_script = [409]
    running = run_client(fake.url, repo)
    assert running.finish() == 1
    assert any("took over" in line for line in running.lines)
    assert fake.registered == 1


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_token_stops_with_status_2_naming_the_token(
    fake: FakeBridgeServer, repo: Path, status: int
) -> None:
    fake.register_script = [status]
    running = run_client(fake.url, repo)
    assert running.finish() == 2
    assert "token" in running.lines[-1]
    assert f"HTTP {status}" in running.lines[-1]


def test_a_wrong_token_is_refused_by_the_server(fake: FakeBridgeServer, repo: Path) -> None:
    running = run_client(fake.url, repo, token="cbt_wrong")
    assert running.finish() == 2
    assert "No such token." in running.lines[-1]


def test_an_unknown_project_stops_with_the_servers_message(
    fake: FakeBridgeServer, repo: Path
) -> None:
    server = Server(fake.url, TOKEN, "NOPE", "repo", "crewboard t")
    lines: list[str] = []
    client = BridgeClient(server, CodeFolder(repo), say=lines.append, warn=lines.append)
    assert client.run() == 1
    assert "No such project." in lines[-1]
    assert "NOPE" in lines[-1]


# -- the command ----------------------------------------------------------------------------


def test_the_command_says_what_it_offers_and_exits_1_when_replaced(
    fake: FakeBridgeServer, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fake.exchange_script = [409]
    result = CliRunner().invoke(
        cli,
        ["reverse", str(repo), "--project", "DEMO"],
        env={"CREWBOARD_URL": fake.url, "CREWBOARD_TOKEN": TOKEN},
    )
    assert result.exit_code == 1, result.output
    first = result.output.splitlines()[0]
    assert str(repo.resolve()) in first
    assert "DEMO" in first
    assert fake.url in first
    assert "read-only" in first
    assert "never read" in first
    assert "took over" in result.output


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: p / "missing", "does not exist"),
        (lambda p: p / "repo" / "src" / "app.py", "is a file"),
    ],
)
def test_the_command_refuses_a_folder_that_is_not_one_naming_it(
    repo: Path, tmp_path: Path, make: Callable[[Path], Path], said: str
) -> None:
    folder = make(tmp_path)
    result = CliRunner().invoke(
        cli, ["reverse", str(folder), "--project", "DEMO", "--token", TOKEN]
    )
    assert result.exit_code == 1
    assert said in result.output
    assert str(folder) in result.output


def test_the_command_refuses_crewboards_own_data_folder(tmp_path: Path) -> None:
    (tmp_path / "crewboard.db").write_text("")
    result = CliRunner().invoke(
        cli, ["reverse", str(tmp_path), "--project", "DEMO", "--token", TOKEN]
    )
    assert result.exit_code == 1
    assert "Crewboard's data" in result.output


def test_the_command_refuses_a_folder_inside_the_configured_data_folder(tmp_path: Path) -> None:
    (tmp_path / "data" / "blobs").mkdir(parents=True)
    result = CliRunner().invoke(
        cli,
        ["reverse", str(tmp_path / "data" / "blobs"), "--project", "DEMO", "--token", TOKEN],
        env={"CREWBOARD_DATA_DIR": str(tmp_path / "data")},
    )
    assert result.exit_code == 1
    assert "Crewboard's data" in result.output


def test_the_command_needs_a_token(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CREWBOARD_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["reverse", str(repo), "--project", "DEMO"])
    assert result.exit_code == 1
    assert "CREWBOARD_TOKEN" in result.output


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_ctrl_c_closes_the_bridge_and_exits_0(
    fake: FakeBridgeServer, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sent: int
) -> None:
    """The signal comes to this process's main thread, where the command runs, once the
    bridge is waiting for calls (a subprocess would pay seconds of CLI start-up)."""
    monkeypatch.chdir(tmp_path)
    before = signal.getsignal(signal.SIGTERM)

    def send_when_waiting() -> None:
        fake.wait_for(lambda: any(r[1].endswith("/exchange") for r in fake.requests))
        os.kill(os.getpid(), sent)

    sender = threading.Thread(target=send_when_waiting, daemon=True)
    sender.start()
    # Ctrl-C raises KeyboardInterrupt in a command run from a terminal; a pytest-xdist worker
    # ignores SIGINT, and the command would then wait on for ever: give it a terminal's.
    interrupt = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        result = CliRunner().invoke(
            cli,
            ["reverse", str(repo), "--project", "DEMO"],
            env={"CREWBOARD_URL": fake.url, "CREWBOARD_TOKEN": TOKEN},
        )
    finally:
        signal.signal(signal.SIGINT, interrupt)
    sender.join(timeout=10)
    assert result.exit_code == 0, result.output
    assert fake.deleted == ["brg_1"]
    assert "no longer offered" in result.output
    assert signal.getsignal(signal.SIGTERM) is before  # put back as it was
