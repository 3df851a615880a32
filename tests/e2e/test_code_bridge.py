"""A brownfield spec session reads the code through a real `crewboard reverse` process.

Real parts only: `crewboard serve` processes on the test's database, the loopback model server
speaking each provider's wire format and calling the code tools, and `crewboard reverse` run
as a developer runs it, on a folder holding what must never leave the machine: a `.env`, a
key, an ignored folder, a link out of the folder and a 20 MB log. What reaches the model is
read from the requests the model server recorded.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import URL

from crewboard.contract.sessions import present
from crewboard.domain.identity.records import Actor
from crewboard.domain.sessions import Mode
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import conversation, sessions
from crewboard.services.sessions.code import code_reads
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user, personal_secret
from tests.support.model_server import ModelServer, Reply, ToolUse
from tests.support.serve import serve_env, start_serve, stop_serve, wait_healthy
from tests.support.server import free_port
from tests.support.sessions import configure_model, proposes

pytestmark = pytest.mark.slow  # serve processes, a reverse process, a 20 MB file

SECRET_WORDS = "sk-live-never-leaves-this-machine"
OUTSIDE_WORDS = "outside-the-folder-entirely"
IGNORED_WORDS = "an-ignored-build-artifact"
SCOPES = ["read", "specs.write"]
READS = (
    ("read_file", {"path": "src/cart.py", "startLine": 3, "endLine": 4}),
    ("read_file", {"path": "big.log", "startLine": 2, "endLine": 3}),
    ("read_file", {"path": ".env"}),
    ("read_file", {"path": "deploy.pem"}),
    ("read_file", {"path": "build/out.txt"}),
    ("read_file", {"path": "linked/notes.txt"}),
    ("read_file", {"path": "../elsewhere/notes.txt"}),
    ("search_text", {"query": "STRIPE_KEY"}),
)


def wait_until(what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
    """Poll another process's effect until `check` returns something true."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.1)  # another process's write has no event to wait on; bounded above
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A developer's checkout with everything a careless bridge could leak."""
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "cart.py").write_text(
        "".join(f"def step_{n}():\n    return {n}\n" for n in range(1, 51)), encoding="utf-8"
    )
    (root / "README.md").write_text("# Shop\nA small shop with a cart.\n", encoding="utf-8")
    (root / ".gitignore").write_text("build/\n*.log.old\n", encoding="utf-8")
    (root / "build").mkdir()
    (root / "build" / "out.txt").write_text(IGNORED_WORDS, encoding="utf-8")
    (root / ".env").write_text(f"STRIPE_KEY={SECRET_WORDS}\n", encoding="utf-8")
    (root / "deploy.pem").write_text(f"-----BEGIN PRIVATE KEY-----\n{SECRET_WORDS}\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.txt").write_text(OUTSIDE_WORDS, encoding="utf-8")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    with (root / "big.log").open("wb") as big:  # 20 MB of numbered lines
        line = 0
        while big.tell() < 20 * 1024 * 1024:
            line += 1
            big.write(f"log line {line:08d} {'x' * 80}\n".encode())
    return root


@dataclass
class Node:
    url: str
    process: subprocess.Popen[bytes]
    log: Path


class Cluster:
    """`crewboard serve` processes on one database; stopped at the end."""

    def __init__(self, database_url: URL, tmp_path: Path) -> None:
        self.database_url = database_url
        self.tmp_path = tmp_path
        self.nodes: list[Node] = []

    def start(self, name: str, **env: str) -> Node:
        port = free_port()
        settings = {**serve_env(self.database_url, self.tmp_path / "data", port),
                    "CREWBOARD_NODE_NAME": name, **env}  # fmt: skip
        log = self.tmp_path / f"{name}.log"
        process = start_serve(settings, log)
        node = Node(f"http://127.0.0.1:{port}", process, log)
        self.nodes.append(node)
        wait_healthy(node.url, process, log)
        return node

    def stop(self) -> None:
        for node in self.nodes:
            if node.process.poll() is None:
                stop_serve(node.process)


class Bridge:
    """`crewboard reverse` as a developer runs it, its output in a file."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.process: subprocess.Popen[bytes] | None = None
        self.runs = 0

    def start(self, url: str, token: str, project: str, folder: Path) -> None:
        self.runs += 1
        self.log = self.tmp_path / f"reverse-{self.runs}.log"
        env = {**os.environ, "CREWBOARD_TOKEN": token}
        env.pop("CREWBOARD_DATA_DIR", None)
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "crewboard", "reverse", str(folder), "--project", project,
                 "--url", url],
                env=env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=15)

    def stop(self) -> int:
        if self.process is None or self.process.poll() is not None:
            return 0 if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=15)


@pytest.fixture
def cluster(empty_database_url: URL, tmp_path: Path) -> Iterator[Cluster]:
    made = Cluster(empty_database_url, tmp_path)
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture
def db(empty_database_url: URL) -> Iterator[Database]:
    """The test's own handle on the nodes' database, to arrange and to read what they wrote."""
    handle = Database(empty_database_url)
    try:
        yield handle
    finally:
        handle.dispose()


@pytest.fixture
def bridge(tmp_path: Path) -> Iterator[Bridge]:
    made = Bridge(tmp_path)
    try:
        yield made
    finally:
        made.stop()


def tool_results(requests: list[dict[str, Any]]) -> list[str]:
    """Every tool result the model was sent, in order (either API's shape)."""
    found: list[str] = []
    for body in requests:
        for message in body.get("messages", []):
            if message.get("role") == "tool":
                found.append(str(message.get("content", "")))
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    if block.get("type") == "tool_result":
                        inner = block.get("content")
                        found.append(inner if isinstance(inner, str) else json.dumps(inner))
    return found


def bodies(model: ModelServer) -> list[dict[str, Any]]:
    """The JSON bodies of the requests the model server got, in order."""
    return [recorded.body for recorded in model.requests]


def answers_of(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool results the last request carried (the whole turn's), as JSON, in order."""
    return [json.loads(text) for text in tool_results(requests[-1:])]


def start_brownfield(db: Database, actor: Actor, prompt: str) -> str:
    made = sessions.start_session(
        db, actor, project="CRW", workspace_id=None, mode=Mode.GENERATE, prompt=prompt,
        workflow_id="crewboard-brownfield-v1", answer=present.started_answer,
    ).body  # fmt: skip
    return str(made["sessionId"])


def turn_of(db: Database, actor: Actor, session_id: str) -> dict[str, Any]:
    page = conversation.session_page(db, actor, project="CRW", ref=session_id)
    return present.turn_view(page.turn)


def ended(db: Database, actor: Actor, session_id: str) -> dict[str, Any] | None:
    turn = turn_of(db, actor, session_id)
    return turn if turn.get("status") in ("done", "failed") else None


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_the_model_reads_only_the_allowed_lines_through_the_bridge_and_every_read_is_recorded(
    cluster: Cluster, bridge: Bridge, repo: Path, db: Database, api: str
) -> None:
    node = cluster.start("one")
    person = make_user(db, "ada@example.com", is_owner=True)
    make_project(db, person, "CRW")
    actor = person_actor(person)
    with ModelServer() as model:
        configure_model(db, model, api, timeout=30, max_retries=0)  # type: ignore[arg-type]
        bridge.start(node.url, personal_secret(db, actor, SCOPES), "CRW", repo)
        wait_until("the bridge is connected", lambda: "connected" in bridge.output().lower())
        model.script(
            ToolUse((("list_folder", {"path": "."}),), text="Let me look around. "),
            ToolUse(READS),
            Reply(proposes("specs/cart/requirements.md", "# Cart\n\n1. Steps stay.\n")),
        )
        session_id = start_brownfield(db, actor, "Add a wishlist beside the cart.")
        turn = wait_until("the turn ended", lambda: ended(db, actor, session_id))
        assert turn["status"] == "done", turn
        sent = json.dumps(bodies(model))
        for word in (SECRET_WORDS, OUTSIDE_WORDS, IGNORED_WORDS):
            assert word not in sent, word
        listing, *reads = answers_of(bodies(model))  # the last request carries every answer
        names = {entry["path"] for entry in listing["entries"]}
        assert {"README.md", "src", "big.log"} <= names
        assert not names & {".env", "deploy.pem", "build", ".git"}
        assert listing["hidden"] >= 3
        assert reads[0]["text"] == "def step_2():\n    return 2"
        assert (reads[0]["startLine"], reads[0]["endLine"]) == (3, 4)
        assert reads[1]["text"].startswith("log line 00000002")
        assert reads[1]["text"].count("\n") == 1
        assert reads[1]["totalLines"] is None
        codes = [r.get("error", {}).get("code") for r in reads[2:7]]
        assert codes == ["secret", "secret", "ignored", "outside_folder", "outside_folder"]
        assert reads[7]["matches"] == []  # the only file holding it is a secret
        # The reply is whole: the prose of every round, then the proposal.
        page = conversation.session_page(db, actor, project="CRW", ref=session_id)
        assert "Let me look around." in page.messages[-1].text
        recorded = db.read(lambda uow: code_reads(uow, session_id))
        assert [r.tool for r in recorded] == ["list_folder"] + ["read_file"] * 7 + ["search_text"]
        assert recorded[1].summary.get("bytes", 0) > 0
        assert [r.summary.get("error") for r in recorded[3:8]] == codes
        # Only what was read is kept, never the code itself.
        kept = json.dumps([r.summary for r in recorded])
        assert "step_2" not in kept
        assert "log line" not in kept
    assert bridge.stop() == 0


def test_a_bridge_killed_mid_turn_and_started_again_lets_the_turn_go_on(
    cluster: Cluster, bridge: Bridge, repo: Path, db: Database
) -> None:
    node = cluster.start("one")
    person = make_user(db, "ada@example.com", is_owner=True)
    make_project(db, person, "CRW")
    actor = person_actor(person)
    secret = personal_secret(db, actor, SCOPES)
    with ModelServer() as model:
        configure_model(db, model, "openai", timeout=30, max_retries=0)
        bridge.start(node.url, secret, "CRW", repo)
        wait_until("the bridge is connected", lambda: "connected" in bridge.output().lower())
        assert bridge.process is not None
        bridge.process.send_signal(signal.SIGSTOP)  # frozen: it takes no call
        model.script(
            ToolUse((("read_file", {"path": "README.md"}),)),
            Reply(proposes("specs/cart/requirements.md", "# Cart\n")),
        )
        session_id = start_brownfield(db, actor, "Describe the cart.")
        wait_until("the model asked to read", lambda: len(model.requests) >= 1)
        bridge.kill()
        bridge.start(node.url, secret, "CRW", repo)  # the developer starts it again
        turn = wait_until("the turn ended", lambda: ended(db, actor, session_id))
        assert turn["status"] == "done", turn
        assert answers_of(bodies(model))[0]["text"].startswith("# Shop")
    # A node stopping with the bridge's long poll open answers it at once instead of waiting it
    # out (uvicorn waits for every open request); the bridge says it lost the server.
    started = time.monotonic()
    assert stop_serve(node.process) == 0
    assert time.monotonic() - started < 10
    wait_until("the bridge noticed", lambda: "lost" in bridge.output().lower(), timeout=30)


def test_a_bridge_that_does_not_come_back_fails_the_turn_with_what_to_do(
    cluster: Cluster, bridge: Bridge, repo: Path, db: Database
) -> None:
    node = cluster.start("one", CREWBOARD_BRIDGE_CALL_TIMEOUT="3")
    person = make_user(db, "ada@example.com", is_owner=True)
    make_project(db, person, "CRW")
    actor = person_actor(person)
    with ModelServer() as model:
        configure_model(db, model, "openai", timeout=30, max_retries=0)
        bridge.start(node.url, personal_secret(db, actor, SCOPES), "CRW", repo)
        wait_until("the bridge is connected", lambda: "connected" in bridge.output().lower())
        assert bridge.process is not None
        bridge.process.send_signal(signal.SIGSTOP)
        model.script(ToolUse((("read_file", {"path": "README.md"}),)))
        session_id = start_brownfield(db, actor, "Describe the cart.")
        turn = wait_until("the turn ended", lambda: ended(db, actor, session_id))
        bridge.kill()
        assert turn["status"] == "failed"
        assert turn["error"]["code"] == "bridge_gone"
        assert "crewboard reverse" in turn["error"]["message"]


def test_the_bridge_on_one_node_serves_a_turn_run_by_another(
    cluster: Cluster, bridge: Bridge, repo: Path, db: Database, backend: str
) -> None:
    if backend != "postgresql":
        pytest.skip("several nodes share PostgreSQL; SQLite serves one node")
    holder = cluster.start("holder", CREWBOARD_SESSION_RUNNERS="0")  # runs no turn
    cluster.start("runner")
    person = make_user(db, "ada@example.com", is_owner=True)
    make_project(db, person, "CRW")
    actor = person_actor(person)
    with ModelServer() as model:
        configure_model(db, model, "anthropic", timeout=30, max_retries=0)
        bridge.start(holder.url, personal_secret(db, actor, SCOPES), "CRW", repo)
        wait_until("the bridge is connected", lambda: "connected" in bridge.output().lower())
        model.script(
            ToolUse((("read_file", {"path": "src/cart.py", "startLine": 1, "endLine": 2}),)),
            Reply(proposes("specs/cart/requirements.md", "# Cart\n")),
        )
        session_id = start_brownfield(db, actor, "Describe the cart.")
        turn = wait_until("the turn ended", lambda: ended(db, actor, session_id))
        assert turn["status"] == "done", turn
        assert answers_of(bodies(model))[0]["text"] == "def step_1():\n    return 1"
