"""`crewboard mcp --code FOLDER --code-project KEY`: with no server running, the stdio process
is also the person's code bridge, so a brownfield session started over stdio reads the code.

The real SDK stdio client starts the real command on the test's database; the loopback model
server calls the code tools, and what reached the model is read from its recorded requests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from sqlalchemy import text
from sqlalchemy.engine import URL

from crewboard.domain.identity.access import Role
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.cli import RunCli
from tests.support.factories import grant, make_project, make_user
from tests.support.mcp_client import body_of
from tests.support.model_server import ModelServer, Reply, ToolUse
from tests.support.sessions import configure_model, questions

pytestmark = pytest.mark.anyio

SRC = str(Path(__file__).resolve().parents[2] / "src")  # this checkout's code, not another's
SECRET_WORDS = "sk-live-never-leaves-this-machine"
ON = {"projectId": "CRW", "workspaceId": None}
BROWNFIELD = {"mode": "generate", "workflowId": "crewboard-brownfield-v1"}
READS = (
    ("read_file", {"path": "src/cart.py", "startLine": 1, "endLine": 2}),
    ("read_file", {"path": ".env"}),
)


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "alice@example.com", is_owner=True)
    make_project(db, user, "CRW")
    return user


def secret_of(db: Database, owner: User, scopes: list[str]) -> str:
    return tokens.issue_token(db, person_actor(owner), kind="personal", scopes=scopes).secret


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "cart.py").write_text("def add(item):\n    return [item]\n\nTOTAL = 0\n")
    (root / ".env").write_text(f"STRIPE_KEY={SECRET_WORDS}\n")
    return root


def env_of(database_url: URL, token: str, **settings: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": SRC,
        "CREWBOARD_DATABASE_URL": database_url.render_as_string(hide_password=False),
        "CREWBOARD_TOKEN": token,
        **{f"CREWBOARD_{name.upper()}": value for name, value in settings.items()},
    }


def mcp_code(database_url: URL, token: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """`crewboard mcp ARGS…` with no client on stdin: for the refusals before serving."""
    return subprocess.run(
        [sys.executable, "-m", "crewboard", "mcp", *args],
        env=env_of(database_url, token),
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )


def bridges(db: Database) -> list[dict[str, Any]]:
    rows = db.read(
        lambda uow: uow.conn.execute(text("SELECT client, closed_at FROM code_bridges")).all()
    )
    return [dict(row._mapping) for row in rows]


def tool_answers(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results one Anthropic request carried, as JSON, in order."""
    found = []
    for message in body["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                inner = block["content"]
                found.append(json.loads(inner if isinstance(inner, str) else inner[0]["text"]))
    return found


async def test_a_brownfield_session_started_over_stdio_reads_the_folder_mcp_offers(
    database_url: URL,
    db: Database,
    *,
    owner: User,
    repo: Path,
    model_server: ModelServer,
    tmp_path: Path,
) -> None:
    configure_model(db, model_server, "anthropic")
    model_server.script(
        ToolUse(READS, text="Let me read the cart. "),
        Reply(questions("Should the wishlist hold carts too?")),
    )
    secret = secret_of(db, owner, ["read", "specs.write"])
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "crewboard", "mcp", "--toolsets", "specs", "--code", str(repo),
              "--code-project", "CRW"],
        env=env_of(database_url, secret, session_first_turn_wait="60"),
    )  # fmt: skip
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as stderr:
        async with Client(stdio_client(params, errlog=stderr), mode="legacy") as client:
            answer = body_of(
                await client.call_tool(
                    "start_spec_session", {**ON, **BROWNFIELD, "prompt": "Add a wishlist."}
                )
            )
            # The bridge was registered before serving: live from the first call on.
            [live] = bridges(db)
            assert live["client"] == "crewboard mcp"
            assert live["closed_at"] is None
    assert answer["pendingAction"] == "mcq_form_pending", answer  # the reply, within the wait
    assert "firstTurnError" not in answer
    assert not answer.get("warnings")
    assert len(model_server.requests) == 2
    read, refused = tool_answers(model_server.requests[-1].body)
    assert read["text"] == "def add(item):\n    return [item]"
    assert (read["startLine"], read["endLine"], read["totalLines"]) == (1, 2, 4)
    assert refused["error"]["code"] == "secret"
    assert SECRET_WORDS not in json.dumps([r.body for r in model_server.requests])
    # The client is gone and the process with it: the bridge was closed on the way out.
    [closed] = bridges(db)
    assert closed["closed_at"] is not None
    logged = errlog.read_text()
    assert "code bridge: read_file src/cart.py lines 1-2" in logged
    assert "code bridge: read_file .env: refused (secret)" in logged


def test_code_needs_code_project_and_the_other_way_round(run: RunCli, repo: Path) -> None:
    alone = run("mcp", "--code", str(repo))
    assert alone.exit_code == 2
    assert "--code needs --code-project KEY" in alone.output
    orphan = run("mcp", "--code-project", "CRW")
    assert orphan.exit_code == 2
    assert "--code-project is for --code FOLDER" in orphan.output
    missing = run("mcp", "--code", str(repo / "nope"), "--code-project", "CRW")
    assert missing.exit_code == 1
    assert f"--code {str(repo / 'nope')!r} does not exist" in missing.output
    a_file = run("mcp", "--code", str(repo / "src" / "cart.py"), "--code-project", "CRW")
    assert a_file.exit_code == 1
    assert "is a file, not a folder" in a_file.output


def test_a_token_without_the_write_role_or_an_unknown_project_is_refused_before_serving(
    database_url: URL, db: Database, owner: User, repo: Path
) -> None:
    read_only = secret_of(db, owner, ["read"])
    refused = mcp_code(database_url, read_only, "--code", str(repo), "--code-project", "CRW")
    assert refused.returncode == 1
    assert refused.stdout == b""  # nothing served
    assert b"needs the specs.write scope; this token has read" in refused.stderr
    assert b"needs the write role on the project and a token with" in refused.stderr
    reader = make_user(db, "bo@example.com")
    grant(db, owner, "CRW", reader, Role.READ)
    viewer = secret_of(db, reader, ["read", "specs.write"])
    refused = mcp_code(database_url, viewer, "--code", str(repo), "--code-project", "CRW")
    assert refused.returncode == 1
    assert b"needs the write role on the project; you have read" in refused.stderr
    writer = secret_of(db, owner, ["read", "specs.write"])
    unknown = mcp_code(database_url, writer, "--code", str(repo), "--code-project", "NOPE")
    assert unknown.returncode == 1
    assert b"--code-project NOPE" in unknown.stderr
    assert bridges(db) == []
