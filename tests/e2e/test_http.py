"""The HTTP app over a real socket: health, Host/Origin checks, bearer authentication."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.services.identity import tokens
from crewboard.services.identity.users import person_actor
from crewboard.storage.database import Database
from tests.support.factories import make_user
from tests.support.server import free_port, running_server


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path,
        port=free_port(),
        allowed_hosts=["crew.example.com"],
        allowed_origins=["https://crew.example.com"],
    )


@pytest.fixture
def server(settings: Settings, db: Database) -> Iterator[str]:
    with running_server(settings, db) as url:
        yield url


def test_healthz_answers_ok_and_names_the_database(server: str, db: Database) -> None:
    response = httpx2.get(f"{server}/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["database"] == db.dialect


@pytest.mark.parametrize(
    "host",
    [
        "evil.example.net",
        "crew.example.com.evil.net",
        "10.0.0.1",
        "[::1]evil.example.net",
        "[::1].evil.example.net",
        "[::1]:8787@evil.example.net",
        "localhost:99999",
        "127.0.0.1:http",
        "localhost.evil.example.net",
        "[::2]",
        "",
    ],
)
def test_a_foreign_host_header_is_refused(server: str, host: str) -> None:
    response = httpx2.get(f"{server}/healthz", headers={"Host": host})
    assert response.status_code == 421
    assert response.json()["error"]["code"] == "PERMISSION_DENIED"


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "127.0.0.1:9999",
        "crew.example.com",
        "[::1]:8787",
        "[0:0:0:0:0:0:0:1]",
        "LOCALHOST",
    ],
)
def test_loopback_and_configured_hosts_are_accepted(server: str, host: str) -> None:
    assert httpx2.get(f"{server}/healthz", headers={"Host": host}).status_code == 200


def test_a_foreign_origin_is_refused_and_a_configured_one_accepted(
    server: str, settings: Settings
) -> None:
    refused = httpx2.get(f"{server}/healthz", headers={"Origin": "https://evil.example.net"})
    assert refused.status_code == 403
    assert (
        httpx2.get(f"{server}/healthz", headers={"Origin": "https://crew.example.com"}).status_code
        == 200
    )
    own = f"http://127.0.0.1:{settings.port}"
    assert httpx2.get(f"{server}/healthz", headers={"Origin": own}).status_code == 200


def test_bearer_token_identifies_the_caller(server: str, db: Database) -> None:
    user = make_user(db, "ada@example.com")
    issued = tokens.issue_token(db, person_actor(user), kind="personal", scopes=["read"])
    response = httpx2.get(
        f"{server}/api/v1/me", headers={"Authorization": f"Bearer {issued.secret}"}
    )
    assert response.status_code == 200
    assert response.json()["userId"] == user.id
    assert response.json()["token"]["id"] == issued.token.id
    assert issued.secret not in response.text


@pytest.mark.parametrize("header", [None, "Basic abc", "Bearer", "Bearer cb_notatoken"])
def test_missing_or_bad_credentials_get_401_with_a_challenge(
    server: str, header: str | None
) -> None:
    headers = {"Authorization": header} if header is not None else {}
    response = httpx2.get(f"{server}/api/v1/me", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"


def test_revoked_token_is_refused_on_the_next_request(server: str, db: Database) -> None:
    user = make_user(db, "ada@example.com")
    issued = tokens.issue_token(db, person_actor(user), kind="personal", scopes=["read"])
    headers = {"Authorization": f"Bearer {issued.secret}"}
    assert httpx2.get(f"{server}/api/v1/me", headers=headers).status_code == 200
    tokens.revoke_token(db, issued.token.id)
    assert httpx2.get(f"{server}/api/v1/me", headers=headers).status_code == 401


@pytest.mark.parametrize(
    "origin",
    ["http://localhost:6274", "http://127.0.0.1:3000", "http://[::1]:5173", "https://localhost"],
)
def test_a_local_page_on_any_port_is_accepted_while_the_server_listens_on_loopback(
    server: str, origin: str
) -> None:
    assert httpx2.get(f"{server}/healthz", headers={"Origin": origin}).status_code == 200


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost.evil.example.net",
        "http://[::1]evil.example.net:80",
        "http://127.0.0.1.evil.example.net:3000",
        "http://user@localhost:3000",
        "file://localhost",
        "null",
    ],
)
def test_an_origin_that_only_looks_local_is_refused(server: str, origin: str) -> None:
    assert httpx2.get(f"{server}/healthz", headers={"Origin": origin}).status_code == 403


def test_local_origins_are_foreign_when_the_server_listens_elsewhere_than_loopback(
    db: Database, tmp_path: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        host="127.0.0.2",  # not one of the loopback names: stands for a LAN or public address
        port=free_port(),
        base_url="https://crew.example.com",
    )
    with running_server(settings, db):
        url = f"http://127.0.0.2:{settings.port}/healthz"
        assert httpx2.get(url, headers={"Origin": "http://localhost:6274"}).status_code == 403
        assert httpx2.get(url, headers={"Origin": "https://crew.example.com"}).status_code == 200
