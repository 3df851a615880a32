"""OAuth 2.1 for MCP clients over real HTTP: discovery, registration, the code flow with PKCE,
tokens bound to this server's /mcp, and every refusal the protocol owes a client.

One app is served per backend for the whole module; each test registers clients of its own.
A person's approval goes through the service the consent page calls (`grants.approve`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx2
import pytest
from pydantic import Field

from crewboard.contract.args import Args
from crewboard.contract.catalogue import Catalogue, default_catalogue
from crewboard.contract.operation import Call, Operation
from crewboard.contract.reply import Reply
from crewboard.domain.identity.access import ALL_SCOPES, Toolset
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.identity.tokens import hash_token_secret
from crewboard.domain.oauth import (
    ACCESS_TTL,
    CODE_TTL,
    MAX_CHALLENGE_LENGTH,
    MAX_CLIENT_ID_LENGTH,
    MAX_SCOPE_LENGTH,
    MAX_STATE_LENGTH,
    MAX_URI_LENGTH,
    REFRESH_TTL,
)
from crewboard.services.oauth import grants
from crewboard.storage.database import Database
from tests.support.factories import count_rows
from tests.support.mcp_client import call, rpc
from tests.support.oauth import (
    CALLBACK,
    App,
    authorize,
    code_for,
    connect,
    error_of,
    exchange,
    mcp_post,
    pkce,
    query_of,
    refresh,
    register,
    register_public,
    request_id_of,
    revoke,
    rows,
    served_app,
    works_on_mcp,
)
from tests.support.oauth_module import backend, module_db, owner

PRM_PATH = "/.well-known/oauth-protected-resource/mcp"

__all__ = ["backend", "module_db", "owner"]  # module fixtures used by name


class RevokeMyGrant(Args):
    note: str = Field(default="", max_length=10)


def _revoke_my_grant(call_: Call, _args: RevokeMyGrant) -> Reply:
    """The person revokes, from Settings, the connection this very call came in on."""
    assert call_.actor.token is not None
    person = Actor(user_id=call_.actor.user_id, scopes=ALL_SCOPES)
    grants.revoke_connection(call_.db, person, call_.actor.token.id)
    return Reply({"revoked": call_.actor.token.id})


# A test-only tool: lets a batch revoke its own grant between two messages.
REVOKE_MY_GRANT = Operation(
    name="revoke_my_grant",
    title="Revoke my grant",
    description="Test tool.",
    args=RevokeMyGrant,
    toolset=Toolset.ADMIN,
    run=_revoke_my_grant,
    read_only=False,
)


@pytest.fixture(scope="module")
def app(
    module_db: Database, owner: User, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[App]:
    catalogue = Catalogue([*default_catalogue(), REVOKE_MY_GRANT])
    with served_app(
        module_db, owner, tmp_path_factory.mktemp("app"), catalogue=catalogue
    ) as served:
        yield served


@pytest.fixture(scope="module")
def client_id(app: App) -> str:
    """A public client most tests share: each approval is a grant of its own."""
    return register_public(app.url)


@pytest.fixture(scope="module")
def other_client_id(app: App) -> str:
    """Another app, which must get nowhere with the first one's codes and tokens."""
    return register_public(app.url)


def _challenge_of(response: httpx2.Response) -> str:
    return response.headers.get("www-authenticate", "")


# --- discovery -----------------------------------------------------------------------------


def test_mcp_without_a_token_is_401_pointing_at_metadata_that_names_this_server(app: App) -> None:
    response = mcp_post(app.url, None, rpc("tools/list", {}))
    assert response.status_code == 401
    prm_url = f"{app.issuer}{PRM_PATH}"
    assert _challenge_of(response) == f'Bearer resource_metadata="{prm_url}"'
    documents = [
        httpx2.get(f"{app.url}{path}", timeout=10)
        for path in (PRM_PATH, "/.well-known/oauth-protected-resource")
    ]
    for document in documents:
        assert document.status_code == 200
        assert document.json() == documents[0].json()
    metadata = documents[0].json()
    assert metadata["resource"] == app.resource
    assert metadata["authorization_servers"] == [app.issuer]
    assert metadata["bearer_methods_supported"] == ["header"]


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]
)
def test_authorization_server_metadata_names_the_issuer_exactly_and_s256_only(
    app: App, path: str
) -> None:
    response = httpx2.get(f"{app.url}{path}", timeout=10)
    assert response.status_code == 200
    metadata = response.json()
    assert metadata["issuer"] == app.issuer
    assert not metadata["issuer"].endswith("/")
    assert metadata["authorization_endpoint"] == f"{app.issuer}/oauth/authorize"
    assert metadata["token_endpoint"] == f"{app.issuer}/oauth/token"
    assert metadata["registration_endpoint"] == f"{app.issuer}/oauth/register"
    assert metadata["revocation_endpoint"] == f"{app.issuer}/oauth/revoke"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["response_types_supported"] == ["code"]
    assert set(metadata["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert metadata["client_id_metadata_document_supported"] is True
    assert "tasks.manage" in metadata["scopes_supported"]


# --- registration (RFC 7591) ---------------------------------------------------------------


def _client_row(app: App, client_id: str) -> dict[str, object]:
    [row] = rows(
        app.db,
        "SELECT kind, auth_method, secret_hash, redirect_uris, client_metadata "
        f"FROM oauth_clients WHERE id = '{client_id}'",
    )
    return row


def test_a_public_client_registers_without_a_secret(app: App) -> None:
    response = register(app.url, client_name="Public app")
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in body
    row = _client_row(app, body["client_id"])
    assert row["kind"] == "registered"
    assert row["auth_method"] == "none"
    assert row["secret_hash"] is None


@pytest.mark.parametrize("method", ["client_secret_post", "client_secret_basic"])
def test_a_confidential_client_gets_its_secret_once_and_only_its_hash_is_stored(
    app: App, method: str
) -> None:
    response = register(app.url, token_endpoint_auth_method=method)
    assert response.status_code == 201, response.text
    body = response.json()
    client_id, secret = body["client_id"], body["client_secret"]
    assert secret
    row = _client_row(app, client_id)
    assert row["auth_method"] == method
    assert row["secret_hash"] == hash_token_secret(secret)
    stored = json.dumps(row, default=str)
    assert secret not in stored  # not in the metadata either
    # The token endpoint takes the secret, and only the right one.
    _grant, code, pair = code_for(app, client_id, ["read"])

    def send(path: str, given: str | None, **form: str) -> httpx2.Response:
        """A form from this client, its secret sent the way it registered (if any)."""
        headers = {}
        if given is not None and method == "client_secret_post":
            form["client_secret"] = given
        elif given is not None:
            basic = base64.b64encode(f"{client_id}:{given}".encode()).decode()
            headers["Authorization"] = f"Basic {basic}"
        return httpx2.post(
            f"{app.url}{path}", data={"client_id": client_id, **form}, headers=headers, timeout=10
        )

    trade = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": pair.verifier,
        "redirect_uri": CALLBACK,
    }
    wrong_secret = secret[:-1] + ("0" if secret[-1] != "0" else "1")
    for wrong in (None, wrong_secret):
        refused = send("/oauth/token", wrong, **trade)
        assert refused.status_code == 401, refused.text
        assert error_of(refused) == "invalid_client"
    granted = send("/oauth/token", secret, **trade)
    assert granted.status_code == 200, granted.text
    tokens = granted.json()
    assert works_on_mcp(app.url, tokens["access_token"])
    # Revocation authenticates the client the same way.
    refused = send("/oauth/revoke", wrong_secret, token=tokens["refresh_token"])
    assert refused.status_code == 401
    assert error_of(refused) == "invalid_client"
    assert works_on_mcp(app.url, tokens["access_token"])
    assert send("/oauth/revoke", secret, token=tokens["refresh_token"]).status_code == 200
    assert not works_on_mcp(app.url, tokens["access_token"])


@pytest.mark.parametrize(
    ("uris", "named"),
    [
        (["http://app.example.com/callback"], "http://app.example.com/callback"),
        (["https://app.example.com/callback#done"], "#done"),
        (["javascript:alert(1)"], "javascript:alert(1)"),
        ([CALLBACK, "data:text/html,hi"], "data:text/html,hi"),
        ([f"https://app.example.com/cb{i}" for i in range(11)], "10"),
        (["http://127.0.0.1:1@evil.example/cb"], "evil.example"),
        (["http://localhost@evil.example/cb"], "evil.example"),
    ],
    ids=[
        "http-off-loopback",
        "fragment",
        "javascript",
        "data",
        "eleven",
        "loopback-as-user-info",
        "localhost-as-user-info",
    ],
)
def test_registration_refuses_a_bad_redirect_uri_naming_it(
    app: App, uris: list[str], named: str
) -> None:
    before = count_rows(app.db, "oauth_clients")
    response = register(app.url, redirect_uris=uris)
    assert response.status_code == 400, response.text
    assert error_of(response) == "invalid_redirect_uri"
    assert named in response.json()["error_description"]
    assert count_rows(app.db, "oauth_clients") == before


def test_a_loopback_lookalike_never_gets_a_code_sent_elsewhere(app: App) -> None:
    """The host of `http://127.0.0.1:1@evil.example/cb` is evil.example: neither registration
    nor authorize takes it for loopback, so no code ever goes there over plain http."""
    client_id = register_public(app.url)
    before = count_rows(app.db, "oauth_requests")
    for asked in ("http://127.0.0.1:1@evil.example/callback", "http://127.0.0.1@evil.example/"):
        response = authorize(app.url, client_id, pkce().challenge, redirect_uri=asked)
        assert response.status_code == 400, response.text
        assert "location" not in response.headers
    assert count_rows(app.db, "oauth_requests") == before


def test_a_registration_body_over_64_kib_is_413(app: App) -> None:
    before = count_rows(app.db, "oauth_clients")
    response = register(app.url, client_name="x" * (64 * 1024))
    assert response.status_code == 413
    assert count_rows(app.db, "oauth_clients") == before


def test_without_dynamic_registration_the_endpoint_is_gone_and_not_advertised(
    module_db: Database, owner: User, tmp_path: Path
) -> None:
    with served_app(module_db, owner, tmp_path, oauth_dynamic_registration=False) as closed:
        assert register(closed.url).status_code == 404
        metadata = httpx2.get(f"{closed.url}/.well-known/oauth-authorization-server").json()
        assert "registration_endpoint" not in metadata
        assert metadata["token_endpoint"] == f"{closed.issuer}/oauth/token"


def test_with_redirect_hosts_set_a_redirect_elsewhere_is_refused_naming_the_host(
    module_db: Database, owner: User, tmp_path: Path
) -> None:
    with served_app(
        module_db, owner, tmp_path, oauth_redirect_hosts="app.example.com, 127.0.0.1"
    ) as fenced:
        refused = register(fenced.url, redirect_uris=["https://other.example.net/cb"])
        assert refused.status_code == 400
        assert error_of(refused) == "invalid_redirect_uri"
        assert "other.example.net" in refused.json()["error_description"]
        for allowed in ("https://app.example.com/cb", "https://APP.example.com/cb", CALLBACK):
            assert register(fenced.url, redirect_uris=[allowed]).status_code == 201


def test_an_address_registers_at_most_30_clients_an_hour_then_waits(
    module_db: Database, owner: User, tmp_path: Path
) -> None:
    with served_app(module_db, owner, tmp_path) as fresh:
        before = count_rows(fresh.db, "oauth_clients")
        for _ in range(30):
            assert register(fresh.url).status_code == 201
        refused = register(fresh.url)
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) > 0
        assert "127.0.0.1" in refused.json()["error_description"]
        assert count_rows(fresh.db, "oauth_clients") == before + 30


# --- authorize: PKCE, redirect URIs, the resource ------------------------------------------


@pytest.mark.parametrize(
    "pkce_params",
    [{}, {"code_challenge_method": "plain", "code_challenge": "x" * 43}],
    ids=["no-code-challenge", "plain"],
)
def test_authorize_without_s256_pkce_is_refused_back_at_the_app(
    app: App, client_id: str, pkce_params: dict[str, str]
) -> None:
    before = count_rows(app.db, "oauth_requests")
    response = authorize(app.url, client_id, None, **pkce_params)
    assert response.status_code == 302
    location = response.headers["location"]
    assert location.startswith(CALLBACK + "?")
    answer = query_of(location)
    assert answer["error"] == "invalid_request"
    assert answer["state"] == "st-1"
    assert "code" not in answer
    assert count_rows(app.db, "oauth_requests") == before


@pytest.mark.parametrize(
    "asked",
    [CALLBACK + "x", CALLBACK[:-1], CALLBACK.replace("callback", "cAllback"), CALLBACK + "/"],
)
def test_a_redirect_uri_off_by_one_character_at_authorize_is_400_without_a_redirect(
    app: App, client_id: str, asked: str
) -> None:
    response = authorize(app.url, client_id, pkce().challenge, redirect_uri=asked)
    assert response.status_code == 400
    assert "location" not in response.headers
    assert error_of(response) == "invalid_request"


# Every value of an authorization request that is kept (the consent request, then the code),
# over its limit or holding what its column cannot: refused as invalid_request naming it,
# before the person signs in and before anything is stored.
LONG_LOOPBACK = "http://127.0.0.1/" + "a" * (MAX_URI_LENGTH - len("http://127.0.0.1/"))
KEPT_VALUES = [
    ("state", "s" * (MAX_STATE_LENGTH + 1)),
    ("state", "st\x00ate"),
    ("state", "line\nbreak"),
    ("state", "caf\u00e9"),
    ("code_challenge", "c" * (MAX_CHALLENGE_LENGTH + 1)),
    ("code_challenge", "c" * 42 + "\x00"),
    ("code_challenge", "c" * 42),
    ("code_challenge", "c" * 42 + "+"),
    ("redirect_uri", LONG_LOOPBACK.replace("127.0.0.1/", "127.0.0.1:65535/")),
]


@pytest.mark.parametrize(
    ("param", "value"),
    KEPT_VALUES,
    ids=[
        "state-over-limit",
        "state-nul",
        "state-newline",
        "state-non-ascii",
        "challenge-over-limit",
        "challenge-nul",
        "challenge-short",
        "challenge-bad-character",
        "redirect-uri-over-limit-by-its-port",
    ],
)
def test_an_authorization_value_that_cannot_be_kept_is_invalid_request_naming_it(
    app: App, param: str, value: str
) -> None:
    client_id = register_public(app.url, [CALLBACK, LONG_LOOPBACK])
    before = count_rows(app.db, "oauth_requests")
    asked = {"redirect_uri": CALLBACK, param: value}
    response = authorize(app.url, client_id, pkce().challenge, **asked)
    # Back at the app, or (a redirect URI that matches none registered) answered here.
    if response.status_code == 302:
        location = response.headers["location"]
        assert not location.startswith(app.issuer)  # not sent on to the consent page
        answer = query_of(location)
    else:
        assert response.status_code == 400, response.text
        answer = response.json()
    assert answer["error"] == "invalid_request"
    assert answer["error_description"].startswith(param)
    assert count_rows(app.db, "oauth_requests") == before


def test_the_values_at_their_limits_are_kept(app: App) -> None:
    client_id = register_public(app.url, [LONG_LOOPBACK])
    response = authorize(
        app.url,
        client_id,
        "c" * MAX_CHALLENGE_LENGTH,
        redirect_uri=LONG_LOOPBACK,
        state="~" * MAX_STATE_LENGTH,
    )
    pending, _client = grants.pending_authorization(app.db, request_id_of(app, response))
    assert pending.state == "~" * MAX_STATE_LENGTH
    assert pending.code_challenge == "c" * MAX_CHALLENGE_LENGTH
    assert pending.redirect_uri == LONG_LOOPBACK


@pytest.mark.parametrize(
    "client_id", ["x" * (MAX_CLIENT_ID_LENGTH + 1), "app\x00id", "https://app.example.com/\x00"]
)
def test_a_client_id_no_client_can_have_is_unknown_at_every_endpoint(
    app: App, client_id: str
) -> None:
    response = authorize(app.url, client_id, pkce().challenge)
    assert response.status_code == 400, response.text
    assert "location" not in response.headers
    for path, form in (
        ("/oauth/token", {"grant_type": "refresh_token", "refresh_token": "cbr_x"}),
        ("/oauth/revoke", {"token": "cbr_x"}),
    ):
        answered = httpx2.post(
            f"{app.url}{path}", data={"client_id": client_id, **form}, timeout=10
        )
        assert answered.status_code == 401, answered.text
        assert error_of(answered) == "invalid_client"


def test_a_registration_keeps_its_scope_and_name_within_their_columns(app: App) -> None:
    response = register(
        app.url,
        scope="read " * MAX_SCOPE_LENGTH,
        client_name="Tool\x00 \x07app" + "x" * 500,
    )
    assert response.status_code == 201, response.text
    [row] = rows(
        app.db,
        f"SELECT scope, name FROM oauth_clients WHERE id = '{response.json()['client_id']}'",
    )
    assert row["scope"] == "read"
    assert str(row["name"]).startswith("Tool appxxx")
    assert len(str(row["name"])) == 200


def test_authorize_for_an_unknown_client_is_400_without_a_redirect(app: App) -> None:
    response = authorize(app.url, "no-such-client", pkce().challenge)
    assert response.status_code == 400
    assert "location" not in response.headers


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "http://127.0.0.1:43210/callback",
        "http://127.0.0.1/callback",
    ],
)
def test_a_loopback_redirect_on_another_port_is_accepted(
    app: App, client_id: str, redirect_uri: str
) -> None:
    """RFC 8252 §7.3: a native app listens on whatever port it got."""
    pair = pkce()
    response = authorize(app.url, client_id, pair.challenge, redirect_uri=redirect_uri)
    _grant, redirect = grants.approve(
        app.db,
        Actor(user_id=app.owner.id, scopes=ALL_SCOPES),
        request_id_of(app, response),
        issuer=app.issuer,
        scopes=["read"],
    )
    assert redirect.startswith(redirect_uri + "?")
    back = query_of(redirect)
    assert back["state"] == "st-1"
    assert back["iss"] == app.issuer
    tokens = exchange(app.url, client_id, back["code"], pair.verifier, redirect_uri)
    assert tokens.status_code == 200, tokens.text
    assert works_on_mcp(app.url, tokens.json()["access_token"])


def test_authorize_for_another_resource_is_invalid_target(app: App, client_id: str) -> None:
    elsewhere = authorize(
        app.url, client_id, pkce().challenge, resource="https://other.example.com/mcp"
    )
    assert elsewhere.status_code == 302
    answer = query_of(elsewhere.headers["location"])
    assert elsewhere.headers["location"].startswith(CALLBACK + "?")
    assert answer["error"] == "invalid_target"
    assert answer["state"] == "st-1"
    here = authorize(app.url, client_id, pkce().challenge, resource=app.resource)
    assert request_id_of(app, here)


# --- the token endpoint ---------------------------------------------------------------------


def test_a_wrong_code_verifier_is_invalid_grant(app: App, client_id: str) -> None:
    _grant, code, _pair = code_for(app, client_id, ["read"])
    wrong = exchange(app.url, client_id, code, pkce().verifier)
    assert wrong.status_code == 400
    assert error_of(wrong) == "invalid_grant"
    assert "access_token" not in wrong.json()


def test_a_redirect_uri_at_the_token_endpoint_other_than_the_authorized_one_is_refused(
    app: App,
    client_id: str,
) -> None:
    _grant, code, pair = code_for(app, client_id, ["read"])
    for other in (CALLBACK + "x", "http://127.0.0.1:9998/callback"):
        refused = exchange(app.url, client_id, code, pair.verifier, other)
        assert refused.status_code == 400
        assert error_of(refused) == "invalid_request"
    missing = exchange(app.url, client_id, code, pair.verifier, redirect_uri="")
    assert missing.status_code == 400


def test_a_code_belongs_to_its_client(app: App, client_id: str, other_client_id: str) -> None:
    _grant, code, pair = code_for(app, client_id, ["read"])
    stolen = exchange(app.url, other_client_id, code, pair.verifier)
    assert stolen.status_code == 400
    assert error_of(stolen) == "invalid_grant"
    assert exchange(app.url, client_id, code, pair.verifier).status_code == 200


def test_a_code_used_twice_is_refused_and_revokes_what_the_first_use_gave(
    app: App, client_id: str
) -> None:
    grant_id, code, pair = code_for(app, client_id, ["read", "tasks.manage"])
    first = exchange(app.url, client_id, code, pair.verifier)
    assert first.status_code == 200, first.text
    tokens = first.json()
    assert works_on_mcp(app.url, tokens["access_token"])
    second = exchange(app.url, client_id, code, pair.verifier)
    assert second.status_code == 400
    assert error_of(second) == "invalid_grant"
    assert not works_on_mcp(app.url, tokens["access_token"])
    again = refresh(app.url, client_id, tokens["refresh_token"])
    assert again.status_code == 400
    assert error_of(again) == "invalid_grant"
    [grant] = rows(app.db, f"SELECT revoked_reason FROM oauth_grants WHERE id = '{grant_id}'")
    assert grant["revoked_reason"] == "code_replayed"


def test_an_expired_code_is_invalid_grant(app: App, client_id: str) -> None:
    """The server's clock decides (the one the tests move), not the machine's."""
    _grant, code, pair = code_for(app, client_id, ["read"])
    app.clock.advance(CODE_TTL + timedelta(seconds=1))
    late = exchange(app.url, client_id, code, pair.verifier)
    assert late.status_code == 400
    assert error_of(late) == "invalid_grant"


def test_a_refresh_token_rotates_and_its_reuse_revokes_the_whole_family(
    app: App, client_id: str
) -> None:
    connection = connect(app, client_id=client_id)
    rotated = refresh(app.url, connection.client_id, connection.refresh_token)
    assert rotated.status_code == 200, rotated.text
    newest = rotated.json()
    assert newest["refresh_token"] != connection.refresh_token
    assert set(newest["scope"].split()) == {"read", "tasks.manage"}
    assert works_on_mcp(app.url, newest["access_token"])
    reused = refresh(app.url, connection.client_id, connection.refresh_token)
    assert reused.status_code == 400
    assert error_of(reused) == "invalid_grant"
    assert not works_on_mcp(app.url, newest["access_token"])
    assert not works_on_mcp(app.url, connection.access_token)
    latest = refresh(app.url, connection.client_id, newest["refresh_token"])
    assert latest.status_code == 400
    assert error_of(latest) == "invalid_grant"


def test_an_expired_refresh_token_is_invalid_grant(app: App, client_id: str) -> None:
    connection = connect(app, client_id=client_id)
    app.clock.advance(REFRESH_TTL + timedelta(seconds=1))
    late = refresh(app.url, connection.client_id, connection.refresh_token)
    assert late.status_code == 400
    assert error_of(late) == "invalid_grant"


def test_a_refresh_token_belongs_to_its_client(
    app: App, client_id: str, other_client_id: str
) -> None:
    connection = connect(app, client_id=client_id)
    stolen = refresh(app.url, other_client_id, connection.refresh_token)
    assert stolen.status_code == 400
    assert error_of(stolen) == "invalid_grant"
    assert refresh(app.url, connection.client_id, connection.refresh_token).status_code == 200


def test_a_refresh_cannot_widen_the_scopes(app: App, client_id: str) -> None:
    connection = connect(app, ["read"], client_id=client_id)
    wider = refresh(
        app.url, connection.client_id, connection.refresh_token, scope="read tasks.manage"
    )
    assert wider.status_code == 400
    assert error_of(wider) == "invalid_scope"


# --- the resource: audience, expiry, batches, scopes ----------------------------------------


def test_a_token_for_another_audience_is_refused(
    app: App, client_id: str, module_db: Database, owner: User, tmp_path: Path
) -> None:
    connection = connect(app, client_id=client_id)
    with served_app(module_db, owner, tmp_path, base_url="https://crew.example.com/") as other:
        metadata = httpx2.get(f"{other.url}/.well-known/oauth-authorization-server").json()
        assert metadata["issuer"] == "https://crew.example.com"
        refused = mcp_post(other.url, connection.access_token, rpc("tools/list", {}))
        assert refused.status_code == 401
        assert 'error="invalid_token"' in _challenge_of(refused)
        assert "https://crew.example.com" in refused.json()["error"]["message"]
    # The same database behind this server's own public URL takes it: the audience decides.
    with served_app(module_db, owner, tmp_path, base_url=app.issuer) as same:
        assert works_on_mcp(same.url, connection.access_token)


def test_an_expired_access_token_is_401_and_a_refresh_gives_a_working_one(
    app: App, client_id: str
) -> None:
    connection = connect(app, client_id=client_id)
    app.clock.advance(ACCESS_TTL + timedelta(seconds=1))
    expired = mcp_post(app.url, connection.access_token, rpc("tools/list", {}))
    assert expired.status_code == 401
    assert 'error="invalid_token"' in _challenge_of(expired)
    assert "resource_metadata=" in _challenge_of(expired)
    renewed = refresh(app.url, connection.client_id, connection.refresh_token)
    assert renewed.status_code == 200, renewed.text
    assert works_on_mcp(app.url, renewed.json()["access_token"])


def test_a_grant_revoked_inside_a_batch_stops_the_later_messages(app: App, client_id: str) -> None:
    connection = connect(app, client_id=client_id)
    batch = [
        call("get_project_state", {"projectId": "CRW"}, 1),
        call("revoke_my_grant", {}, 2),
        call("get_project_state", {"projectId": "CRW"}, 3),
        call("get_project_state", {"projectId": "CRW"}, 4),
    ]
    response = mcp_post(app.url, connection.access_token, batch, version="2025-03-26")
    assert response.status_code == 200
    answers = response.json()
    assert [a["id"] for a in answers] == [1, 2, 3, 4]
    assert answers[0]["result"]["isError"] is False
    assert json.loads(answers[1]["result"]["content"][0]["text"])["revoked"] == (
        connection.grant_id
    )
    assert answers[2]["error"]["code"] == -32001
    assert answers[3]["error"]["code"] == -32001
    assert not works_on_mcp(app.url, connection.access_token)
    assert error_of(refresh(app.url, connection.client_id, connection.refresh_token)) == (
        "invalid_grant"
    )


def test_revoking_the_refresh_token_ends_the_grant(app: App, client_id: str) -> None:
    connection = connect(app, client_id=client_id)
    answer = revoke(
        app.url, connection.client_id, connection.refresh_token, token_type_hint="refresh_token"
    )
    assert answer.status_code == 200
    assert not works_on_mcp(app.url, connection.access_token)
    assert error_of(refresh(app.url, connection.client_id, connection.refresh_token)) == (
        "invalid_grant"
    )
    [grant] = rows(
        app.db, f"SELECT revoked_reason FROM oauth_grants WHERE id = '{connection.grant_id}'"
    )
    assert grant["revoked_reason"] == "revoked_by_client"


def test_revoking_an_access_token_ends_only_it(app: App, client_id: str) -> None:
    connection = connect(app, client_id=client_id)
    answer = revoke(app.url, connection.client_id, connection.access_token)
    assert answer.status_code == 200, answer.text
    assert not works_on_mcp(app.url, connection.access_token)
    renewed = refresh(app.url, connection.client_id, connection.refresh_token)
    assert renewed.status_code == 200, renewed.text
    assert works_on_mcp(app.url, renewed.json()["access_token"])


def test_another_client_cannot_revoke_a_token(
    app: App, client_id: str, other_client_id: str
) -> None:
    connection = connect(app, client_id=client_id)
    for secret in (connection.access_token, connection.refresh_token):
        assert revoke(app.url, other_client_id, secret).status_code == 200  # RFC 7009: no oracle
    assert works_on_mcp(app.url, connection.access_token)
    assert refresh(app.url, connection.client_id, connection.refresh_token).status_code == 200


def _create_task(key: str) -> dict[str, object]:
    arguments = {"projectId": "CRW", "workspaceId": None, "idempotencyKey": key, "title": "T"}
    return call("create_task", arguments, 7)


def test_a_call_needing_a_scope_the_grant_lacks_gets_a_403_scope_challenge(
    app: App, client_id: str
) -> None:
    connection = connect(app, ["read"], client_id=client_id)
    tasks_before = count_rows(app.db, "tasks")
    response = mcp_post(
        app.url, connection.access_token, _create_task("scope-1"), version="2025-11-25"
    )
    assert response.status_code == 403
    challenge = _challenge_of(response)
    assert challenge.startswith("Bearer ")
    assert 'error="insufficient_scope"' in challenge
    scope = challenge.split('scope="', 1)[1].split('"', 1)[0].split()
    assert "tasks.manage" in scope
    assert "read" in scope
    assert f'resource_metadata="{app.issuer}{PRM_PATH}"' in challenge
    result = response.json()["result"]
    assert result["isError"] is True
    assert count_rows(app.db, "tasks") == tasks_before


def test_the_same_call_in_2025_06_18_is_200_with_an_error_result_and_no_challenge(
    app: App,
    client_id: str,
) -> None:
    connection = connect(app, ["read"], client_id=client_id)
    response = mcp_post(
        app.url, connection.access_token, _create_task("scope-2"), version="2025-06-18"
    )
    assert response.status_code == 200
    assert "www-authenticate" not in response.headers
    assert response.json()["result"]["isError"] is True


def test_a_call_the_grant_allows_gets_no_challenge(app: App, client_id: str) -> None:
    connection = connect(app, ["read", "tasks.manage"], client_id=client_id)
    response = mcp_post(
        app.url, connection.access_token, _create_task("scope-3"), version="2025-11-25"
    )
    assert response.status_code == 200, response.text
    assert "www-authenticate" not in response.headers
    assert response.json()["result"]["isError"] is False


def test_an_oauth_access_token_is_refused_on_the_rest_api(app: App, client_id: str) -> None:
    connection = connect(app, client_id=client_id)
    assert works_on_mcp(app.url, connection.access_token)
    response = httpx2.get(
        f"{app.url}/api/v1/projects",
        headers={"Authorization": f"Bearer {connection.access_token}"},
        timeout=10,
    )
    assert response.status_code == 401
