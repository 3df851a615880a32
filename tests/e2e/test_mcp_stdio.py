"""`crewboard mcp`: the same catalogue over stdio, through the SDK's stdio client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from mcp import Client, MCPError, StdioServerParameters
from sqlalchemy.engine import URL

from crewboard.mcp.stdio import MAX_LINE
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.projects.bootstrap import DEMO_PROJECT_KEY
from crewboard.storage.database import Database
from tests.support.cli import RunCli
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import MODES, body_of, initialize, rpc

pytestmark = pytest.mark.anyio


def _env(database_url: URL, token: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "CREWBOARD_DATABASE_URL": database_url.render_as_string(hide_password=False),
        "CREWBOARD_TOKEN": token,
    }


@pytest.fixture
def issued(db: Database) -> tokens.IssuedToken:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return tokens.issue_token(
        db, person_actor(user), kind="personal", scopes=["read", "tasks.manage"]
    )


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_serves_the_catalogue_for_the_token(
    database_url: URL, db: Database, issued: tokens.IssuedToken, mode: str
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "crewboard", "mcp"],
        env=_env(database_url, issued.secret),
    )
    async with Client(params, mode=mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        # The token names no toolset: the default set (board and memory), not planning.
        assert {"create_task", "get_updates", "get_project_memory"} <= set(names)
        assert "update_project_state" not in names
        assert "create_project" not in names  # no projects.admin scope
        made = await client.call_tool(
            "create_task", {"projectId": "CRW", "idempotencyKey": "stdio-1", "title": "from stdio"}
        )
        assert body_of(made)["task"]["title"] == "from stdio"
        tokens.revoke_token(db, issued.token.id)
        with pytest.raises(MCPError) as refused:
            await client.call_tool("get_project_state", {"projectId": "CRW"})
        assert refused.value.code == -32001


def test_stdio_refuses_a_bad_token_on_stderr_and_writes_nothing_to_stdout(
    database_url: URL,
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "crewboard", "mcp"],
        env=_env(database_url, "cb_not_a_token"),
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert result.stdout == b""
    assert b"token" in result.stderr.lower()


def printed_json(output: str, heading: str) -> dict[str, object]:
    """The JSON printed under `heading` in the first-start output (a note may follow it)."""
    block = output.split(f"\n{heading}:\n", 1)[1]
    value, _ = json.JSONDecoder().raw_decode(block.lstrip())
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("mode", MODES)
async def test_the_stdio_entry_printed_on_first_start_connects_and_calls_a_tool(
    run: RunCli, mode: str
) -> None:
    first = run("init")
    assert first.exit_code == 0, first.output
    entry = printed_json(first.output, "Any stdio client")
    desktop = printed_json(first.output, "Claude Desktop (claude_desktop_config.json)")
    assert desktop == {"mcpServers": {"crewboard": entry}}
    command, args, env = entry["command"], entry["args"], entry["env"]
    assert isinstance(command, str)
    assert Path(command).is_absolute()
    assert isinstance(args, list)
    assert isinstance(env, dict)
    # Only the entry's environment (over the SDK's safe defaults) reaches the server, started
    # from another folder, as a desktop client would start it.
    params = StdioServerParameters(command=command, args=args, env=env, cwd="/")
    async with Client(params, mode=mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "list_projects" in names
        listed = body_of(await client.call_tool("list_projects", {}))
    assert DEMO_PROJECT_KEY in str(listed)


def _requests(*middle: bytes) -> bytes:
    """A legacy session as raw lines: initialize, initialized, `middle`, tools/list (id 2)."""
    lines = [
        json.dumps(initialize("raw")).encode(),
        json.dumps(rpc("notifications/initialized", id_=None)).encode(),
        *middle,
    ]
    listing = rpc("tools/list", id_=2)
    return b"\n".join([*lines, json.dumps(listing).encode()]) + b"\n"


def _answers(stdout: bytes) -> dict[object, dict[str, object]]:
    """The answers written so far: whole lines only (the server may be mid-way through one)."""
    whole = stdout[: stdout.rfind(b"\n") + 1]
    return {m["id"]: m for m in map(json.loads, whole.splitlines()) if "id" in m}


def _session(env: dict[str, str], requests: bytes, stdout: Path) -> tuple[int, bytes]:
    """Run `crewboard mcp` with its answers going to the file `stdout`, send `requests`, keep
    stdin open (the SDK drops answers still due when stdin closes) until tools/list (id 2)
    is answered, then close it: the exit status and stderr."""
    with stdout.open("wb") as out, tempfile.TemporaryFile() as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "crewboard", "mcp"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=err,
        )
        assert server.stdin is not None
        server.stdin.write(requests)
        server.stdin.flush()
        deadline = time.monotonic() + 60
        while 2 not in _answers(stdout.read_bytes()) and time.monotonic() < deadline:
            if server.poll() is not None:
                break
            time.sleep(0.05)
        server.stdin.close()
        status = server.wait(timeout=60)
        err.seek(0)
        return status, err.read()


def _listed_tools(answers: dict[object, dict[str, object]]) -> list[str]:
    assert sorted(answers) == [1, 2], answers.keys()
    listed = answers[2]["result"]
    assert isinstance(listed, dict)
    return [tool["name"] for tool in listed["tools"]]


def test_a_message_over_the_limit_is_skipped_with_a_warning_and_the_session_goes_on(
    database_url: URL, issued: tokens.IssuedToken
) -> None:
    too_long = b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"pad": "'
    too_long += b"x" * MAX_LINE + b'"}}'
    with subprocess.Popen(
        [sys.executable, "-m", "crewboard", "mcp"],
        env=_env(database_url, issued.secret),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        assert server.stderr is not None
        server.stdin.write(_requests(too_long))
        server.stdin.flush()
        lines = [server.stdout.readline(), server.stdout.readline()]  # the long ping gets none
        server.stdin.close()
        assert server.wait(timeout=60) == 0
        assert f"longer than {MAX_LINE} bytes".encode() in server.stderr.read()
    assert "list_tasks" in _listed_tools(_answers(b"".join(lines)))


def test_answers_written_to_a_regular_file_are_served_too(
    database_url: URL, issued: tokens.IssuedToken, tmp_path: Path
) -> None:
    """`crewboard mcp > answers.jsonl`: a file is no pipe, so the SDK's own I/O serves the
    session; the answers are the same."""
    answers = tmp_path / "answers.jsonl"
    status, stderr = _session(_env(database_url, issued.secret), _requests(), answers)
    assert status == 0, stderr
    assert "list_tasks" in _listed_tools(_answers(answers.read_bytes()))
