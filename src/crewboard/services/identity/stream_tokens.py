"""Stream tokens: short-lived, read-only tokens an outside client uses to follow projects'
live events (`GET /api/v1/projects/{id}/events`) and nothing else.

Any person or token that may read a project may make one for it (a stream token only reads):
for at most the projects the maker can read (a project-limited token: its project), for at
most MAX_SECONDS. The secret (`cbs_…`) is shown once and stored as its SHA-256. A person holds
at most MAX_LIVE stream tokens that still work; one more is refused (revoke one, or let one
expire) rather than an older one revoked under a client that uses it.

A stream token belongs to the credential that made it: one made through an API token or an
OAuth approval is revoked with it (`do_revoke_made_by`). A revoked or expired token stops at
once: its streams end on every node (the revocation is in the event log; see
`crewboard.services.live`).

Who sees a stream token (list_stream_tokens), and may revoke it: its person (through a
project-limited token, only those that follow that project alone), and whoever administers a
project it follows (the admin role and the projects.admin scope, as changing the project
needs: a Read only token acts as read, so it sees only its person's own). An admin answers for
who reads their project's events, so may stop any token that follows it; the token is one
credential, so stopping it stops it for its other projects too. A listed token names only the
projects the viewer may read; the others are counted (`otherProjects`), not named.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from crewboard.domain.identity.access import Role, Scope, lower_role, missing_permission
from crewboard.domain.identity.records import Actor, StreamToken
from crewboard.domain.identity.tokens import (
    STREAM_PREFIX,
    display_prefix,
    generate_token_secret,
    hash_token_secret,
    is_well_formed,
)
from crewboard.domain.ids import new_id
from crewboard.domain.validation import check_text
from crewboard.errors import LimitExceeded, NotFound, ValidationFailed
from crewboard.services.identity.access import access_project
from crewboard.services.identity.users import SYSTEM_ACTOR
from crewboard.services.paging import MAX_PAGE, check_page
from crewboard.services.views import actor_stamp, iso
from crewboard.storage.database import Database
from crewboard.storage.identity.stream_tokens import StreamTokenRepository
from crewboard.storage.uow import UnitOfWork

MAX_SECONDS = 24 * 3600
DEFAULT_SECONDS = 3600
MAX_PROJECTS = 20
DEFAULT_PAGE = 50
MAX_LIVE = 20  # stream tokens one person may hold that still work


@dataclass(frozen=True)
class StreamGrant:
    """What an open stream may follow: the token, its person and projects."""

    token_id: str
    user_id: str
    project_ids: tuple[str, ...]
    made_by: str | None  # the token or OAuth approval it belongs to (None: its person's own)


def tokens_of(uow: UnitOfWork) -> StreamTokenRepository:
    return StreamTokenRepository(uow.conn)


def token_view(token: StreamToken, now: Any, keys: dict[str, str], viewer: str) -> dict[str, Any]:
    """A stream token as every answer shows it (never its secret nor its hash): the projects
    in `keys` (those the `viewer` may read) named, the others counted."""
    named = [{"id": p, "key": keys[p]} for p in token.project_ids if p in keys]
    return {
        "id": token.id,
        "name": token.name,
        "prefix": token.display_prefix,
        "scope": "read: live events",
        "projects": named,
        "otherProjects": len(token.project_ids) - len(named),
        "madeBy": maker_view(token.created_by),
        "yours": token.user_id == viewer,
        "createdAt": iso(token.created_at),
        "expiresAt": iso(token.expires_at),
        "revokedAt": iso(token.revoked_at),
        "valid": token.valid(now),
    }


def maker_view(stamp: dict[str, Any]) -> dict[str, Any]:
    """Who made a stream token, as recorded when it was made: the person, and the API token or
    connected app (OAuth approval, `grt_…`) it was made through (None: the person directly)."""
    via = None
    through = stamp.get("tokenId")
    if through:
        name = str(stamp.get("tokenName") or "")
        if str(through).startswith("grt_"):
            kind, name = "connectedApp", name.removesuffix(" (connected app)")
        else:
            kind = "agentToken" if stamp.get("kind") == "agent_token" else "apiToken"
        via = {"kind": kind, "name": name}
    person = stamp.get("userId")
    return {"userId": person, "name": stamp.get("displayName") or person, "via": via}


def _keys(uow: UnitOfWork, project_ids: set[str]) -> dict[str, str]:
    found = (uow.projects.get(p) for p in project_ids)
    return {p.id: p.key for p in found if p is not None}


def _open_keys(uow: UnitOfWork, actor: Actor, tokens: list[StreamToken]) -> dict[str, str]:
    """The keys of the projects these tokens follow that the caller may read."""
    keys = uow.projects.keys_open_to(actor.user_id, [p for t in tokens for p in t.project_ids])
    cap = actor.project_cap
    return keys if cap is None else {p: k for p, k in keys.items() if p == cap}


def administered(uow: UnitOfWork, actor: Actor) -> list[str]:
    """The projects whose stream tokens the caller sees and may revoke: those it administers
    (the admin role, not capped lower by its token, and the projects.admin scope)."""
    effective = lower_role(Role.ADMIN, actor.role_cap)
    if missing_permission(actor.scopes, effective, Scope.PROJECTS_ADMIN, Role.ADMIN):
        return []
    cap = actor.project_cap
    ids = uow.projects.ids_with_role(actor.user_id, Role.ADMIN)
    return [p for p in ids if cap is None or p == cap]


def create_stream_token(
    db: Database,
    actor: Actor,
    *,
    projects: list[str],
    lifetime_seconds: int = DEFAULT_SECONDS,
    name: str | None = None,
) -> dict[str, Any]:
    """A stream token for these projects (ids or keys), its secret shown this once.

    Raises:
        ValidationFailed: no project, too many, a lifetime outside 60..MAX_SECONDS. NotFound: a
        project the maker cannot read.
    """
    if not 1 <= len(projects) <= MAX_PROJECTS:
        raise ValidationFailed.field(
            "projectIds", f"name 1 to {MAX_PROJECTS} projects the stream may follow."
        )
    if not 60 <= lifetime_seconds <= MAX_SECONDS:
        raise ValidationFailed.field(
            "lifetimeSeconds",
            f"must be from 60 to {MAX_SECONDS} seconds (24 hours); got {lifetime_seconds}.",
        )
    label = check_text("name", name or "", max_length=120) or "stream token"
    secret = generate_token_secret(STREAM_PREFIX)

    def work(uow: UnitOfWork) -> dict[str, Any]:
        if tokens_of(uow).count_live(actor.user_id, uow.now) >= MAX_LIVE:
            raise LimitExceeded(
                f"You hold {MAX_LIVE} stream tokens that still work, the most one person may "
                "(the liveStreamTokensPerPerson limit); revoke one (list_stream_tokens shows "
                "them) or wait for one to expire.",
                {"limit": "liveStreamTokensPerPerson", "max": MAX_LIVE},
            )
        ids = []
        for ref in projects:
            project_id = access_project(uow, actor, ref).project.id
            if project_id not in ids:
                ids.append(project_id)
        token = StreamToken(
            id=new_id("stk"), user_id=actor.user_id, name=label,
            display_prefix=display_prefix(secret), project_ids=tuple(ids),
            created_by=actor_stamp(actor), created_at=uow.now,
            expires_at=uow.now + timedelta(seconds=lifetime_seconds), revoked_at=None,
        )  # fmt: skip
        tokens_of(uow).add(token, hash_token_secret(secret))
        uow.record_event(
            "stream_token.created",
            actor=actor.as_payload(),
            payload={"streamTokenId": token.id, "projectIds": ids},
        )
        keys = _keys(uow, set(ids))
        return {"streamToken": token_view(token, uow.now, keys, actor.user_id), "secret": secret}

    return db.write(work)


def _within(actor: Actor, token: StreamToken) -> bool:
    """Whether the token is the caller's own: its person's, and inside a limited token's
    project."""
    cap = actor.project_cap
    return token.user_id == actor.user_id and (cap is None or set(token.project_ids) <= {cap})


def _seen(uow: UnitOfWork, actor: Actor, token: StreamToken) -> bool:
    """Whether the caller sees (and may revoke) the token: its own, or one that follows a
    project it administers."""
    return _within(actor, token) or not set(token.project_ids).isdisjoint(administered(uow, actor))


def list_stream_tokens(
    db: Database,
    actor: Actor,
    *,
    project: str | None = None,
    include_expired: bool = True,
    include_revoked: bool = True,
    limit: int = DEFAULT_PAGE,
    offset: int = 0,
) -> dict[str, Any]:
    """One page of the stream tokens the caller sees (its own, and those following projects it
    administers), newest first, and how many there are; never a secret. `project` (id or key,
    one the caller can read) keeps those that follow it; expired and revoked ones are listed
    (each says whether it still works) unless `include_expired` / `include_revoked` is False.

    Raises:
        ValidationFailed: `limit` outside 1..MAX_PAGE, a negative `offset`. NotFound: a
        `project` the caller cannot read.
    """
    check_page(limit, offset, MAX_PAGE)

    def work(uow: UnitOfWork) -> dict[str, Any]:
        only = access_project(uow, actor, project).project.id if project else None
        found, total = tokens_of(uow).page_seen_by(
            actor.user_id, only_in=actor.project_cap, admin_of=administered(uow, actor),
            project_id=only, live_at=None if include_expired else uow.now,
            include_revoked=include_revoked, limit=limit, offset=offset,
        )  # fmt: skip
        keys = _open_keys(uow, actor, found)
        rows = [token_view(t, uow.now, keys, actor.user_id) for t in found]
        return {"streamTokens": rows, "total": total}

    return db.read(work)


def revoke_stream_token(db: Database, actor: Actor, *, token_id: str) -> dict[str, Any]:
    """Stop a stream token the caller sees (its own, or one following a project it
    administers) at once: an open stream ends within seconds. Revoking one already revoked
    changes nothing.

    Raises:
        NotFound: no such stream token the caller sees.
    """

    def work(uow: UnitOfWork) -> dict[str, Any]:
        repo = tokens_of(uow)
        found = repo.get(token_id) if "\x00" not in token_id else None
        if found is None or not _seen(uow, actor, found):
            raise NotFound(
                f"No stream token {token_id!r} of yours or of a project you administer; "
                "list_stream_tokens shows them.",
                {"resource": "streamToken", "ref": token_id},
            )
        changed = found.revoked_at is None
        if changed:
            repo.revoke(found.id, uow.now)
            uow.record_event(
                "stream_token.revoked",
                actor=actor.as_payload(),
                payload={"streamTokenId": found.id},
            )
        now = repo.get(found.id) or found
        keys = _open_keys(uow, actor, [now])
        return {"streamToken": token_view(now, uow.now, keys, actor.user_id), "changed": changed}

    return db.write(work)


def do_revoke_made_by(uow: UnitOfWork, user_id: str, maker: str) -> list[str]:
    """Revoke the person's stream tokens made through `maker` (a token or OAuth approval being
    revoked in this transaction); the ids revoked."""
    repo = tokens_of(uow)
    made = [t for t in repo.live_of(user_id, uow.now) if t.made_by == maker]
    for token in made:
        repo.revoke(token.id, uow.now)
        uow.record_event(
            "stream_token.revoked",
            actor=SYSTEM_ACTOR,
            payload={"streamTokenId": token.id, "madeBy": maker},
        )
    return [t.id for t in made]


def stream_grant(db: Database, secret: str) -> StreamGrant | None:
    """What a still valid stream token may follow, or None (unknown, revoked, expired)."""
    if not is_well_formed(secret, STREAM_PREFIX):
        return None

    def work(uow: UnitOfWork) -> StreamGrant | None:
        found = tokens_of(uow).by_hash(hash_token_secret(secret))
        if found is None or not found.valid(uow.now):
            return None
        return StreamGrant(found.id, found.user_id, found.project_ids, found.made_by)

    return db.read(work)


def stream_token_ends(uow: UnitOfWork, token_id: str) -> str | None:
    """Why a stream token no longer works ("was revoked", "has expired"), or None."""
    found = tokens_of(uow).get(token_id)
    if found is None or found.revoked_at is not None:
        return "the stream token was revoked"
    return None if found.valid(uow.now) else "the stream token has expired"
