"""Signing in to the web app over real HTTP: sessions, CSRF, the throttle, the safety headers."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import pytest

from crewboard.config import Settings
from crewboard.domain.identity.records import User
from crewboard.http.throttle import LoginThrottle
from crewboard.services.identity.web_sessions import session_id_of
from crewboard.storage.database import Database
from crewboard.web.render import render_markdown
from tests.support.factories import PASSWORD, count_rows, make_project, make_user
from tests.support.server import free_port, running_server
from tests.support.web import csrf_of, post_form, sign_in


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com", is_owner=True)
    make_project(db, user, "CRW")
    return user


def login_token(client: httpx2.Client) -> str:
    found = re.search(r'name="login_token" value="([^"]+)"', client.get("/login").text)
    assert found is not None
    return found.group(1)


def test_a_page_sends_a_stranger_to_sign_in_and_back(url: str, owner: User) -> None:
    with httpx2.Client(base_url=url, follow_redirects=False) as client:
        answer = client.get("/settings/password?tag=auth")
        assert answer.status_code == 303
        assert answer.headers["location"] == "/login?next=/settings/password%3Ftag%3Dauth"
        form = client.get(answer.headers["location"])
        assert 'name="next" value="/settings/password?tag=auth"' in form.text


def test_signing_in_sets_a_strict_cookie_and_a_new_session_each_time(
    url: str, db: Database, owner: User
) -> None:
    client = sign_in(url, owner.email)
    first = client.cookies["crewboard_session"]
    cookie = next(
        c for c in client.get("/login").headers.get_list("set-cookie") if "crewboard_login" in c
    )
    assert "HttpOnly" in cookie
    again = client.post(
        "/login",
        data={"email": owner.email, "password": PASSWORD, "login_token": login_token(client)},
    )
    assert again.status_code == 303
    header = next(c for c in again.headers.get_list("set-cookie") if "crewboard_session" in c)
    assert "HttpOnly" in header
    assert "SameSite=lax" in header.replace("samesite", "SameSite")
    second = client.cookies["crewboard_session"]
    assert second != first  # renewed at sign-in: a planted id never becomes a live session
    assert count_rows(db, "web_sessions") == 1  # the old one ended with the new sign-in
    with db.engine.connect() as conn:
        ids = set(conn.exec_driver_sql("SELECT id FROM web_sessions").scalars())
    assert ids == {session_id_of(second)}  # only a hash is stored
    client.close()


def test_a_wrong_password_is_refused_without_saying_which_part_was_wrong(
    url: str, owner: User
) -> None:
    with httpx2.Client(base_url=url, follow_redirects=False) as client:
        for email in (owner.email, "nobody@example.com"):
            answer = client.post(
                "/login",
                data={
                    "email": email,
                    "password": "wrong password",
                    "login_token": login_token(client),
                },
            )
            assert answer.status_code == 401
            assert "The email or password is not right." in answer.text
            assert "crewboard_session" not in answer.headers.get("set-cookie", "")


def test_sign_in_attempts_are_throttled(url: str, owner: User) -> None:
    with httpx2.Client(base_url=url, follow_redirects=False) as client:
        for _ in range(LoginThrottle.LIMIT):
            data = {"email": owner.email, "password": "nope", "login_token": login_token(client)}
            assert client.post("/login", data=data).status_code == 401
        data = {"email": owner.email, "password": PASSWORD, "login_token": login_token(client)}
        blocked = client.post("/login", data=data)
        assert blocked.status_code == 429
        assert int(blocked.headers["retry-after"]) > 0


def test_a_sign_in_form_from_another_site_is_refused(url: str, owner: User) -> None:
    with httpx2.Client(base_url=url, follow_redirects=False) as client:
        data = {"email": owner.email, "password": PASSWORD, "login_token": login_token(client)}
        forged = client.post("/login", data=data, headers={"sec-fetch-site": "cross-site"})
        assert forged.status_code == 403
        client.cookies.clear()
        no_token = client.post("/login", data={"email": owner.email, "password": PASSWORD})
        assert no_token.status_code == 403


def test_a_form_post_needs_the_session_token_and_a_same_site_origin(
    url: str, db: Database, owner: User
) -> None:
    client = sign_in(url, owner.email)
    token = csrf_of(client)
    new = "a brand new password"
    data = {"current": PASSWORD, "new": new, "repeat": new}
    assert client.post("/settings/password", data=data).status_code == 403  # no token
    wrong = client.post("/settings/password", data={**data, "csrf": "x" * 43})
    assert wrong.status_code == 403
    cross = client.post(
        "/settings/password", data={**data, "csrf": token}, headers={"sec-fetch-site": "cross-site"}
    )
    assert cross.status_code == 403
    foreign = client.post(
        "/settings/password",
        data={**data, "csrf": token},
        headers={"origin": "https://evil.example", "sec-fetch-site": ""},
    )
    assert foreign.status_code == 403
    with httpx2.Client(base_url=url) as fresh:
        sign_in(url, owner.email).close()  # the old password still works: nothing changed
        assert fresh.get("/login").status_code == 200
    client.close()


def test_changing_the_password_ends_the_other_sessions(url: str, owner: User) -> None:
    here = sign_in(url, owner.email)
    elsewhere = sign_in(url, owner.email)
    new = "a brand new password"
    wrong = post_form(here, "/settings/password", {"current": "not it", "new": new, "repeat": new})
    assert wrong.status_code == 303
    assert "crewboard_flash" in wrong.headers.get("set-cookie", "")
    done = post_form(here, "/settings/password", {"current": PASSWORD, "new": new, "repeat": new})
    assert done.status_code == 303
    assert here.get("/settings/password").status_code == 200
    assert elsewhere.get("/settings/password").status_code == 303  # signed out
    sign_in(url, owner.email, new).close()
    here.close()
    elsewhere.close()


def test_signing_out_ends_the_session_and_needs_a_post(url: str, db: Database, owner: User) -> None:
    client = sign_in(url, owner.email)
    assert client.get("/logout").status_code == 405  # no state change on GET
    assert count_rows(db, "web_sessions") == 1
    out = post_form(client, "/logout", {})
    assert out.status_code == 303
    assert count_rows(db, "web_sessions") == 0
    assert client.get("/settings/password").status_code == 303
    client.close()


def test_every_page_carries_the_strict_security_headers(url: str, owner: User) -> None:
    client = sign_in(url, owner.email)
    for path in ("/login", "/settings/password", "/static/app.css"):
        headers = client.get(path).headers
        csp = headers["content-security-policy"]
        assert "script-src 'self'" in csp
        assert "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp
        assert headers["x-frame-options"] == "DENY"
        assert headers["x-content-type-options"] == "nosniff"
    client.close()


def test_markdown_keeps_formatting_and_drops_script_and_handlers() -> None:
    html = str(
        render_markdown(
            "**bold** [ok](https://example.com) [bad](javascript:alert(1))\n\n"
            "<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n![i](https://e.com/a.png)"
        )
    )
    assert "<strong>bold</strong>" in html
    assert 'href="https://example.com"' in html
    assert 'href="javascript' not in html  # left as text, never a link
    assert "<script>" not in html
    assert "onerror" not in html.replace("onerror=alert(1)&gt;", "")  # only as escaped text
    assert "<img" in html  # a markdown image stays (the page's CSP decides what loads)


def test_behind_https_the_session_cookie_is_secure(
    db: Database, owner: User, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, port=free_port(), base_url="https://crew.example.com")
    with running_server(settings, db) as base, httpx2.Client(base_url=base) as client:
        answer = client.post(
            "/login",
            data={"email": owner.email, "password": PASSWORD, "login_token": login_token(client)},
            # The sign-in cookie is Secure now, so the client keeps it off plain http: a
            # proxy ending TLS would pass it on, as this header does.
            headers={
                "sec-fetch-site": "same-origin",
                "cookie": f"crewboard_login={client.cookies['crewboard_login']}",
            },
            follow_redirects=False,
        )
        assert answer.status_code == 303
        header = next(c for c in answer.headers.get_list("set-cookie") if "crewboard_session" in c)
        assert "Secure" in header
        assert "HttpOnly" in header
