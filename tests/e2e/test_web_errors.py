"""Error pages people see: a styled 404, 403 and 500 with a way back, and a favicon."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.domain.identity.records import User
from crewboard.services.screens import board as board_pages
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.server import free_port, running_server
from tests.support.web import sign_in

PAGE = {"accept": "text/html,application/xhtml+xml"}


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com", is_owner=True)
    make_project(db, user, "CRW")
    return user


def test_an_unknown_page_is_a_styled_404_with_the_header_and_a_way_back(
    url: str, owner: User
) -> None:
    client = sign_in(url, owner.email)
    missing = client.get("/no/such/page", headers=PAGE)
    client.close()
    assert missing.status_code == 404
    assert "<h1>Page not found</h1>" in missing.text
    assert 'href="/inbox"' in missing.text
    assert 'href="/p/CRW/board"' in missing.text
    assert 'aria-label="Main"' in missing.text  # the app's header
    assert 'rel="icon"' in missing.text


def test_a_stranger_gets_the_404_as_a_card_pointing_at_sign_in(url: str, owner: User) -> None:
    del owner
    missing = httpx2.get(f"{url}/no/such/page", headers=PAGE)
    assert missing.status_code == 404
    assert "Page not found" in missing.text
    assert 'href="/login"' in missing.text
    assert 'aria-label="Main"' not in missing.text


def test_machine_doors_keep_their_own_not_found(url: str, owner: User) -> None:
    del owner
    api = httpx2.get(f"{url}/api/v1/no-such-route", headers=PAGE)
    assert api.status_code == 404
    assert api.json()["error"]["code"] == "NOT_FOUND"
    static = httpx2.get(f"{url}/static/missing.css", headers=PAGE)
    assert static.status_code == 404
    assert "<html" not in static.text
    script = httpx2.get(f"{url}/no/such/page", headers={"accept": "application/json"})
    assert script.status_code == 404
    assert "<html" not in script.text


def test_a_failing_page_is_a_styled_500_and_the_api_keeps_its_shape(
    url: str, owner: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the board broke")

    monkeypatch.setattr(board_pages, "board_columns", broken)
    client = sign_in(url, owner.email)
    failed = client.get("/p/CRW/board", headers=PAGE)
    client.close()
    assert failed.status_code == 500
    assert "Something went wrong" in failed.text
    assert "the board broke" not in failed.text  # no detail of the failure
    assert 'href="/inbox"' in failed.text


def test_the_favicon_is_served_for_the_browsers_first_request(url: str) -> None:
    icon = httpx2.get(f"{url}/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.startswith("<svg")


def test_a_form_from_elsewhere_gets_a_styled_403(url: str, owner: User) -> None:
    client = sign_in(url, owner.email)
    refused = client.post("/settings/password", data={"current": "x"}, headers=PAGE)
    client.close()
    assert refused.status_code == 403
    assert "Form not accepted" in refused.text
    assert "reload the page" in refused.text


def test_every_answer_names_the_node_errors_included(
    db: Database, owner: User, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """X-Crewboard-Node and the strict headers on a 500 from the exception handler (outside
    the app's middleware), a 404, a 405 and a 503 as on a 200."""

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the board broke")

    monkeypatch.setattr(board_pages, "board_columns", broken)
    settings = Settings(data_dir=tmp_path, port=free_port(), node_name="node-7")
    with running_server(settings, db) as base:
        client = sign_in(base, owner.email)
        answers = {
            "404 page": client.get("/no/such/page", headers=PAGE),
            "404 api": client.get("/api/v1/no-such-route"),
            "405 api": client.delete("/api/v1/me"),
            "200 ready": client.get("/readyz"),
            # Last: the server closes the connection after a failure it re-raises to log.
            "500 page": client.get("/p/CRW/board", headers=PAGE),
        }
        client.close()
    assert answers["500 page"].status_code == 500
    for name, answer in answers.items():
        assert answer.headers.get("x-crewboard-node") == "node-7", name
        assert answer.headers.get("x-content-type-options") == "nosniff", name
        assert "frame-ancestors 'none'" in answer.headers.get("content-security-policy", ""), name
