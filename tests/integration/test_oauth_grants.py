"""A person's approvals of one app: a self-registered client (one install) has one connection,
a new approval replacing the earlier one with its tokens; an app known by its metadata
document (shared by every install) keeps each device's approval."""

from __future__ import annotations

import pytest

from crewboard.domain.identity.access import Scope
from crewboard.domain.oauth import OAuthClient
from crewboard.errors import NotFound
from crewboard.services.identity.users import person_actor
from crewboard.services.oauth import grants
from crewboard.services.oauth.clients import ClientPolicy, register_client
from crewboard.storage.database import Database
from tests.support.factories import make_user
from tests.support.oauth import CALLBACK

RESOURCE = "http://127.0.0.1:8787/mcp"
ISSUER = "http://127.0.0.1:8787"


def _approve(db: Database, client: OAuthClient, email: str, scopes: list[str]) -> grants.TokenSet:
    person = person_actor(db.read(lambda uow: uow.users.get_by_email(email)))  # type: ignore[arg-type]
    pending = grants.start_authorization(
        db,
        client,
        redirect_uri=CALLBACK,
        redirect_explicit=True,
        scopes=scopes,
        resource=RESOURCE,
        code_challenge="c" * 43,
        state=None,
    )
    _grant, url = grants.approve(db, person, pending.id, issuer=ISSUER, scopes=scopes)
    code = url.split("code=", 1)[1].split("&", 1)[0]
    return grants.exchange_code(db, code)


def _document_client(db: Database) -> OAuthClient:
    url = "https://app.example.com/oauth/client.json"
    client = OAuthClient(
        id=url,
        kind="document",
        name="Shared app",
        redirect_uris=(CALLBACK,),
        auth_method="none",
        scope=None,
        metadata={"client_id": url},
        created_at=db.clock.now(),
        expires_at=db.clock.now(),
    )
    db.write(lambda uow: grants.oauth_of(uow).put_client(client, None))
    return client


def test_approving_a_registered_app_again_replaces_the_earlier_connection(db: Database) -> None:
    user = make_user(db, "ana@example.com")
    client = register_client(
        db, ClientPolicy(), {"client_name": "CLI", "redirect_uris": [CALLBACK]}
    )
    first = _approve(db, client, "ana@example.com", ["read"])
    second = _approve(db, client, "ana@example.com", ["read", "tasks.manage"])
    [kept] = grants.list_connections(db, person_actor(user))
    assert kept.scopes == frozenset({Scope.READ, Scope.TASKS_MANAGE})
    all_of_them = db.read(lambda uow: grants.oauth_of(uow).grants_of(user.id, include_revoked=True))
    assert sorted(g.revoked_reason or "active" for g in all_of_them) == ["active", "replaced"]
    assert grants.load_refresh(db, client.id, first.refresh_token) is None
    assert grants.authenticate_access_token(db, second.access_token, RESOURCE).user_id == user.id


def test_a_shared_document_app_keeps_each_approval_and_other_people_are_untouched(
    db: Database,
) -> None:
    ana = make_user(db, "ana@example.com")
    bo = make_user(db, "bo@example.com")
    shared = _document_client(db)
    _approve(db, shared, "ana@example.com", ["read"])
    _approve(db, shared, "ana@example.com", ["read"])  # her second device
    registered = register_client(
        db, ClientPolicy(), {"client_name": "CLI", "redirect_uris": [CALLBACK]}
    )
    _approve(db, registered, "bo@example.com", ["read"])
    _approve(db, registered, "ana@example.com", ["read"])  # replaces nothing of Bo's
    assert len(grants.list_connections(db, person_actor(ana))) == 3
    assert len(grants.list_connections(db, person_actor(bo))) == 1


def test_a_consent_request_or_connection_id_no_row_can_have_is_not_found(db: Database) -> None:
    """The consent page's `request` and the connections page's grant id come from the person's
    browser: one over its column or holding a NUL (which PostgreSQL refuses) is unknown."""
    user = make_user(db, "ana@example.com")
    for request_id in ("r" * 65, "req\x00id"):
        with pytest.raises(NotFound):
            grants.pending_authorization(db, request_id)
    for grant_id in ("g" * 65, "grt_\x00"):
        with pytest.raises(NotFound):
            grants.revoke_connection(db, person_actor(user), grant_id)
