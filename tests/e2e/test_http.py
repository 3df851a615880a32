"""The HTTP app over a real socket: health, Host/Origin checks, bearer authentication."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.services import tokens
from crewboard.services.users import person_actor
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


@pytest.mark.parametrize("host", ["evil.example.net", "crew.example.com.evil.net", "10.0.0.1"])
def test_a_foreign_host_header_is_refused(server: str, host: str) -> None:
    response = httpx2.get(f"{server}/healthz", headers={"Host": host})
    assert response.status_code == 421
    assert response.json()["error"]["code"] == "PERMISSION_DENIED"


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1:9999", "crew.example.com", "[::1]:8787"])
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
