"""The server under test as a separate process: start, wait for /healthz, measure, stop.

Also the throw-away PostgreSQL database a run on PostgreSQL needs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2
import psycopg
from psycopg import sql

from crewboard.config import Settings
from crewboard.services.projects.bootstrap import initialise
from crewboard.storage import migrate
from crewboard.storage.database import Database

REPO = Path(__file__).resolve().parent.parent
START_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def proc_status_kib(pid: int, field: str) -> int | None:
    """A `kB` figure from /proc/PID/status (VmHWM: peak resident set; VmRSS: current)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        name, _, value = line.partition(":")
        if name == field:
            return int(value.split()[0])
    return None


def reset_peak_rss(pid: int) -> bool:
    """Set VmHWM back to the current RSS (Linux 4.0+: write 5 to clear_refs); False if refused."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class ServerInfo:
    base_url: str
    token: str
    project: str
    database: str
    pid: int
    board: list[dict[str, Any]] = field(default_factory=list)  # seeded projects: key, id, tasks
    agents: list[str] = field(default_factory=list)  # agent tokens' secrets (--agent-tokens)


class ServerProcess:
    """`python -m bench.server` on a free port with a fresh data folder, as a context manager.

    Leaving the block stops the server with SIGTERM (as an operator would), waits for it to
    exit and removes the data folder; `exit_code` is then what the process returned.
    `server_args` go to `bench.server` as they are (e.g. `--seed-board 100000,1000`); seeding
    a large board takes a while, hence `start_timeout`. `env` adds settings of the workload's
    own (`CREWBOARD_…` variables).
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        keep_data: bool = False,
        server_args: list[str] | None = None,
        start_timeout: float = START_TIMEOUT,
        env: dict[str, str] | None = None,
    ) -> None:
        self.database_url = database_url
        self.env = env or {}
        self.keep_data = keep_data
        self.server_args = server_args or []
        self.start_timeout = start_timeout
        self.folder = Path(tempfile.mkdtemp(prefix="crewboard-bench-"))
        self.log_path = self.folder / "server.log"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.exit_code: int | None = None

    def __enter__(self) -> ServerInfo:
        info_path = self.folder / "info.json"
        command = [
            sys.executable,
            "-m",
            "bench.server",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.folder / "data"),
            "--info-file",
            str(info_path),
        ]
        if self.database_url:
            command += ["--database-url", self.database_url]
        command += self.server_args
        # The instance is the benchmark's own: none of the caller's CREWBOARD_* settings apply.
        env = {k: v for k, v in os.environ.items() if not k.startswith("CREWBOARD_")}
        env |= self.env  # the workload's own settings
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        try:
            base_url = f"http://127.0.0.1:{self.port}"
            self._wait_healthy(base_url)
            data = json.loads(info_path.read_text(encoding="utf-8"))
        except BaseException:
            self._stop()
            raise
        if data["pid"] != self.process.pid:
            raise RuntimeError("the server's pid is not the process started here")
        return ServerInfo(
            base_url=base_url,
            token=data["token"],
            project=data["project"],
            database=data["database"],
            pid=self.process.pid,
            board=data.get("board", []),
            agents=data.get("agents", []),
        )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop()
        if not self.keep_data:
            shutil.rmtree(self.folder, ignore_errors=True)

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _wait_healthy(self, base_url: str) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the server exited with {self.process.returncode}:\n{self.log_tail()}"
                )
            try:
                if httpx2.get(f"{base_url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the server did not answer /healthz in {self.start_timeout:.0f} s")

    def _stop(self) -> None:
        if self.process is None or self.exit_code is not None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.exit_code = self.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            self.exit_code = -int(signal.SIGKILL)


def _libpq(url: str) -> str:
    """psycopg's spelling of a SQLAlchemy PostgreSQL URL."""
    scheme, _, rest = url.partition("://")
    return f"{scheme.split('+')[0]}://{rest}"


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _admin(url: str, statement: sql.Composed) -> None:
    with psycopg.connect(_libpq(url), autocommit=True, connect_timeout=5) as conn:
        conn.execute(statement)


def hide_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


@contextmanager
def throwaway_postgres(admin_url: str) -> Iterator[str]:
    """Create an empty database on the server of `admin_url`; yield its URL; drop it after."""
    name = f"crewboard_bench_{uuid.uuid4().hex[:10]}"
    _admin(admin_url, sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield _with_database(admin_url, name)
    finally:
        _admin(
            admin_url,
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)),
        )


RESULTS = Path(__file__).resolve().parent / "results"


def run_workload(
    name: str,
    args: Any,
    run: Callable[[Any, str | None], dict[str, Any]],
    table: Callable[[list[dict[str, Any]]], str],
) -> None:
    """Run a workload (on a throw-away PostgreSQL database when asked), print its table and
    which targets it met, and write the whole result as JSON under bench/results/."""
    if args.database == "postgresql":
        print(
            f"[bench {name}] creating a throw-away database on {hide_password(args.postgres_url)}"
        )
        with throwaway_postgres(args.postgres_url) as url:
            results = run(args, url)
    else:
        results = run(args, None)
    print(table(results["rows"]))
    for goal, met in results["target_met"].items():
        print(f"{'met ' if met else 'MISSED'} {goal}")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    output = args.output or RESULTS / f"{stamp}-{name}-{results['database']}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nJSON results: {output}")


def first_start(data_dir: Path, database_url: str | None = None) -> str:
    """Migrate and initialise a fresh instance in `data_dir` (a new folder) as a first start
    does (owner, the DEMO project, a token with every scope); its first token."""
    data_dir.mkdir(parents=True)
    settings = Settings(data_dir=data_dir, database_url=database_url)
    db = Database(settings.resolved_database_url)
    try:
        migrate.upgrade(db)
        first = initialise(db, owner_email=settings.owner_email)
    finally:
        db.dispose()
    if first is None:
        raise RuntimeError(f"{data_dir} already held a Crewboard instance")
    return first.token.secret
