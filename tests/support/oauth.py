"""OAuth 2.1 from an MCP client's side, over real HTTP, for the protocol tests.

A served app on a database of one backend (`served_app`), and the client's steps: register,
authorize (with PKCE), the person's approval (through the service: the consent page is the web
app's and not what these tests probe), the token endpoint, revocation, and calls on /mcp.

    with served_app(db, clock, tmp, owner) as app:
        connection = connect(app, scopes=["read", "tasks.manage"])
        mcp_post(app.url, connection.access_token, rpc("tools/list", {}))
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from sqlalchemy.engine import URL

from crewboard.config import Settings
from crewboard.contract.catalogue import Catalogue
from crewboard.domain.clock import ManualClock
from crewboard.domain.identity.records import User
from crewboard.services.identity.users import person_actor
from crewboard.services.oauth import grants
from crewboard.storage.database import Database
from tests.support.databases import PostgresDatabases, SqliteDatabases
from tests.support.mcp_client import RAW_HEADERS
from tests.support.server import free_port, running_server

CALLBACK = "http://127.0.0.1:9999/callback"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # the server's clock, far from the wall clock
TIMEOUT = 30


@dataclass(frozen=True)
class App:
    """A served app and what its tests reach behind it."""

    url: str  # where to connect (always http://127.0.0.1:PORT)
    settings: Settings
    db: Database
    clock: ManualClock
    owner: User

    @property
    def issuer(self) -> str:
        return self.settings.public_url

    @property
    def resource(self) -> str:
        return f"{self.settings.public_url}/mcp"


@dataclass(frozen=True)
class Pkce:
    verifier: str
    challenge: str


@dataclass(frozen=True)
class Connection:
    """A client that went through the whole flow: its id and the tokens it holds."""

    client_id: str
    grant_id: str
    access_token: str
    refresh_token: str
    redirect_uri: str
    scope: str


def pkce() -> Pkce:
    """A fresh RFC 7636 S256 pair."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return Pkce(verifier, base64.urlsafe_b64encode(digest).decode().rstrip("="))


# --- a served app on a database of the module's own -------------------------------------


@contextmanager
def module_database(backend: str, request: pytest.FixtureRequest) -> Iterator[Database]:
    """A migrated database of `backend` for a whole module, on a clock the tests may move."""
    databases: SqliteDatabases | PostgresDatabases = request.getfixturevalue(
        "sqlite_databases" if backend == "sqlite" else "postgres_databases"
    )
    url: URL = databases.new_migrated()
    db = Database(url, clock=ManualClock(START))
    try:
        yield db
    finally:
        db.dispose()
        if isinstance(databases, PostgresDatabases):
            databases.drop(url)


@contextmanager
def served_app(
    db: Database,
    owner: User,
    data_dir: Path,
    *,
    catalogue: Catalogue | None = None,
    **overrides: Any,
) -> Iterator[App]:
    """The whole app on `db`, served over real HTTP with these settings."""
    assert isinstance(db.clock, ManualClock)
    settings = Settings(data_dir=data_dir, port=free_port(), **overrides)
    with running_server(settings, db, catalogue=catalogue) as base:
        yield App(url=base, settings=settings, db=db, clock=db.clock, owner=owner)


# --- the client's steps -----------------------------------------------------------------


def register(url: str, **metadata: Any) -> httpx2.Response:
    """POST /oauth/register (RFC 7591); a public loopback client unless told otherwise."""
    body = {
        "client_name": "Test client",
        "redirect_uris": [CALLBACK],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    return httpx2.post(f"{url}/oauth/register", json=body, timeout=TIMEOUT)


def register_public(url: str, redirect_uris: list[str] | None = None) -> str:
    """A registered public client's id."""
    response = register(url, redirect_uris=redirect_uris or [CALLBACK])
    assert response.status_code == 201, response.text
    return str(response.json()["client_id"])


def authorize(
    url: str,
    client_id: str,
    challenge: str | None,
    *,
    redirect_uri: str | None = CALLBACK,
    **extra: str,
) -> httpx2.Response:
    """GET /oauth/authorize as a person's browser would, not following the redirect."""
    params = {"response_type": "code", "client_id": client_id, "state": "st-1", **extra}
    if challenge is not None:
        params.setdefault("code_challenge", challenge)
        params.setdefault("code_challenge_method", "S256")
    if redirect_uri is not None:
        params["redirect_uri"] = redirect_uri
    return httpx2.get(
        f"{url}/oauth/authorize", params=params, follow_redirects=False, timeout=TIMEOUT
    )


def query_of(location: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def request_id_of(app: App, response: httpx2.Response) -> str:
    """The pending request a successful authorize sends the person to consent to."""
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    assert location.startswith(f"{app.issuer}/oauth/consent?"), location
    return query_of(location)["request"]


def approve(app: App, request_id: str, scopes: list[str]) -> tuple[str, dict[str, str]]:
    """The owner approves (the service the consent page calls); the grant id and the query
    of the redirect back to the app (code, state, iss)."""
    grant, redirect = grants.approve(
        app.db, person_actor(app.owner), request_id, issuer=app.issuer, scopes=scopes
    )
    return grant.id, query_of(redirect)


def token(url: str, **form: str) -> httpx2.Response:
    return httpx2.post(f"{url}/oauth/token", data=form, timeout=TIMEOUT)


def exchange(
    url: str,
    client_id: str,
    code: str,
    verifier: str,
    redirect_uri: str = CALLBACK,
    **extra: str,
) -> httpx2.Response:
    """The code for tokens at the token endpoint."""
    return token(
        url,
        grant_type="authorization_code",
        client_id=client_id,
        code=code,
        code_verifier=verifier,
        redirect_uri=redirect_uri,
        **extra,
    )


def refresh(url: str, client_id: str, refresh_token: str, **extra: str) -> httpx2.Response:
    return token(
        url,
        grant_type="refresh_token",
        client_id=client_id,
        refresh_token=refresh_token,
        **extra,
    )


def revoke(url: str, client_id: str, secret: str, **extra: str) -> httpx2.Response:
    """POST /oauth/revoke (RFC 7009)."""
    form = {"client_id": client_id, "token": secret, **extra}
    return httpx2.post(f"{url}/oauth/revoke", data=form, timeout=TIMEOUT)


def code_for(
    app: App,
    client_id: str,
    scopes: list[str],
    *,
    redirect_uri: str = CALLBACK,
) -> tuple[str, str, Pkce]:
    """Authorize and approve: the grant id, the code and the PKCE pair it was bound to."""
    pair = pkce()
    response = authorize(
        app.url, client_id, pair.challenge, redirect_uri=redirect_uri, scope=" ".join(scopes)
    )
    grant_id, back = approve(app, request_id_of(app, response), scopes)
    return grant_id, back["code"], pair


def connect(
    app: App,
    scopes: list[str] | None = None,
    *,
    client_id: str | None = None,
    redirect_uri: str = CALLBACK,
) -> Connection:
    """The whole flow for a new public client (or `client_id`): register, authorize, the
    owner's approval, the code for tokens."""
    chosen = scopes or ["read", "tasks.manage"]
    client = client_id or register_public(app.url)
    grant_id, code, pair = code_for(app, client, chosen, redirect_uri=redirect_uri)
    answer = exchange(app.url, client, code, pair.verifier, redirect_uri)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    return Connection(
        client_id=client,
        grant_id=grant_id,
        access_token=body["access_token"],
        refresh_token=body["refresh_token"],
        redirect_uri=redirect_uri,
        scope=body["scope"],
    )


def error_of(response: httpx2.Response) -> str:
    """The OAuth error code of a JSON error answer."""
    return str(response.json()["error"])


# --- the resource ------------------------------------------------------------------------


def mcp_post(
    url: str, access_token: str | None, body: Any, version: str = "2025-03-26"
) -> httpx2.Response:
    """A raw POST to /mcp with this bearer token and protocol version."""
    headers = {**RAW_HEADERS, "MCP-Protocol-Version": version}
    if access_token is not None:
        headers["Authorization"] = f"Bearer {access_token}"
    return httpx2.post(f"{url}/mcp", content=json.dumps(body), headers=headers, timeout=TIMEOUT)


def works_on_mcp(url: str, access_token: str) -> bool:
    """Whether the token is taken on /mcp (tools/list answers 200), else it must be 401."""
    response = mcp_post(url, access_token, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code in (200, 401), response.text
    return response.status_code == 200


def rows(db: Database, sql: str, **params: Any) -> list[dict[str, Any]]:
    """Rows of a plain SELECT (named parameters), to look at what is stored."""
    with db.engine.connect() as conn:
        found = conn.exec_driver_sql(sql, params) if params else conn.exec_driver_sql(sql)
        return [dict(row._mapping) for row in found]
