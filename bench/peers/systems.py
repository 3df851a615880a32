"""The four systems under test, each behind the same small set of operations.

Every system is driven by the official `mcp` SDK client (`mcp.Client`, legacy handshake), so
the client's share of each call is the same code path everywhere: Crewboard over stdio
(`crewboard mcp`) and over Streamable HTTP (`bench.server`), Backlog.md (`backlog mcp start`)
and task-master-ai (its MCP server), the last two over stdio because that is all they offer.
An operation answers a `Reply` (time, characters of text received, success); what it means
(an id, a status, a count) is parsed from the text the server sent, since that is what a
model would read.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from abc import ABC, abstractmethod
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from bench.peers.install import BACKLOG, TASKMASTER, TASKMASTER_CLI, require
from bench.process import ServerProcess, first_start
from crewboard.services.projects.bootstrap import DEMO_PROJECT_KEY

CALL_TIMEOUT = 300.0  # seconds; Backlog.md's creates reach ~0.2 s at 1,000 tasks, so generous
SETUP_TIMEOUT = 120.0

SYSTEMS = ("crewboard-stdio", "crewboard-http", "backlog", "taskmaster")
LABELS = {
    "crewboard-stdio": "Crewboard stdio",
    "crewboard-http": "Crewboard HTTP",
    "backlog": "Backlog.md",
    "taskmaster": "task-master",
}


@dataclass
class Reply:
    ok: bool
    ms: float
    chars: int  # characters of every text part received: what a model would be handed
    text: str  # the first text part (Crewboard's JSON, the peers' text or JSON)
    error: str | None = None

    def json(self) -> Any:
        return json.loads(self.text)


@dataclass
class Ref:
    """A task as the system names it, and (Crewboard) the revision last seen."""

    id: str
    revision: int = 0


@dataclass
class Listing:
    ok: bool
    ms: float
    calls: int
    chars: int
    tasks: int


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> Reply:
    """One `tools/call`, timed on the client; a transport or protocol failure is a failed
    reply rather than an exception, so one bad call does not end the run."""
    started = time.perf_counter()
    try:
        result: CallToolResult = await client.call_tool(
            tool, arguments, read_timeout_seconds=CALL_TIMEOUT
        )
    except Exception as error:  # recorded and counted as a failed call
        ms = (time.perf_counter() - started) * 1000
        return Reply(False, ms, 0, "", f"{type(error).__name__}: {error}")
    ms = (time.perf_counter() - started) * 1000
    texts = [part.text for part in result.content if isinstance(part, TextContent)]
    first = texts[0] if texts else ""
    chars = sum(len(text) for text in texts)
    if result.is_error:
        detail = result.structured_content or {}
        code = detail.get("code") if isinstance(detail, dict) else None
        return Reply(False, ms, chars, first, f"{code or 'error'}: {first[:300]}")
    return Reply(True, ms, chars, first)


def children_of(pid: int) -> set[int]:
    """Direct children of a process, from /proc (the stdio client does not hand out its pid)."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


def _run(command: list[str], cwd: Path, env: dict[str, str], log: TextIO) -> None:
    log.write(f"\n$ {' '.join(command)}  (in {cwd})\n")
    log.flush()
    subprocess.run(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        check=True,
        timeout=SETUP_TIMEOUT,
    )


def _clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without any CREWBOARD_* setting (the instances are the run's
    own), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREWBOARD_")}
    env.update(extra)
    return env


EVERY_SYSTEM: list[System] = []  # every system made in this run, for the last clean-up


class System(ABC):
    """One system under test with a fresh board in `folder`; `connect` opens one more client
    (for stdio, one more server process on the same board)."""

    name: str
    search_label = "search"

    def __init__(self, folder: Path, log: TextIO) -> None:
        self.folder = folder
        self.log = log
        self.pids: list[int] = []  # server processes started for it (their trees are measured)
        EVERY_SYSTEM.append(self)

    @property
    def label(self) -> str:
        return LABELS[self.name]

    @abstractmethod
    def prepare(self) -> None:
        """Make the empty board (a workspace, a database) before any client connects."""

    def close(self) -> None:
        """Stop what `prepare` started (the stdio servers end with their clients)."""
        self.log.flush()

    async def _stdio(self, stack: AsyncExitStack, params: StdioServerParameters) -> Client:
        before = children_of(os.getpid())
        client = await stack.enter_async_context(
            Client(
                stdio_client(params, errlog=self.log),
                mode="legacy",
                read_timeout_seconds=CALL_TIMEOUT,
            )
        )
        self.pids.extend(sorted(children_of(os.getpid()) - before))
        return client

    @abstractmethod
    async def connect(self, stack: AsyncExitStack) -> Client: ...

    @abstractmethod
    async def create(self, client: Client, title: str, description: str, key: str) -> Reply:
        """Create a task; `key` is the idempotency key where the system takes one."""

    @abstractmethod
    def created(self, reply: Reply) -> Ref | None:
        """The task a successful create answered, or None when the answer names none."""

    @abstractmethod
    async def list_board(self, client: Client) -> Listing:
        """Every task of the board, page after page until the system says there is no more."""

    @abstractmethod
    async def set_status(self, client: Client, ref: Ref, busy: bool) -> Reply:
        """Move a task to in progress (busy) or back to the first column."""

    @abstractmethod
    async def search(self, client: Client, word: str, ref: Ref) -> Reply: ...

    @abstractmethod
    async def get(self, client: Client, ref: Ref) -> Reply: ...

    @abstractmethod
    async def is_busy(self, client: Client, ref: Ref) -> bool | None:
        """Whether the task is in progress now (None when it cannot be read)."""

    async def count(self, client: Client) -> int | None:
        listing = await self.list_board(client)
        return listing.tasks if listing.ok else None

    def on_disk(self) -> dict[str, int] | None:
        """What the board's files hold, read directly (the peers keep tasks in files): to
        tell a create that never reached the disk from one the server does not show."""
        return None


# --- Crewboard -------------------------------------------------------------------------------


class Crewboard(System):
    """Crewboard's tools, the same for both transports; replies are the JSON of the first
    text part, and the whole board is read in the board projection (key and status are
    counted)."""

    project = "DEMO"
    owner: str | None = None

    async def create(self, client: Client, title: str, description: str, key: str) -> Reply:
        return await call(
            client,
            "create_task",
            {
                "projectId": self.project,
                "workspaceId": None,
                "idempotencyKey": key,
                "title": title,
                "description": description,
            },
        )

    def created(self, reply: Reply) -> Ref | None:
        if not reply.ok:
            return None
        task = reply.json()["task"]
        return Ref(str(task["key"]), int(task["revision"]))

    async def list_board(self, client: Client) -> Listing:
        # The board projection: one short array a task (key, title, status, …), 500 a page.
        whole: dict[str, Any] = {"projectId": self.project, "projection": "board", "limit": 500}
        arguments = dict(whole)
        calls = chars = tasks = 0
        ms = 0.0
        while True:
            reply = await call(client, "list_tasks", arguments)
            calls += 1
            chars += reply.chars
            ms += reply.ms
            if not reply.ok:
                return Listing(False, ms, calls, chars, tasks)
            body = reply.json()
            rows = body["tasks"]
            key, status = body["columns"].index("key"), body["columns"].index("status")
            tasks += sum(1 for row in rows if row[key] and row[status])
            arguments = dict(whole)
            if body.get("nextCursor"):
                arguments["cursor"] = body["nextCursor"]
            elif body.get("nextOffset") is not None:
                arguments["offset"] = body["nextOffset"]
            else:
                return Listing(True, ms, calls, chars, tasks)

    async def _me(self, client: Client) -> str:
        """The token owner's user id (list_team, once, not timed): a task in progress must
        name who does it, so the move to in progress assigns it in the same call."""
        if self.owner is None:
            reply = await call(client, "list_team", {"projectId": self.project})
            people = reply.json()["teams"][0]["people"] if reply.ok else []
            mine = [person["userId"] for person in people if person.get("you")]
            if not mine:
                raise RuntimeError(f"{self.name}: list_team named no caller ({reply.error})")
            self.owner = str(mine[0])
        return self.owner

    async def set_status(self, client: Client, ref: Ref, busy: bool) -> Reply:
        patch: dict[str, Any] = {"status": "backlog"}
        if busy:
            patch = {"status": "in_progress", "assigneeId": await self._me(client)}
        reply = await call(
            client,
            "update_task",
            {
                "projectId": self.project,
                "workspaceId": None,
                "idempotencyKey": uuid.uuid4().hex,
                "taskId": ref.id,
                "expectedRevision": ref.revision,
                "patch": patch,
            },
        )
        if reply.ok:
            ref.revision = int(reply.json()["task"]["revision"])
        return reply

    async def search(self, client: Client, word: str, ref: Ref) -> Reply:
        del ref  # a text search needs no task
        return await call(
            client, "list_tasks", {"projectId": self.project, "q": word, "limit": 200}
        )

    async def get(self, client: Client, ref: Ref) -> Reply:
        return await call(client, "get_task", {"taskId": ref.id})

    async def _read(self, client: Client, ref: Ref) -> dict[str, Any] | None:
        reply = await call(client, "get_task", {"taskId": ref.id, "includeContextPack": False})
        if not reply.ok:
            return None
        task: dict[str, Any] = reply.json()["task"]
        ref.revision = int(task["revision"])
        return task

    async def is_busy(self, client: Client, ref: Ref) -> bool | None:
        task = await self._read(client, ref)
        return None if task is None else task["status"] == "in_progress"

    async def refresh(self, client: Client, ref: Ref) -> None:
        """Read the task's revision now (an edit racing others sends what it last read)."""
        await self._read(client, ref)

    async def count(self, client: Client) -> int | None:
        reply = await call(client, "list_tasks", {"projectId": self.project, "limit": 1})
        return int(reply.json()["total"]) if reply.ok else None


class CrewboardStdio(Crewboard):
    """`crewboard mcp --toolsets all` on its own SQLite file, initialised here as bench/server.py
    initialises its instance (owner, the DEMO project, a token with every scope); the token
    goes in CREWBOARD_TOKEN, which keeps it out of process lists."""

    name = "crewboard-stdio"

    def prepare(self) -> None:
        self.data_dir = self.folder / "data"
        self.token = first_start(self.data_dir)
        self.project = DEMO_PROJECT_KEY

    async def connect(self, stack: AsyncExitStack) -> Client:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "crewboard", "mcp", "--toolsets", "all"],
            cwd=str(self.folder),
            env=_clean_env(CREWBOARD_DATA_DIR=str(self.data_dir), CREWBOARD_TOKEN=self.token),
        )
        return await self._stdio(stack, params)


class CrewboardHttp(Crewboard):
    """The bench server (`python -m bench.server`, bench/process.py) on its own SQLite file,
    every toolset asked for with `X-MCP-Toolsets: all`; several clients share the one server."""

    name = "crewboard-http"

    server: ServerProcess | None = None

    def prepare(self) -> None:
        server = ServerProcess()
        self.info = server.__enter__()
        self.server = server
        self.project = self.info.project
        self.pids.append(self.info.pid)

    def close(self) -> None:
        server: ServerProcess | None = getattr(self, "server", None)
        if server is not None:
            self.server = None
            server.__exit__(None, None, None)
            self.log.write(f"\ncrewboard-http exited with {server.exit_code}\n")

    async def connect(self, stack: AsyncExitStack) -> Client:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers={
                    "Authorization": f"Bearer {self.info.token}",
                    "X-MCP-Toolsets": "all",
                },
                timeout=CALL_TIMEOUT,
            )
        )
        transport = streamable_http_client(f"{self.info.base_url}/mcp", http_client=http)
        return await stack.enter_async_context(
            Client(transport, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)
        )


# --- Backlog.md ------------------------------------------------------------------------------

_BACKLOG_ID = re.compile(r"\bTask (TASK-\d+)\b")
_BACKLOG_ROW = re.compile(r"\bTASK-\d+\b")
BACKLOG_STATUSES = ("To Do", "In Progress", "Done")  # what `backlog init --defaults` sets up
_BACKLOG_BUSY = re.compile(r"^Status: .*In Progress", re.MULTILINE)


class Backlog(System):
    """Backlog.md 1.52.0 in a git repository of its own (it keeps tasks as Markdown files),
    remote operations and branch checks off, HOME a folder of the run's."""

    name = "backlog"

    def prepare(self) -> None:
        binary = str(require(BACKLOG))
        self.workspace = self.folder / "workspace"
        self.workspace.mkdir(parents=True)
        home = self.folder / "home"
        home.mkdir()
        self.env = _clean_env(HOME=str(home))
        for command in (
            ["git", "init", "-q"],
            ["git", "config", "user.email", "bench@example.invalid"],
            ["git", "config", "user.name", "bench"],
            [
                binary,
                "init",
                "bench",
                "--defaults",
                *("--integration-mode", "none"),
                *("--auto-open-browser", "false"),
            ],
            [binary, "config", "set", "remoteOperations", "false"],
            [binary, "config", "set", "checkActiveBranches", "false"],
        ):
            _run(command, self.workspace, self.env, self.log)
        self.binary = binary

    async def connect(self, stack: AsyncExitStack) -> Client:
        params = StdioServerParameters(
            command=self.binary, args=["mcp", "start"], cwd=str(self.workspace), env=self.env
        )
        return await self._stdio(stack, params)

    async def create(self, client: Client, title: str, description: str, key: str) -> Reply:
        del key  # no idempotency key: a retried create is a second task
        return await call(
            client,
            "task_create",
            {"title": title, "description": description, "priority": "medium"},
        )

    def created(self, reply: Reply) -> Ref | None:
        found = _BACKLOG_ID.search(reply.text) if reply.ok else None
        return Ref(found.group(1).lower()) if found else None

    async def list_board(self, client: Client) -> Listing:
        # One call answers up to 1,000 tasks (its maximum); the whole board at N = 1,000.
        reply = await call(client, "task_list", {"limit": 1000})
        tasks = len(_BACKLOG_ROW.findall(reply.text)) if reply.ok else 0
        return Listing(reply.ok, reply.ms, 1, reply.chars, tasks)

    async def count(self, client: Client) -> int | None:
        # An unfiltered task_list does not always show the In Progress column (seen on this
        # version: all To Do tasks, none in progress), so count column by column.
        total = 0
        for status in BACKLOG_STATUSES:
            reply = await call(client, "task_list", {"status": status, "limit": 1000})
            if not reply.ok:
                return None
            total += len(_BACKLOG_ROW.findall(reply.text))
        return total

    async def set_status(self, client: Client, ref: Ref, busy: bool) -> Reply:
        status = "In Progress" if busy else "To Do"
        return await call(client, "task_edit", {"id": ref.id, "status": status})

    async def search(self, client: Client, word: str, ref: Ref) -> Reply:
        del ref  # a text search needs no task
        return await call(client, "task_search", {"query": word})

    async def get(self, client: Client, ref: Ref) -> Reply:
        return await call(client, "task_view", {"id": ref.id})

    async def is_busy(self, client: Client, ref: Ref) -> bool | None:
        reply = await self.get(client, ref)
        return bool(_BACKLOG_BUSY.search(reply.text)) if reply.ok else None

    def on_disk(self) -> dict[str, int] | None:
        files = list((self.workspace / "backlog" / "tasks").glob("task-*.md"))
        ids = {path.name.partition(" ")[0] for path in files}
        return {"files": len(files), "distinct_ids": len(ids)}


# --- task-master-ai --------------------------------------------------------------------------


class TaskMaster(System):
    """task-master-ai 0.43.1 with every tool (TASK_MASTER_TOOLS=all), HOME a folder of the
    run's (its init writes editor files), telemetry off, the empty task file written here
    (init does not make it). It has no text search: the search step calls its id lookup."""

    name = "taskmaster"
    search_label = "get_task by id (no search)"

    def prepare(self) -> None:
        cli = str(require(TASKMASTER_CLI))
        self.binary = str(require(TASKMASTER))
        self.workspace = self.folder / "workspace"
        self.workspace.mkdir(parents=True)
        home = self.folder / "home"
        home.mkdir()
        self.env = _clean_env(HOME=str(home), TASK_MASTER_TOOLS="all")
        _run(
            [
                cli,
                "init",
                "-y",
                "--name",
                "bench",
                "--skip-install",
                "--no-aliases",
                "--no-git",
                "--no-git-tasks",
                "--rules",
                "cursor",
            ],
            self.workspace,
            self.env,
            self.log,
        )
        config_path = self.workspace / ".taskmaster" / "config.json"
        config = json.loads(config_path.read_text(encoding="utf-8"))
        config.setdefault("global", {})["anonymousTelemetry"] = False
        config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
        tasks_path = self.workspace / ".taskmaster" / "tasks" / "tasks.json"
        tasks_path.parent.mkdir(parents=True, exist_ok=True)
        created = datetime.now(UTC).isoformat()
        tasks_path.write_text(
            json.dumps(
                {"master": {"tasks": [], "metadata": {"created": created, "description": "bench"}}}
            ),
            encoding="utf-8",
        )
        self.root = str(self.workspace)

    async def connect(self, stack: AsyncExitStack) -> Client:
        # With telemetry off it still prints one notice line on stdout at start; the SDK logs
        # it as an unparsable message (into the run's log) and carries on.
        params = StdioServerParameters(
            command=self.binary, args=[], cwd=str(self.workspace), env=self.env
        )
        return await self._stdio(stack, params)

    async def create(self, client: Client, title: str, description: str, key: str) -> Reply:
        del key  # no idempotency key: a retried create is a second task
        return await call(
            client,
            "add_task",
            {"projectRoot": self.root, "title": title, "description": description}
            | {"priority": "medium"},
        )

    def created(self, reply: Reply) -> Ref | None:
        if not reply.ok:
            return None
        try:
            return Ref(str(reply.json()["data"]["taskId"]))
        except (ValueError, KeyError, TypeError):
            return None

    async def list_board(self, client: Client) -> Listing:
        reply = await call(client, "get_tasks", {"projectRoot": self.root})
        tasks = 0
        if reply.ok:
            try:
                tasks = len(reply.json()["data"]["tasks"])
            except (ValueError, KeyError, TypeError):
                return Listing(False, reply.ms, 1, reply.chars, 0)
        return Listing(reply.ok, reply.ms, 1, reply.chars, tasks)

    async def set_status(self, client: Client, ref: Ref, busy: bool) -> Reply:
        status = "in-progress" if busy else "pending"
        return await call(
            client, "set_task_status", {"projectRoot": self.root, "id": ref.id, "status": status}
        )

    async def search(self, client: Client, word: str, ref: Ref) -> Reply:
        del word  # no text search: the id lookup stands in
        return await self.get(client, ref)

    async def get(self, client: Client, ref: Ref) -> Reply:
        return await call(client, "get_task", {"projectRoot": self.root, "id": ref.id})

    async def is_busy(self, client: Client, ref: Ref) -> bool | None:
        reply = await self.get(client, ref)
        if not reply.ok:
            return None
        try:
            return bool(reply.json()["data"]["status"] == "in-progress")
        except (ValueError, KeyError, TypeError):
            return None

    def on_disk(self) -> dict[str, int] | None:
        path = self.workspace / ".taskmaster" / "tasks" / "tasks.json"
        tasks = json.loads(path.read_text(encoding="utf-8"))["master"]["tasks"]
        return {"tasks": len(tasks), "distinct_ids": len({task["id"] for task in tasks})}


FACTORIES: dict[str, type[System]] = {
    "crewboard-stdio": CrewboardStdio,
    "crewboard-http": CrewboardHttp,
    "backlog": Backlog,
    "taskmaster": TaskMaster,
}
