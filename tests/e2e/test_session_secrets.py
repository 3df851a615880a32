"""A model provider's secrets never reach a reader of the project, on both databases.

For each shape a secret can leak in - a key file of two lines, a key the provider echoes
URL-encoded, JSON-escaped or repr-escaped, the base64 of a base-URL password in an echoed
`Authorization` header, a password in the base URL itself, a key in a URL's query string - the
loopback model server fails a turn that way; then one walk (`what_readers_see`) reads every
place a turn's error is shown - the start answer, get_spec_session and list_spec_sessions
through the MCP SDK client, the REST session routes, the web session page and its live
stream, the project's event rows, an export archive of the project - and no form of the
secret (raw, each line, percent-encoded, JSON- or repr-escaped, HTML-escaped, base64) may be
in any of them. A new place a reader sees is added to the walk once, for every shape.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, quote_plus

import httpx2
import pytest

from crewboard.contract.sessions import present
from crewboard.domain.identity.records import User
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import models
from crewboard.services.transfer.archive import export_projects
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.mcp_client import mcp_client
from tests.support.model_server import Echo, ModelServer, Recorded
from tests.support.secrets import every_form, leaks
from tests.support.server import free_port
from tests.support.sessions import configure_model
from tests.support.sessions_module import Serve
from tests.support.web import sign_in

pytestmark = pytest.mark.anyio

EMAIL = "alice@example.com"
S = "/api/v1/projects/CRW/sessions"
USER = "crew-user"
PASSWORD = "pa55-w0rd/with+odd=chars"
KEY_ENV = "CREWBOARD_TEST_LEAKY_KEY"


def _json_error(message: str) -> str:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}})


def _bearer(sent: Recorded) -> str:
    return sent.headers.get("authorization", "").removeprefix("Bearer ")


@dataclass(frozen=True)
class Shape:
    """One way a secret can reach a turn's error, and the secret to look for."""

    secret: str
    key: str | None = None  # read from the environment (or a file, `in_file`)
    in_file: bool = False
    password: bool = False  # the secret is the base URL's password
    unreachable: bool = False  # the base URL points where nothing listens
    echo: Callable[[Recorded], str] | None = None
    content_type: str = "application/json"


SHAPES = {
    "a key file of two lines": Shape(
        secret="sk-first-line-0a1b2c3d\nsk-second-line-4e5f6a7b",
        key="sk-first-line-0a1b2c3d\nsk-second-line-4e5f6a7b",
        in_file=True,
        echo=lambda sent: _json_error(f"bad key {_bearer(sent)!r}"),
    ),
    "a key echoed URL-encoded": Shape(
        secret="sk-url/enc+od=ed&k3y-0123",
        key="sk-url/enc+od=ed&k3y-0123",
        echo=lambda sent: _json_error(
            f"unknown key {quote(_bearer(sent), safe='')} ({quote_plus(_bearer(sent))})"
        ),
    ),
    "a key echoed JSON-escaped": Shape(
        secret='sk-js"on\\esc-0123456789',
        key='sk-js"on\\esc-0123456789',
        echo=lambda sent: f"upstream refused {json.dumps({'key': _bearer(sent)})}",
        content_type="text/plain",
    ),
    "a key echoed repr-escaped": Shape(
        secret="sk-re'pr\\esc-0123456789",
        key="sk-re'pr\\esc-0123456789",
        echo=lambda sent: f"bad header {_bearer(sent).encode()!r} from {_bearer(sent)!r}",
        content_type="text/plain",
    ),
    "the base64 of a base-URL password in an echoed Authorization header": Shape(
        secret=PASSWORD,
        password=True,
        echo=lambda sent: _json_error(f"Authorization: {sent.headers.get('authorization')}"),
    ),
    "a password in the base URL": Shape(secret=PASSWORD, password=True, unreachable=True),
    "a key in a URL's query string": Shape(
        secret="sk-query/k3y+=0123456789",
        key="sk-query/k3y+=0123456789",
        echo=lambda sent: _json_error(
            f"retry at https://gw.example{sent.path}?api_key={quote_plus(_bearer(sent))}"
            f"&token={quote(_bearer(sent), safe='')}"
        ),
    ),
}


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, EMAIL, is_owner=True)
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def secret(db: Database, owner: User) -> str:
    return tokens.issue_token(
        db, person_actor(owner), kind="personal", scopes=["read", "specs.write"]
    ).secret


def configure(
    db: Database, server: ModelServer, shape: Shape, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_env = key_file = None
    if shape.key is not None and shape.in_file:
        path = tmp_path / "model.key"
        path.write_text(shape.key + "\n", encoding="utf-8")
        key_file = str(path)
    elif shape.key is not None:
        monkeypatch.setenv(KEY_ENV, shape.key)
        key_env = KEY_ENV
    base_url = None
    if shape.password:
        port = free_port() if shape.unreachable else server.port
        base_url = f"http://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{port}/v1"
    configure_model(
        db, server, "openai", key_env=key_env, key_file=key_file, base_url=base_url,
        max_retries=0, timeout=5,
    )  # fmt: skip
    if shape.echo is not None:
        server.script(Echo(shape.echo, 401, shape.content_type))


async def what_readers_see(
    db: Database, base: str, secret: str, started: httpx2.Response, tmp_path: Path
) -> dict[str, str]:
    """Every place a reader of the project is shown a turn's error, by name: its text."""
    session_id = started.json()["sessionId"]
    seen = {"REST start answer": started.text}
    headers = {"Authorization": f"Bearer {secret}"}
    with httpx2.Client(base_url=base, headers=headers, timeout=30) as api:
        seen["REST get"] = api.get(f"{S}/{session_id}").text
        seen["REST list"] = api.get(S).text
        seen["REST list of failed"] = api.get(S, params={"status": "failed"}).text
    async with mcp_client(base, secret, "legacy", {"X-MCP-Toolsets": "specs"}) as client:
        for tool, arguments in [
            ("get_spec_session", {"sessionId": session_id}),
            ("list_spec_sessions", {}),
        ]:
            result = await client.call_tool(tool, {"projectId": "CRW", **arguments})
            seen[f"MCP {tool}"] = "\n".join(
                [getattr(part, "text", "") for part in result.content]
                + [json.dumps(result.structured_content)]
            )
    with closing(sign_in(base, EMAIL)) as browser:
        seen["web session page"] = browser.get(f"/p/CRW/sessions/{session_id}").text
        seen["web session list"] = browser.get("/p/CRW/sessions").text
        seen["web live reply stream"] = browser.get(f"/p/CRW/sessions/{session_id}/stream").text
    with db.engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT * FROM events").all()
    seen["event rows"] = "\n".join(repr(tuple(row)) for row in rows)
    archive = tmp_path / "export.zip"
    export_projects(db, ["CRW"], archive)
    with zipfile.ZipFile(archive) as opened:
        for name in opened.namelist():
            seen[f"export {name}"] = opened.read(name).decode("utf-8", "replace")
    return seen


@pytest.mark.parametrize("shape_name", list(SHAPES))
async def test_no_form_of_a_provider_secret_reaches_any_reader_of_a_failed_turn(
    db: Database,
    serve: Serve,
    *,
    secret: str,
    model_server: ModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    shape_name: str,
) -> None:
    shape = SHAPES[shape_name]
    configure(db, model_server, shape, tmp_path, monkeypatch)
    with serve() as base:
        started = httpx2.post(
            f"{base}{S}", json={"mode": "generate", "prompt": "Invoices as CSV, please."},
            headers={"Authorization": f"Bearer {secret}"}, timeout=60,
        )  # fmt: skip
        assert started.status_code == 201, started.text
        assert started.json()["firstTurnError"]["message"]
        seen = await what_readers_see(db, base, secret, started, tmp_path)
    if shape.echo is not None and not shape.in_file:
        assert model_server.requests, "the provider was asked, and echoed the secret"
    forms = every_form(shape.secret, user=USER if shape.password else None)
    leaked = {place: leaks(forms, text) for place, text in seen.items() if leaks(forms, text)}
    assert not leaked
    code = "no_key" if shape.in_file else "provider_failed"  # the walk read the failure
    assert all(code in seen[place] for place in ("REST get", "MCP get_spec_session", "event rows"))
    assert any(code in text for place, text in seen.items() if place.startswith("export "))


def test_a_base_url_is_shown_to_the_owner_without_its_password(
    db: Database, serve: Serve, owner: User, model_server: ModelServer
) -> None:
    url = f"http://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{model_server.port}/v1"
    configure_model(db, model_server, "openai", base_url=url)
    listed = present.config_view(models.list_config(db))
    with serve() as base, closing(sign_in(base, EMAIL)) as browser:
        page = browser.get("/settings/models").text
    forms = every_form(PASSWORD, user=USER)
    assert not leaks(forms, json.dumps(listed))
    assert not leaks(forms, page)
    assert f"{USER}:" in listed["providers"][0]["baseUrl"]
    assert f"127.0.0.1:{model_server.port}/v1" in page
