"""The OAuth pages over real HTTP: the consent page an app sends a person to, and
Settings → Connected apps."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from urllib.parse import parse_qs, quote, urlsplit

import httpx2
import pytest

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import User
from crewboard.domain.oauth import OAuthClient
from crewboard.services.identity.users import person_actor
from crewboard.services.oauth import grants
from crewboard.services.oauth.clients import ClientPolicy, register_client
from crewboard.storage.database import Database
from tests.support.factories import PASSWORD, grant, make_project, make_user
from tests.support.web import csrf_of, post_form, sign_in

CALLBACK = "http://127.0.0.1:9999/callback"
CONSENT = "/oauth/consent"
CONNECTIONS = "/settings/connections"
ERROR = re.compile(r'<p class="flash error" role="alert" id="consent-error">([^<]*)</p>')


@pytest.fixture
def owner(db: Database) -> User:
    user = make_user(db, "owner@example.com")
    make_project(db, user, "CRW")
    return user


@pytest.fixture
def client(url: str, owner: User) -> Iterator[httpx2.Client]:
    with closing(sign_in(url, owner.email)) as signed_in:
        yield signed_in


def start(db: Database, url: str, scopes: tuple[str, ...] = ("read", "tasks.manage")) -> str:
    """A self-registered app asks to connect; the id of its pending request."""
    app = register_client(
        db,
        ClientPolicy(),
        {
            "client_name": "Test app",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
        },
    )
    return pending_for(db, url, app, scopes)


def pending_for(db: Database, url: str, app: OAuthClient, scopes: tuple[str, ...]) -> str:
    pending = grants.start_authorization(
        db,
        app,
        redirect_uri=app.redirect_uris[0],
        redirect_explicit=True,
        scopes=list(scopes),
        resource=f"{url}/mcp",
        code_challenge="x" * 43,
        state="st",
    )
    return pending.id


def answer(client: httpx2.Client, request_id: str, **fields: object) -> httpx2.Response:
    """Post the consent form as its page does (approve unless told otherwise)."""
    data: dict[str, object] = {"request": request_id, "decision": "approve", **fields}
    return post_form(client, CONSENT, data)


def back_at_app(response: httpx2.Response) -> dict[str, list[str]]:
    """The query of the 303 that sends the person back to the app."""
    assert response.status_code == 303, response.text
    assert response.headers["cache-control"] == "no-store"
    location = response.headers["location"]
    assert location.startswith(CALLBACK + "?"), location
    return parse_qs(urlsplit(location).query)


def connections_of(db: Database, user: User) -> list[grants.Grant]:
    return grants.list_connections(db, person_actor(user))


def selected(page: str, select_id: str) -> str | None:
    """The value of the option a select shows as chosen (None: its first one)."""
    block = re.search(rf'<select id="{select_id}".*?</select>', page, re.S)
    assert block is not None, page
    chosen = re.search(r'<option value="([^"]*)" selected>', block.group())
    return chosen.group(1) if chosen else None


# ---------------------------------------------------------------- the consent page


def test_consent_sends_a_person_not_signed_in_to_sign_in_and_back_to_the_request(
    db: Database, url: str, owner: User
) -> None:
    request_id = start(db, url)
    wanted = f"{CONSENT}?request={request_id}"
    with httpx2.Client(
        base_url=url, follow_redirects=False, headers={"sec-fetch-site": "same-origin"}
    ) as browser:
        away = browser.get(wanted)
        assert away.status_code == 303
        assert away.headers["location"] == f"/login?next={quote(wanted)}"
        login = browser.get(away.headers["location"])
        assert f'name="next" value="{html.escape(wanted)}"' in login.text
        token = re.search(r'name="login_token" value="([^"]+)"', login.text)
        assert token is not None
        signed = browser.post(
            "/login",
            data={
                "email": owner.email,
                "password": PASSWORD,
                "login_token": token.group(1),
                "next": wanted,
            },
        )
        assert signed.status_code == 303
        assert signed.headers["location"] == wanted
        page = browser.get(wanted)
        assert page.status_code == 200
        assert "Test app" in page.text


def test_sign_in_never_sends_a_person_on_to_another_site(url: str, owner: User) -> None:
    with httpx2.Client(base_url=url, follow_redirects=False) as browser:
        for hostile in ("//evil.example/oauth/consent", "https://evil.example/x"):
            login = browser.get("/login", params={"next": hostile})
            assert 'name="next" value="/"' in login.text


def test_consent_page_names_the_app_where_it_returns_and_the_scopes_asked(
    db: Database, url: str, client: httpx2.Client
) -> None:
    request_id = start(db, url)
    page = client.get(CONSENT, params={"request": request_id})
    assert page.status_code == 200
    assert "<h1>Connect Test app to Crewboard?</h1>" in page.text
    assert "<strong><code>127.0.0.1</code></strong>: an app running on this computer" in page.text
    assert "registered itself" in page.text
    assert 'name="scopes" value="tasks.manage" checked' in page.text
    assert 'value="read" checked disabled' in page.text  # reading is always on
    assert 'value="projects.admin"' not in page.text  # not asked for, not offered
    assert 'name="request" value="' + request_id + '"' in page.text
    assert '<option value="">All my projects</option>' in page.text
    assert '<option value="CRW">CRW · Project CRW</option>' in page.text
    for role in Role:
        assert f'<option value="{role}">At most {role}</option>' in page.text
    assert 'name="decision" value="approve"' in page.text
    assert 'name="decision" value="deny"' in page.text


def test_consent_page_and_its_answers_are_never_framed_nor_cached(
    db: Database, url: str, client: httpx2.Client
) -> None:
    request_id = start(db, url)
    shown = client.get(CONSENT, params={"request": request_id})
    refused = answer(client, request_id, scopes=["projects.admin"])
    for response in (shown, refused):
        policy = response.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy
        assert "script-src 'self';" in policy  # the rest of the strict policy stays
        # The form's answer redirects to the app: the app's origin (only) is a form target.
        assert "form-action 'self' http://127.0.0.1:9999;" in policy
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["cache-control"] == "no-store"
    approved = answer(client, request_id)
    assert approved.headers["cache-control"] == "no-store"
    assert approved.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in approved.headers["content-security-policy"]


def test_approving_a_subset_sends_the_person_back_with_a_code_state_and_issuer(
    db: Database, url: str, client: httpx2.Client, owner: User
) -> None:
    request_id = start(db, url)
    query = back_at_app(answer(client, request_id, project="CRW", role="read"))
    assert query["code"][0].startswith("cbc_")
    assert query["state"] == ["st"]
    assert query["iss"] == [url]
    [made] = connections_of(db, owner)
    assert made.scopes == frozenset({Scope.READ})  # tasks.manage was left unticked
    assert made.role is Role.READ
    assert made.project_id is not None
    assert made.client_name == "Test app"


def test_approving_every_scope_asked_on_all_projects_grants_them_uncapped(
    db: Database, url: str, client: httpx2.Client, owner: User
) -> None:
    request_id = start(db, url)
    back_at_app(answer(client, request_id, scopes=["tasks.manage"], project="", role=""))
    [made] = connections_of(db, owner)
    assert made.scopes == frozenset({Scope.READ, Scope.TASKS_MANAGE})
    assert (made.project_id, made.role) == (None, None)


def test_denying_sends_the_person_back_with_access_denied_and_grants_nothing(
    db: Database, url: str, client: httpx2.Client, owner: User
) -> None:
    request_id = start(db, url)
    query = back_at_app(answer(client, request_id, decision="deny"))
    assert query["error"] == ["access_denied"]
    assert query["state"] == ["st"]
    assert query["iss"] == [url]
    assert "code" not in query
    assert connections_of(db, owner) == []


def test_a_second_answer_to_the_same_request_shows_the_ended_page(
    db: Database, url: str, client: httpx2.Client, owner: User
) -> None:
    request_id = start(db, url)
    back_at_app(answer(client, request_id))
    for again in (
        answer(client, request_id),
        answer(client, request_id, decision="deny"),
        client.get(CONSENT, params={"request": request_id}),
    ):
        assert again.status_code == 404
        assert "<h1>This connection request has ended</h1>" in again.text
        assert "start connecting to Crewboard again" in again.text
        assert again.headers["cache-control"] == "no-store"
    assert len(connections_of(db, owner)) == 1


def test_an_unknown_request_shows_the_ended_page(client: httpx2.Client) -> None:
    for request_id in ("nope", "x" * 500, ""):
        page = client.get(CONSENT, params={"request": request_id})
        assert page.status_code == 404
        assert "This connection request has ended" in page.text


def test_an_answer_without_the_form_token_is_refused_and_grants_nothing(
    db: Database, url: str, client: httpx2.Client, owner: User
) -> None:
    request_id = start(db, url)
    for token in ({}, {"csrf": "forged"}):
        refused = client.post(CONSENT, data={"request": request_id, "decision": "approve", **token})
        assert refused.status_code == 403
    from_elsewhere = client.post(
        CONSENT,
        data={"csrf": csrf_of(client), "request": request_id, "decision": "approve"},
        headers={"sec-fetch-site": "cross-site"},
    )
    assert from_elsewhere.status_code == 403
    assert connections_of(db, owner) == []
    assert client.get(CONSENT, params={"request": request_id}).status_code == 200  # still open


def test_approving_a_scope_the_app_did_not_ask_for_shows_why_keeps_the_choices_and_grants_nothing(
    db: Database, url: str, client: httpx2.Client, owner: User
) -> None:
    request_id = start(db, url)
    refused = answer(
        client, request_id, scopes=["tasks.manage", "projects.admin"], project="CRW", role="write"
    )
    assert refused.status_code == 422
    found = ERROR.search(refused.text)
    assert found is not None, refused.text
    assert "projects.admin" in html.unescape(found.group(1))
    assert selected(refused.text, "consent-project") == "CRW"
    assert selected(refused.text, "consent-role") == "write"
    assert 'name="scopes" value="tasks.manage" checked' in refused.text
    assert connections_of(db, owner) == []
    back_at_app(answer(client, request_id))  # the request is still open to a valid answer


def test_unticking_a_scope_is_kept_when_the_page_comes_back(
    db: Database, url: str, client: httpx2.Client
) -> None:
    request_id = start(db, url)
    refused = answer(client, request_id, project="NOPE")  # no such project
    assert refused.status_code == 404
    assert ERROR.search(refused.text) is not None
    assert 'name="scopes" value="tasks.manage" aria-describedby' in refused.text  # not ticked
    assert selected(refused.text, "consent-project") is None  # NOPE is not an option


def test_a_role_cap_above_the_persons_own_is_refused(db: Database, url: str, owner: User) -> None:
    writer = make_user(db, "writer@example.com")
    grant(db, owner, "CRW", writer, Role.WRITE)
    request_id = start(db, url)
    with closing(sign_in(url, writer.email)) as as_writer:
        refused = answer(as_writer, request_id, project="CRW", role="admin")
        assert refused.status_code == 403
        assert ERROR.search(refused.text) is not None
        assert connections_of(db, writer) == []
        back_at_app(answer(as_writer, request_id, project="CRW", role="write"))
    assert [g.role for g in connections_of(db, writer)] == [Role.WRITE]


def test_an_unknown_decision_is_refused_on_the_page(
    db: Database, url: str, client: httpx2.Client, owner: User
) -> None:
    request_id = start(db, url)
    refused = answer(client, request_id, decision="maybe")
    assert refused.status_code == 422
    assert ERROR.search(refused.text) is not None
    assert connections_of(db, owner) == []


def test_an_app_known_by_its_metadata_document_shows_that_url_and_its_home_as_text(
    db: Database, url: str, client: httpx2.Client
) -> None:
    document = "https://app.example/oauth/client.json"
    app = OAuthClient(
        id=document,
        kind="document",
        name="Document app",
        redirect_uris=("https://app.example/callback",),
        auth_method="none",
        scope=None,
        metadata={
            "client_uri": "https://app.example/",
            "logo_uri": "https://app.example/logo.png",
        },
        created_at=datetime(2026, 3, 2, tzinfo=UTC),
        expires_at=datetime(2099, 1, 1, tzinfo=UTC),
    )
    db.write(lambda uow: grants.oauth_of(uow).put_client(app, None))
    page = client.get(CONSENT, params={"request": pending_for(db, url, app, ("read",))})
    assert page.status_code == 200
    assert f"metadata document at <code>{document}</code>" in page.text
    assert "<code>app.example</code>" in page.text  # where approving returns to
    assert "<code>https://app.example/</code>" in page.text
    assert "logo.png" not in page.text  # never loaded from the app's server
    assert 'href="https://app.example' not in page.text
    assert "form-action 'self' https://app.example;" in page.headers["content-security-policy"]


# ---------------------------------------------------------------- Settings → Connected apps


def test_connections_page_says_so_when_no_app_is_connected(client: httpx2.Client) -> None:
    page = client.get(CONNECTIONS)
    assert page.status_code == 200
    assert "No apps are connected." in page.text
    assert '<a href="/settings/connections" aria-current="page">Connected apps</a>' in page.text
    tokens = client.get("/settings/tokens").text
    assert '<a href="/settings/connections">Connected apps</a>' in tokens  # in the settings nav


def test_connections_lists_an_approved_app_and_revoke_removes_it(
    db: Database, url: str, client: httpx2.Client, owner: User
) -> None:
    request_id = start(db, url)
    back_at_app(answer(client, request_id, scopes=["tasks.manage"], project="CRW", role="write"))
    [made] = connections_of(db, owner)
    page = client.get(CONNECTIONS)
    assert page.status_code == 200
    assert "Test app" in page.text
    assert f'<code class="muted">{made.client_id}</code>' in page.text
    assert "read, tasks.manage" in page.text
    assert "<td>CRW</td>" in page.text
    assert "<td>write</td>" in page.text
    assert '<span class="muted">never</span>' in page.text
    assert f'action="/settings/connections/{made.id}/revoke"' in page.text

    revoked = post_form(client, f"{CONNECTIONS}/{made.id}/revoke", {"next": CONNECTIONS})
    assert revoked.status_code == 303
    assert revoked.headers["location"] == CONNECTIONS
    after = client.get(CONNECTIONS).text
    assert '<div class="flash notice" role="status">' in after
    assert "Test app can no longer act for you" in after
    assert "No apps are connected." in after
    assert connections_of(db, owner) == []


def test_revoking_another_persons_connection_is_refused(
    db: Database, url: str, client: httpx2.Client, owner: User
) -> None:
    other = make_user(db, "other@example.com")
    grants.approve(
        db, person_actor(other), start(db, url), issuer=url, scopes=["read"], project=None
    )
    [theirs] = connections_of(db, other)
    refused = post_form(client, f"{CONNECTIONS}/{theirs.id}/revoke", {"next": CONNECTIONS})
    assert refused.status_code == 303
    assert '<div class="flash error" role="alert">' in client.get(refused.headers["location"]).text
    assert len(connections_of(db, other)) == 1
    without_token = client.post(f"{CONNECTIONS}/{theirs.id}/revoke", data={"next": CONNECTIONS})
    assert without_token.status_code == 403
