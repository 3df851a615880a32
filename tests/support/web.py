"""Helpers for web app tests over real HTTP: a signed-in client, form tokens."""

from __future__ import annotations

import re
from typing import Any

import httpx2

from tests.support.factories import PASSWORD

_TOKEN = re.compile(r'name="csrf" value="([^"]+)"')
_LOGIN = re.compile(r'name="login_token" value="([^"]+)"')


def sign_in(base: str, email: str, password: str = PASSWORD) -> httpx2.Client:
    """A client holding a live session of `email` (the caller closes it).

    It sends `Sec-Fetch-Site: same-origin` as a browser does for a page's own forms.
    """
    client = httpx2.Client(
        base_url=base,
        follow_redirects=False,
        headers={"sec-fetch-site": "same-origin"},
        timeout=30,  # not the default 5 s: a loaded 2-core machine can take longer
    )
    form = client.get("/login")
    token = _LOGIN.search(form.text)
    assert token is not None, form.text
    answer = client.post(
        "/login",
        data={"email": email, "password": password, "login_token": token.group(1), "next": "/"},
    )
    assert answer.status_code == 303, answer.text
    return client


def csrf_of(client: httpx2.Client, path: str = "/settings/password") -> str:
    """The session's form token, read off a page as a browser would."""
    page = client.get(path)
    found = _TOKEN.search(page.text)
    assert found is not None, page.text
    return found.group(1)


def post_form(client: httpx2.Client, path: str, data: dict[str, Any]) -> httpx2.Response:
    """POST a form with the session's token; answers the (unfollowed) response."""
    return client.post(path, data={"csrf": csrf_of(client), **data})
