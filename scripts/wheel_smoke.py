"""The installed wheel, started the way a user starts it (scripts/wheel-smoke runs this).

Run by the Python of a clean venv that holds only the runtime lock and the wheel, from a
folder outside the repository:

    VENV/bin/python scripts/wheel_smoke.py --wheel WHEEL --repo REPO --work EMPTY_FOLDER

1. The wheel holds every file of the package the repository tracks (templates, static files,
   migrations, workflows, py.typed), bar the few listed in NOT_SHIPPED.
2. `crewboard serve` on a free port, with an empty data folder: the first start prints the
   URL and a token; /healthz and /readyz answer; the login page renders; a static file and a
   vendored one come back byte for byte; an MCP client lists the tools and calls one with
   the printed token; SIGTERM stops the server with status 0.
3. `crewboard mcp` over stdio with the same token: the SDK's stdio client initialises and
   lists the tools: those of HTTP plus the ones that work on the caller's disk (both with
   every toolset).

Each step prints one line; the first failure prints what went wrong (and the server's log)
and exits 1.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

# Tracked under src/crewboard but not needed by an installed server.
NOT_SHIPPED = {
    # For `alembic revision --autogenerate` in a checkout; the app builds its own config.
    "crewboard/storage/alembic.ini",
}
STATIC_FILES = ("app.css", "vendor/sortable-1.15.7.min.js")
# Every toolset for a token with every scope lists far more; a floor catches an empty catalogue.
MIN_TOOLS = 50
START_TIMEOUT = 60.0  # seconds from `crewboard serve` to /readyz on a loaded 2-core machine
TOKEN = re.compile(r"^\s+(cb_\S+)\s*$", re.M)
URL = re.compile(r"will serve at (http://\S+)")


class SmokeFailure(Exception):
    """A step found the installed server wrong; the message says how."""


@dataclass(frozen=True)
class Started:
    """What the first start printed."""

    url: str
    token: str
    log: Path


def step(text: str) -> None:
    print(f"wheel-smoke: {text}", flush=True)


def check_wheel_contents(wheel: Path, repo: Path) -> None:
    """Raises: SmokeFailure when a tracked package file is missing from the wheel."""
    tracked = subprocess.run(  # noqa: S603 - fixed arguments: git and the repository's path
        ["git", "-C", str(repo), "ls-files", "src/crewboard"],  # noqa: S607 - git from PATH
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    wanted = {path.removeprefix("src/") for path in tracked} - NOT_SHIPPED
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    missing = sorted(wanted - shipped)
    if missing:
        raise SmokeFailure(
            "the wheel lacks files the package tracks (add them to "
            "[tool.setuptools.package-data] in pyproject.toml):\n  " + "\n  ".join(missing)
        )
    step(f"the wheel holds all {len(wanted)} files of the package")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no PYTHONPATH (the checkout's source must not be what runs)."""
    keep = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return {**keep, "CREWBOARD_DATA_DIR": str(data_dir), **extra}


def wait_for_start(process: subprocess.Popen[bytes], log: Path) -> Started:
    """Raises: SmokeFailure when the server exits or prints no URL and token in time."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace")
        url, token = URL.search(text), TOKEN.search(text)
        if url and token:
            return Started(url[1], token[1], log)
        if process.poll() is not None:
            raise SmokeFailure(f"`crewboard serve` exited with {process.returncode}")
        time.sleep(0.2)
    raise SmokeFailure(f"`crewboard serve` printed no URL and token in {START_TIMEOUT:.0f} s")


def wait_for(url: str, path: str) -> None:
    """Raises: SmokeFailure when `path` does not answer 200 in time."""
    deadline = time.monotonic() + START_TIMEOUT
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            answer = httpx2.get(url + path, timeout=5)
        except httpx2.TransportError as error:
            last = repr(error)
        else:
            if answer.status_code == 200:
                return
            last = f"{answer.status_code} {answer.text[:200]}"
        time.sleep(0.2)
    raise SmokeFailure(f"{path} did not answer 200 in {START_TIMEOUT:.0f} s (last: {last})")


def check_pages(url: str) -> None:
    """Raises: SmokeFailure when the login page or a static file is wrong."""
    login = httpx2.get(f"{url}/login", timeout=10)
    if login.status_code != 200 or "<form" not in login.text:
        raise SmokeFailure(f"/login answered {login.status_code}, not the sign-in form")
    import crewboard  # noqa: PLC0415 - the installed package, to compare with what it serves

    static = Path(crewboard.__file__).parent / "web" / "static"
    for name in STATIC_FILES:
        answer = httpx2.get(f"{url}/static/{name}", timeout=10)
        if answer.status_code != 200 or answer.content != (static / name).read_bytes():
            raise SmokeFailure(f"/static/{name} answered {answer.status_code}, not the file")
    step(f"/login renders; {', '.join(STATIC_FILES)} served as shipped")


async def http_tools(url: str, token: str) -> set[str]:
    """The tools the token sees over HTTP, after one tool call. Raises: SmokeFailure."""
    headers = {"Authorization": f"Bearer {token}", "X-MCP-Toolsets": "all"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as client,
    ):
        tools = {tool.name for tool in (await client.list_tools()).tools}
        listed = await client.call_tool("list_projects", {})
    text = "".join(getattr(part, "text", "") for part in listed.content)
    if listed.is_error or '"DEMO"' not in text:
        raise SmokeFailure(f"list_projects over HTTP did not list the demo project: {text[:300]}")
    return tools


async def stdio_tools(venv: Path, env: dict[str, str], cwd: Path) -> set[str]:
    params = StdioServerParameters(
        command=str(venv / "bin" / "crewboard"), args=["mcp"], env=env, cwd=str(cwd)
    )
    with anyio.fail_after(START_TIMEOUT):
        async with Client(params, mode="legacy") as client:
            return {tool.name for tool in (await client.list_tools()).tools}


@contextmanager
def serving(venv: Path, work: Path) -> Iterator[tuple[subprocess.Popen[bytes], Started]]:
    """`crewboard serve` from `work`; stopped with SIGTERM on the way out."""
    log = work / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(  # noqa: S603 - the venv's own crewboard command
            [str(venv / "bin" / "crewboard"), "serve", "--port", str(free_port())],
            cwd=work,
            env=server_env(work / "data"),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process, wait_for_start(process, log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def check_http(venv: Path, work: Path) -> tuple[str, set[str]]:
    """Raises: SmokeFailure."""
    with serving(venv, work) as (process, started):
        step(f"`crewboard serve` made a fresh instance and printed {started.url} and a token")
        wait_for(started.url, "/healthz")
        wait_for(started.url, "/readyz")
        step("/healthz and /readyz answer 200")
        check_pages(started.url)
        tools = anyio.run(http_tools, started.url, started.token)
        if len(tools) < MIN_TOOLS:
            raise SmokeFailure(f"MCP over HTTP lists {len(tools)} tools, fewer than {MIN_TOOLS}")
        step(f"MCP over HTTP: {len(tools)} tools in every toolset, list_projects shows DEMO")
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
        if code != 0:
            raise SmokeFailure(f"`crewboard serve` ended with {code} after SIGTERM, not 0")
    step("SIGTERM stopped the server with status 0")
    return started.token, tools


def check_stdio(venv: Path, work: Path, token: str, over_http: set[str]) -> None:
    """Raises: SmokeFailure when stdio lists other tools than HTTP (plus its local ones)."""
    env = server_env(work / "data", CREWBOARD_TOKEN=token, CREWBOARD_TOOLSETS="all")
    tools = anyio.run(stdio_tools, venv, env, work)
    local = sorted(tools - over_http)
    if not over_http <= tools or not local:
        raise SmokeFailure(
            f"stdio lists {len(tools)} tools, HTTP {len(over_http)}: stdio lacks "
            f"{sorted(over_http - tools) or 'none'} and adds {local or 'none'} (it should add "
            "the tools that work on the caller's disk)"
        )
    step(f"MCP over stdio: {len(tools)} tools, those of HTTP plus {', '.join(local)}")


def check_installed_from(venv: Path) -> None:
    """Raises: SmokeFailure when `crewboard` is imported from elsewhere than the clean venv."""
    import crewboard  # noqa: PLC0415 - imported here to see where from

    if not Path(crewboard.__file__).resolve().is_relative_to(venv.resolve()):
        raise SmokeFailure(f"crewboard is imported from {crewboard.__file__}, not from {venv}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, required=True)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True, help="an empty folder to start in")
    args = parser.parse_args()
    venv = Path(sys.prefix)
    try:
        check_installed_from(venv)
        check_wheel_contents(args.wheel, args.repo)
        token, tools = check_http(venv, args.work)
        check_stdio(venv, args.work, token, tools)
    except (SmokeFailure, subprocess.CalledProcessError, TimeoutError) as failure:
        print(f"wheel-smoke: FAILED: {failure}", file=sys.stderr)
        log = args.work / "serve.log"
        if log.exists():
            print(f"--- the server's output ({log}):", file=sys.stderr)
            print(log.read_text(encoding="utf-8", errors="replace")[-6000:], file=sys.stderr)
        return 1
    step("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
