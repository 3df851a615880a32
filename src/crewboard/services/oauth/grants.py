"""Consent, grants and the secrets they give out: codes, access tokens, refresh tokens.

A person's approval on the consent page makes a grant. The grant acts as one of the person's
personal tokens, capped to the scopes, project and role approved. Codes are exchanged once;
refresh tokens rotate on every use. A code or refresh token presented a second time means a
copy leaked, so the grant is revoked with everything it gave out.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from crewboard.domain.identity.access import Role, Scope, TokenKind, parse_enum
from crewboard.domain.identity.records import Actor, ApiToken
from crewboard.domain.identity.tokens import (
    generate_token_secret,
    hash_token_secret,
    is_well_formed,
)
from crewboard.domain.ids import new_id
from crewboard.domain.oauth import (
    ACCESS_PREFIX,
    ACCESS_TTL,
    CODE_PREFIX,
    CODE_TTL,
    MAX_REQUEST_ID_LENGTH,
    MAX_URI_LENGTH,
    REFRESH_PREFIX,
    REFRESH_TTL,
    REQUEST_ID_BYTES,
    REQUEST_TTL,
    Grant,
    OAuthClient,
    PendingAuthorization,
    challenge_problem,
    is_storable_key,
    state_problem,
)
from crewboard.errors import NotFound, PermissionDenied, Unauthenticated, ValidationFailed
from crewboard.services.identity.access import access_project
from crewboard.services.identity.stream_tokens import do_revoke_made_by
from crewboard.services.identity.users import SYSTEM_ACTOR
from crewboard.storage.database import Database
from crewboard.storage.oauth.repository import OAuthRepository
from crewboard.storage.uow import UnitOfWork

LAST_USED_RESOLUTION = timedelta(seconds=60)
SCOPE_NAMES = [scope.value for scope in Scope]


def oauth_of(uow: UnitOfWork) -> OAuthRepository:
    return OAuthRepository(uow.conn)


@dataclass(frozen=True)
class TokenSet:
    access_token: str
    refresh_token: str
    expires_in: int
    scopes: tuple[str, ...]
    resource: str


@dataclass(frozen=True)
class CodeRecord:
    """An authorization code as the token endpoint checks it."""

    grant: Grant
    redirect_uri: str
    redirect_explicit: bool
    code_challenge: str
    expires_at: datetime


class Replayed(Exception):
    """A code or refresh token presented again: its grant is now revoked."""


def check_scopes(asked: list[str], field: str = "scope") -> list[Scope]:
    unknown = [s for s in asked if s not in SCOPE_NAMES]
    if unknown:
        raise ValidationFailed.field(
            field,
            f"unknown scope {', '.join(unknown)}; use some of the accepted ones.",
            SCOPE_NAMES,
        )
    return [Scope(s) for s in asked]


# Consent ----------------------------------------------------------------------------------


def check_authorization_request(
    *, state: str | None, code_challenge: str, redirect_uri: str
) -> None:
    """Every value of an authorization request that is kept, against the limits of where it
    is kept (the consent request, then the code).

    Raises:
        ValidationFailed: naming the first parameter that cannot be kept.
    """
    uri_problem = (
        f"is longer than {MAX_URI_LENGTH} characters"
        if len(redirect_uri) > MAX_URI_LENGTH
        else None
    )
    checks = (
        ("state", state_problem(state) if state is not None else None),
        ("code_challenge", challenge_problem(code_challenge)),
        ("redirect_uri", uri_problem),
    )
    for name, problem in checks:
        if problem is not None:
            raise ValidationFailed.field(name, f"{problem}.")


def start_authorization(
    db: Database,
    client: OAuthClient,
    *,
    redirect_uri: str,
    redirect_explicit: bool,
    scopes: list[str],
    resource: str,
    code_challenge: str,
    state: str | None,
) -> PendingAuthorization:
    """Keep an authorization request for the consent page (it expires unanswered).

    Raises:
        ValidationFailed: naming state, code_challenge or redirect_uri when one cannot be kept
            (too long, or characters the protocol does not allow); nothing is stored.
    """
    check_authorization_request(
        state=state, code_challenge=code_challenge, redirect_uri=redirect_uri
    )

    def work(uow: UnitOfWork) -> PendingAuthorization:
        repo = oauth_of(uow)
        repo.prune(uow.now)
        pending = PendingAuthorization(
            id=secrets.token_urlsafe(REQUEST_ID_BYTES),
            client_id=client.id,
            redirect_uri=redirect_uri,
            redirect_explicit=redirect_explicit,
            scopes=tuple(scopes),
            resource=resource,
            code_challenge=code_challenge,
            state=state,
            created_at=uow.now,
            expires_at=uow.now + REQUEST_TTL,
        )
        repo.add_request(pending)
        return pending

    return db.write(work)


def pending_authorization(
    db: Database, request_id: str
) -> tuple[PendingAuthorization, OAuthClient]:
    """The request the consent page shows, with its client.

    Raises:
        NotFound: no such request, it expired, or it was already answered.
    """

    def read(uow: UnitOfWork) -> tuple[PendingAuthorization, OAuthClient] | None:
        repo = oauth_of(uow)
        known = is_storable_key(request_id, MAX_REQUEST_ID_LENGTH)
        pending = repo.request(request_id) if known else None
        if pending is None or pending.expires_at <= uow.now:
            return None
        found = repo.client(pending.client_id)
        return (pending, found[0]) if found else None

    found = db.read(read)
    if found is None:
        raise NotFound(
            "This sign-in request is unknown, expired or already answered; start connecting "
            "again from your app.",
            {"resource": "authorization_request"},
        )
    return found


def _person_only(actor: Actor) -> None:
    if actor.token is not None:
        raise PermissionDenied("Only a person signed in to the web app can approve an app.")


def _redirect(pending: PendingAuthorization, issuer: str, **params: str) -> str:
    parts = urlsplit(pending.redirect_uri)
    query = dict(params)
    if pending.state is not None:
        query["state"] = pending.state
    query["iss"] = issuer  # RFC 9207: which server answered
    joined = f"{parts.query}&{urlencode(query)}" if parts.query else urlencode(query)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, joined, ""))


def approve(
    db: Database,
    actor: Actor,
    request_id: str,
    *,
    issuer: str,
    scopes: list[str],
    project: str | None = None,
    role: str | None = None,
) -> tuple[Grant, str]:
    """The person approves: a grant with what they chose, and the redirect carrying a code.

    Raises:
        NotFound: the request expired or was answered; the project is not open to the person.
        ValidationFailed: no scope chosen, a scope the client did not ask for, unknown role.
        PermissionDenied: a role above the person's own on that project.
    """
    _person_only(actor)
    pending, client = pending_authorization(db, request_id)
    chosen = check_scopes(scopes, "scopes")
    widened = [s.value for s in chosen if s.value not in pending.scopes]
    if widened:
        raise ValidationFailed.field(
            "scopes", f"{', '.join(widened)} was not asked for by the app.", list(pending.scopes)
        )
    if Scope.READ not in chosen:
        chosen.append(Scope.READ)  # every grant reads: it is what MCP does first
    cap = parse_enum(role, Role, "role") if role else None

    def work(uow: UnitOfWork) -> tuple[Grant, str]:
        repo = oauth_of(uow)
        if not repo.take_request(request_id):
            raise NotFound(
                "This sign-in request was already answered.", {"resource": "authorization_request"}
            )
        project_id = None
        if project:
            access = access_project(uow, actor, project)
            project_id = access.project.id
            if cap is not None and not access.member_role.includes(cap):
                raise PermissionDenied(
                    f"An app cannot hold more than you: you have {access.member_role} on "
                    f"{access.project.key}.",
                    {"role": str(access.member_role), "requestedRole": str(cap)},
                )
        grant = Grant(
            id=new_id("grt"),
            user_id=actor.user_id,
            client_id=client.id,
            client_name=client.name,
            scopes=frozenset(chosen),
            resource=pending.resource,
            project_id=project_id,
            role=cap,
            created_at=uow.now,
        )
        if client.kind == "registered":
            # A self-registered client is one install of an app: approving it again (a
            # step-up to more scopes, a new sign-in) replaces what the person approved before,
            # so one app is one connection. An app known by its metadata document is shared by
            # every install of it, so another device's approval is left alone.
            for earlier in repo.grants_of(actor.user_id):
                if earlier.client_id == client.id:
                    _revoke(uow, earlier, "replaced")
        repo.add_grant(grant)
        code = generate_token_secret(CODE_PREFIX)
        repo.add_secret(
            hash_token_secret(code),
            "code",
            grant.id,
            created_at=uow.now,
            expires_at=uow.now + CODE_TTL,
            redirect_uri=pending.redirect_uri,
            redirect_explicit=pending.redirect_explicit,
            code_challenge=pending.code_challenge,
        )
        uow.record_event(
            "oauth.grant_created",
            actor=actor.as_payload(),
            payload={"grant": grant_view(grant)},
            project_id=project_id,
        )
        return grant, _redirect(pending, issuer, code=code)

    return db.write(work)


def deny(db: Database, actor: Actor, request_id: str, *, issuer: str) -> str:
    """The person says no: the redirect telling the app so."""
    _person_only(actor)
    pending, _client = pending_authorization(db, request_id)
    db.write(lambda uow: oauth_of(uow).take_request(request_id))
    return _redirect(
        pending, issuer, error="access_denied", error_description="The person declined."
    )


# Token endpoint ---------------------------------------------------------------------------


def _revoke(uow: UnitOfWork, grant: Grant, reason: str) -> None:
    if oauth_of(uow).revoke_grant(grant.id, uow.now, reason):
        _revoked(uow, grant, SYSTEM_ACTOR, reason)


def _revoked(uow: UnitOfWork, grant: Grant, actor: dict[str, str | None], reason: str) -> None:
    """Record a grant's revocation; the stream tokens made through it end with it."""
    uow.record_event(
        "oauth.grant_revoked",
        actor=actor,
        payload={"grantId": grant.id, "reason": reason},
        project_id=grant.project_id,
    )
    do_revoke_made_by(uow, grant.user_id, grant.id)


def grant_active(uow: UnitOfWork, grant_id: str) -> bool:
    """Whether an approval still stands (a stream token made through it lives as long)."""
    grant = oauth_of(uow).grant(grant_id)
    return grant is not None and grant.active


def _live_secret(
    uow: UnitOfWork, secret: str, kind: str, client_id: str
) -> tuple[Any, Grant] | None:
    """The row and grant of an unexpired, unused secret of this kind and client, or None.
    One presented again revokes its grant and every token it gave."""
    found = oauth_of(uow).secret(hash_token_secret(secret))
    if found is None:
        return None
    row, grant = found
    if row.kind != kind or grant.client_id != client_id or not grant.active:
        return None
    if row.used_at is not None:
        _revoke(uow, grant, f"{kind}_replayed")
        return None
    if row.expires_at <= uow.now:
        return None
    return row, grant


def load_code(db: Database, client_id: str, code: str) -> CodeRecord | None:
    """The code's record, or None when unknown, expired (on the server's clock), another
    client's or already used (a used code revokes its grant and every token it gave)."""
    if not is_well_formed(code, CODE_PREFIX):
        return None

    def work(uow: UnitOfWork) -> CodeRecord | None:
        found = _live_secret(uow, code, "code", client_id)
        if found is None:
            return None
        row, grant = found
        return CodeRecord(
            grant=grant,
            redirect_uri=row.redirect_uri,
            redirect_explicit=bool(row.redirect_explicit),
            code_challenge=row.code_challenge,
            expires_at=row.expires_at,
        )

    return db.write(work)


def _issue(uow: UnitOfWork, grant: Grant) -> TokenSet:
    repo = oauth_of(uow)
    repo.prune(uow.now)  # expired codes and tokens go as new ones come
    access = generate_token_secret(ACCESS_PREFIX)
    refresh = generate_token_secret(REFRESH_PREFIX)
    for secret, kind, ttl in ((access, "access", ACCESS_TTL), (refresh, "refresh", REFRESH_TTL)):
        repo.add_secret(
            hash_token_secret(secret), kind, grant.id, created_at=uow.now, expires_at=uow.now + ttl
        )
    return TokenSet(
        access_token=access,
        refresh_token=refresh,
        expires_in=int(ACCESS_TTL.total_seconds()),
        scopes=tuple(sorted(s.value for s in grant.scopes)),
        resource=grant.resource,
    )


def _spend(db: Database, secret: str, replay_reason: str) -> TokenSet | None:
    """Claim a checked code or refresh token and issue tokens for its grant; None when it was
    spent meanwhile (its grant is then revoked) or the grant ended."""

    def work(uow: UnitOfWork) -> TokenSet | None:
        repo = oauth_of(uow)
        secret_hash = hash_token_secret(secret)
        found = repo.secret(secret_hash)
        if found is None or not found[1].active:
            return None
        grant = found[1]
        if not repo.claim(secret_hash, uow.now):
            _revoke(uow, grant, replay_reason)
            return None
        return _issue(uow, grant)

    return db.write(work)


def exchange_code(db: Database, code: str) -> TokenSet:
    """Trade a checked code for tokens, once.

    Raises:
        Replayed: the code was exchanged meanwhile; its grant is revoked.
    """
    tokens = _spend(db, code, "code_replayed")
    if tokens is None:
        raise Replayed("The authorization code was already used; the app's access is revoked.")
    return tokens


def load_refresh(db: Database, client_id: str, token: str) -> Grant | None:
    """The grant of a live refresh token of this client, or None. A rotated token presented
    again revokes its grant (the whole family)."""
    if not is_well_formed(token, REFRESH_PREFIX):
        return None

    def work(uow: UnitOfWork) -> Grant | None:
        found = _live_secret(uow, token, "refresh", client_id)
        return None if found is None else found[1]

    return db.write(work)


def rotate_refresh(db: Database, token: str) -> TokenSet:
    """Trade a refresh token for new tokens; the old one is spent.

    Raises:
        Replayed: it was spent meanwhile (two uses); its grant is revoked.
    """
    tokens = _spend(db, token, "refresh_replayed")
    if tokens is None:
        raise Replayed("The refresh token was already used; the app's access is revoked.")
    return tokens


def client_of_access_token(db: Database, secret: str) -> str | None:
    """The client an access token was given to (for revocation), or None."""
    if not is_well_formed(secret, ACCESS_PREFIX):
        return None
    found = db.read(lambda uow: oauth_of(uow).secret(hash_token_secret(secret)))
    return found[1].client_id if found and found[0].kind == "access" else None


def revoke_secret(db: Database, client_id: str, secret: str) -> None:
    """RFC 7009: revoking a refresh token ends its grant; an access token ends alone."""
    prefix = REFRESH_PREFIX if secret.startswith(REFRESH_PREFIX) else ACCESS_PREFIX
    if not is_well_formed(secret, prefix):
        return

    def work(uow: UnitOfWork) -> None:
        repo = oauth_of(uow)
        found = repo.secret(hash_token_secret(secret))
        if found is None or found[1].client_id != client_id:
            return
        if found[0].kind == "refresh":
            _revoke(uow, found[1], "revoked_by_client")
        else:
            repo.drop_secret(hash_token_secret(secret))

    db.write(work)


# The resource side ------------------------------------------------------------------------


def is_access_token(secret: str) -> bool:
    return secret.startswith(ACCESS_PREFIX)


def acts_for_grant(actor: Actor) -> bool:
    """Whether the actor came in with an OAuth access token (its token is a grant)."""
    return actor.token is not None and actor.token.display_prefix == ACCESS_PREFIX


def grant_token(grant: Grant) -> ApiToken:
    """The grant as the personal token it acts as (its id is the grant's)."""
    return ApiToken(
        id=grant.id,
        user_id=grant.user_id,
        name=f"{grant.client_name} (connected app)",
        kind=TokenKind.PERSONAL,
        scopes=grant.scopes,
        display_prefix=ACCESS_PREFIX,
        created_at=grant.created_at,
        project_id=grant.project_id,
        role=grant.role,
        last_used_at=grant.last_used_at,
        revoked_at=grant.revoked_at,
    )


def authenticate_access_token(db: Database, secret: str, audience: str) -> Actor:
    """Turn an OAuth access token into the person it acts for; checked on every message.

    Raises:
        Unauthenticated: malformed, unknown, expired or revoked, or issued for another resource.
    """
    if not is_well_formed(secret, ACCESS_PREFIX):
        raise Unauthenticated("The access token is malformed; sign in again from your app.")
    found = db.read(lambda uow: oauth_of(uow).access(hash_token_secret(secret)))
    if found is None or found[0] != "access" or not found[2].active:
        raise Unauthenticated("The access token is unknown or was revoked; sign in again.")
    _kind, expires_at, grant, display_name = found
    now = db.clock.now()
    if expires_at <= now:
        raise Unauthenticated("The access token expired; refresh it or sign in again.")
    if grant.resource.rstrip("/") != audience.rstrip("/"):
        raise Unauthenticated(
            f"The access token was issued for {grant.resource}, not for {audience}; sign in again."
        )
    if grant.last_used_at is None or now - grant.last_used_at >= LAST_USED_RESOLUTION:
        db.write(
            lambda uow: oauth_of(uow).touch_grant(
                grant.id, uow.now, older_than=uow.now - LAST_USED_RESOLUTION
            )
        )
    token = grant_token(grant)
    return Actor(user_id=grant.user_id, scopes=grant.scopes, token=token, display_name=display_name)


# Settings -> Connections ------------------------------------------------------------------


def grant_view(grant: Grant) -> dict[str, object]:
    return {
        "id": grant.id,
        "clientId": grant.client_id,
        "clientName": grant.client_name,
        "scopes": sorted(s.value for s in grant.scopes),
        "projectId": grant.project_id,
        "role": grant.role.value if grant.role else None,
        "resource": grant.resource,
        "createdAt": grant.created_at.isoformat(),
        "lastUsedAt": grant.last_used_at.isoformat() if grant.last_used_at else None,
        "revokedAt": grant.revoked_at.isoformat() if grant.revoked_at else None,
    }


def list_connections(db: Database, actor: Actor) -> list[Grant]:
    """The apps the person approved and has not revoked."""
    _person_only(actor)
    return db.read(lambda uow: oauth_of(uow).grants_of(actor.user_id))


def revoke_connection(db: Database, actor: Actor, grant_id: str) -> Grant:
    """Revoke an approval; its tokens stop working on their next message.

    Raises:
        NotFound: no such connection of this person.
    """
    _person_only(actor)

    def work(uow: UnitOfWork) -> Grant:
        repo = oauth_of(uow)
        grant = repo.grant(grant_id) if is_storable_key(grant_id, MAX_REQUEST_ID_LENGTH) else None
        if grant is None or grant.user_id != actor.user_id:
            raise NotFound(
                f"No connection {grant_id!r}.", {"resource": "connection", "id": grant_id}
            )
        if repo.revoke_grant(grant.id, uow.now, "revoked_by_person"):
            _revoked(uow, grant, actor.as_payload(), "revoked_by_person")
        return repo.grant(grant_id) or grant

    return db.write(work)
