"""OAuth clients: registered here (RFC 7591) or known by the URL of a metadata document."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from anyio import to_thread

from crewboard.domain.identity.tokens import hash_token_secret
from crewboard.domain.oauth import (
    MAX_CLIENT_ID_LENGTH,
    MAX_CLIENT_NAME,
    MAX_REDIRECT_URIS,
    OAuthClient,
    cache_lifetime,
    document_url_problem,
    is_storable_key,
    redirect_uri_problem,
    registered_scope,
)
from crewboard.errors import ValidationFailed
from crewboard.services.oauth.documents import (
    DocumentRefused,
    FetchPolicy,
    checked_addresses,
    fetch_document,
)
from crewboard.services.oauth.grants import SCOPE_NAMES, oauth_of
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")


@dataclass(frozen=True)
class ClientPolicy:
    """What the operator allows (see the `oauth_*` settings)."""

    dynamic_registration: bool = True
    documents: bool = True
    redirect_hosts: tuple[str, ...] = ()
    fetch: FetchPolicy = field(default_factory=FetchPolicy)


def _redirect_problem(uri: str, policy: ClientPolicy) -> str | None:
    problem = redirect_uri_problem(uri)
    if problem is not None or not policy.redirect_hosts:
        return problem
    parts = urlsplit(uri)
    where = parts.hostname or parts.scheme
    if where.lower() not in policy.redirect_hosts:
        return f"goes to {where!r}, which is not among the hosts this server allows"
    return None


def check_redirect_uris(uris: list[str], policy: ClientPolicy) -> tuple[str, ...]:
    """Raises ValidationFailed (field redirect_uris) naming the first bad URI."""
    if not uris:
        raise ValidationFailed.field("redirect_uris", "give at least one redirect URI.")
    if len(uris) > MAX_REDIRECT_URIS:
        raise ValidationFailed.field("redirect_uris", f"at most {MAX_REDIRECT_URIS} are accepted.")
    for uri in uris:
        problem = _redirect_problem(uri, policy)
        if problem is not None:
            raise ValidationFailed.field("redirect_uris", f"{uri[:200]!r} {problem}.")
    return tuple(uris)


def client_name(metadata: dict[str, Any], fallback: str) -> str:
    """The name a client gives itself, on one line without control characters, within the
    column's length (the fallback when it gives none)."""
    name = metadata.get("client_name")
    text = " ".join(name.split()) if isinstance(name, str) else ""
    text = "".join(char for char in text if char.isprintable())
    return (text or fallback)[:MAX_CLIENT_NAME]


def register_client(
    db: Database,
    policy: ClientPolicy,
    metadata: dict[str, Any],
    *,
    client_id: str | None = None,
    secret: str | None = None,
) -> OAuthClient:
    """Store a self-registered client; its secret (if any) is kept only as a hash.

    Raises:
        ValidationFailed: registration is off, or a redirect URI or the auth method is refused.
    """
    if not policy.dynamic_registration:
        raise ValidationFailed.field(
            "registration", "this server does not let clients register themselves."
        )
    uris = check_redirect_uris([str(u) for u in metadata.get("redirect_uris") or []], policy)
    method = str(metadata.get("token_endpoint_auth_method") or "client_secret_post")
    if method not in AUTH_METHODS:
        raise ValidationFailed.field(
            "token_endpoint_auth_method", f"{method!r} is not supported.", list(AUTH_METHODS)
        )

    def work(uow: UnitOfWork) -> OAuthClient:
        client = OAuthClient(
            id=client_id or secrets.token_urlsafe(18),
            kind="registered",
            name=client_name(metadata, "Unnamed app"),
            redirect_uris=uris,
            auth_method=method,
            scope=registered_scope(_text_or_none(metadata.get("scope")), SCOPE_NAMES),
            metadata=metadata,
            created_at=uow.now,
        )
        oauth_of(uow).put_client(client, hash_token_secret(secret) if secret else None)
        return client

    return db.write(work)


def stored_client(db: Database, client_id: str) -> tuple[OAuthClient, str | None] | None:
    return db.read(lambda uow: oauth_of(uow).client(client_id))


def is_document_id(client_id: str) -> bool:
    return client_id.startswith("https://")


async def find_client(
    db: Database, policy: ClientPolicy, client_id: str
) -> tuple[OAuthClient, str | None] | None:
    """A client by its id: from the database, or (for an https URL) its metadata document,
    fetched when not cached or its cache expired.

    Raises:
        DocumentRefused: the document could not be fetched or is not usable.
    """
    if not is_storable_key(client_id, MAX_CLIENT_ID_LENGTH):
        return None
    found = await to_thread.run_sync(stored_client, db, client_id)
    if not is_document_id(client_id):
        return found
    if not policy.documents:
        raise DocumentRefused("this server does not accept client ID metadata documents")
    now = db.clock.now()
    if found is not None and found[0].expires_at is not None and found[0].expires_at > now:
        # A copy cached while private addresses were allowed is not used once they are not.
        if not policy.fetch.allow_private:
            try:
                with anyio.fail_after(policy.fetch.timeout):
                    await checked_addresses(client_id, policy.fetch)
            except TimeoutError as error:
                raise DocumentRefused(
                    "the metadata document's host took too long to resolve"
                ) from error
        return found
    problem = document_url_problem(client_id)
    if problem is not None:
        raise DocumentRefused(f"a client ID metadata document URL {problem}")
    fetched = await fetch_document(client_id, policy.fetch)
    client = _document_client(client_id, fetched.body, policy, db, fetched.cache_control)
    await to_thread.run_sync(_store_document, db, client)
    return client, None


def _document_client(
    url: str, body: dict[str, Any], policy: ClientPolicy, db: Database, cache_control: str | None
) -> OAuthClient:
    if body.get("client_id") != url:
        raise DocumentRefused(
            "the metadata document's client_id is not the URL it was fetched from"
        )
    method = body.get("token_endpoint_auth_method") or "none"
    if method != "none":
        raise DocumentRefused(
            "a client known by its metadata document must be public "
            "(token_endpoint_auth_method none)"
        )
    uris = body.get("redirect_uris")
    if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
        raise DocumentRefused("the metadata document has no redirect_uris list")
    try:
        checked = check_redirect_uris(uris, policy)
    except ValidationFailed as error:
        raise DocumentRefused(error.message) from error
    now = db.clock.now()
    return OAuthClient(
        id=url,
        kind="document",
        name=client_name(body, urlsplit(url).hostname or url),
        redirect_uris=checked,
        auth_method="none",
        scope=registered_scope(_text_or_none(body.get("scope")), SCOPE_NAMES),
        metadata=body,
        created_at=now,
        expires_at=now + cache_lifetime(cache_control),
    )


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _store_document(db: Database, client: OAuthClient) -> None:
    db.write(lambda uow: oauth_of(uow).put_client(client, None))


def check_secret(stored_hash: str | None, given: str | None) -> bool:
    """A confidential client's secret against its stored hash (constant time)."""
    if stored_hash is None or not given:
        return False
    return secrets.compare_digest(stored_hash, hash_token_secret(given))


def policy_from(
    *,
    dynamic_registration: bool,
    documents: bool,
    redirect_hosts: list[str],
    allow_private: bool,
    ca_file: Path | None,
) -> ClientPolicy:
    return ClientPolicy(
        dynamic_registration=dynamic_registration,
        documents=documents,
        redirect_hosts=tuple(h.lower() for h in redirect_hosts),
        fetch=FetchPolicy(allow_private=allow_private, ca_file=ca_file),
    )
