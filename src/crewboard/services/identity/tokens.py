"""API tokens: issue (secret shown once), authenticate, list, revoke."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Required, TypedDict, Unpack

from crewboard.domain.identity.access import (
    Role,
    Scope,
    TokenKind,
    Toolset,
    parse_enum,
    parse_enum_list,
)
from crewboard.domain.identity.records import Actor, ApiToken, ListedToken, TokenSeat
from crewboard.domain.identity.tokens import (
    display_prefix,
    generate_token_secret,
    hash_token_secret,
    is_well_formed,
)
from crewboard.domain.ids import new_id
from crewboard.domain.validation import check_text
from crewboard.errors import NotFound, PermissionDenied, Unauthenticated, ValidationFailed
from crewboard.services.identity.access import ANY_WORKSPACE, access_project, open_projects
from crewboard.services.identity.stream_tokens import do_revoke_made_by
from crewboard.services.identity.users import SYSTEM_ACTOR
from crewboard.services.seats import ai_seats_of_projects, check_seat, token_seats
from crewboard.services.views import token_view
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

# Recording every use would turn each read into a write; once a minute is enough to show.
LAST_USED_RESOLUTION = timedelta(seconds=60)


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    secret: str  # shown once, never stored
    seat: TokenSeat | None = None  # an agent token's seat, as listings show it


@dataclass(frozen=True)
class SeatChoice:
    """An AI seat the token form offers, under its project's key."""

    project_key: str
    id: str
    name: str


@dataclass(frozen=True)
class TokenScreen:
    """The tokens page: the person's tokens with their seats, and the seats a new one may
    take."""

    tokens: tuple[ListedToken, ...]
    seats: tuple[SeatChoice, ...]


def do_issue_token(
    uow: UnitOfWork,
    actor: Actor,
    *,
    kind: str,
    scopes: list[str],
    name: str | None = None,
    project: str | None = None,
    role: str | None = None,
    toolsets: list[str] | None = None,
    seat: str | None = None,
) -> IssuedToken:
    """Issue a token for the actor's own user. `seat` (an agent token's AI seat on its
    project, by id or name) is stored; without one see services/seats for the seat it takes.

    Raises:
        PermissionDenied: a token issuing tokens, or a role above the person's own.
        ValidationFailed: unknown kind, scope, role or toolset; agent token without project;
            a seat that is not an active AI seat of the project (named `seat`).
        NotFound: the project is not open to the person.
    """
    if actor.token is not None:
        raise PermissionDenied(
            "Tokens are issued by a person in the web app or the CLI, not through another token."
        )
    token_kind = parse_enum(kind, TokenKind, "kind")
    token_scopes = parse_enum_list(scopes, Scope, "scopes")
    if Scope.READ not in token_scopes:
        raise ValidationFailed.field(
            "scopes", "every token needs the read scope; add it.", [s.value for s in Scope]
        )
    token_role = parse_enum(role, Role, "role") if role is not None else None
    if project is None and (token_kind is TokenKind.AGENT or token_role is not None):
        raise ValidationFailed.field(
            "project",
            "an agent token acts on one project's team, and a role applies on one project: "
            "name the project.",
        )
    project_id = None
    if project is not None:
        access = access_project(uow, actor, project)
        project_id = access.project.id
        if token_role is not None and not access.member_role.includes(token_role):
            raise PermissionDenied(
                f"A token cannot hold more than its person: you have {access.member_role} on "
                f"{access.project.key}, the token asks for {token_role}.",
                {"role": str(access.member_role), "requestedRole": str(token_role)},
            )
    secret = generate_token_secret()
    token = ApiToken(
        id=new_id("tok"),
        user_id=actor.user_id,
        name=check_text("name", name or f"{token_kind} token", max_length=120, required=True),
        kind=token_kind,
        scopes=frozenset(token_scopes),
        display_prefix=display_prefix(secret),
        created_at=uow.now,
        project_id=project_id,
        role=token_role,
        toolsets=tuple(parse_enum_list(toolsets or [], Toolset, "toolsets")),
        seat_id=check_seat(uow, project_id, token_kind, seat) if seat else None,
    )
    uow.tokens.add(token, hash_token_secret(secret))
    shown = token_seats(uow, [token]).get(token.id)
    uow.record_event(
        "token.created",
        actor=actor.as_payload(),
        payload={"token": token_view(token, shown)},
        project_id=project_id,
    )
    return IssuedToken(token=token, secret=secret, seat=shown)


class TokenOptions(TypedDict, total=False):
    """`issue_token`'s fields, as `do_issue_token` takes them."""

    kind: Required[str]
    scopes: Required[list[str]]
    name: str | None
    project: str | None
    role: str | None
    toolsets: list[str] | None
    seat: str | None


def issue_token(db: Database, actor: Actor, **options: Unpack[TokenOptions]) -> IssuedToken:
    """Issue a token for the actor's user; see `do_issue_token` for the refusals."""
    return db.write(lambda uow: do_issue_token(uow, actor, **options))


def authenticate_token(db: Database, secret: str) -> Actor:
    """Turn a bearer secret into the actor it stands for; checked again on every message.

    Raises:
        Unauthenticated: malformed, unknown or revoked token, or its user is gone.
    """
    if not is_well_formed(secret):
        raise Unauthenticated(
            "The bearer token is not a Crewboard token (cb_…); check it was copied whole."
        )

    def lookup(uow: UnitOfWork) -> Actor | None:
        found = uow.tokens.with_person(hash_token_secret(secret))
        if found is None or not found[0].active:
            return None
        token, display_name = found
        return Actor(
            user_id=token.user_id, scopes=token.scopes, token=token, display_name=display_name
        )

    actor = db.read(lookup)
    if actor is None or actor.token is None:
        raise Unauthenticated("The token is unknown or was revoked; ask for a new one.")
    _record_use(db, actor.token)
    return actor


def _record_use(db: Database, token: ApiToken) -> None:
    now = db.clock.now()
    if token.last_used_at is not None and now - token.last_used_at < LAST_USED_RESOLUTION:
        return
    db.write(
        lambda uow: uow.tokens.touch(token.id, uow.now, older_than=uow.now - LAST_USED_RESOLUTION)
    )


def list_tokens(db: Database, actor: Actor, *, include_revoked: bool = False) -> list[ListedToken]:
    """The actor's own tokens with their seats (an owner acting from the CLI sees only
    theirs, too)."""
    return db.read(
        lambda uow: _listed(uow, uow.tokens.list(actor.user_id, include_revoked=include_revoked))
    )


def list_all_tokens(db: Database, *, include_revoked: bool = False) -> list[ListedToken]:
    """Every token of the instance with their seats: for the operator CLI only."""
    return db.read(lambda uow: _listed(uow, uow.tokens.list(None, include_revoked=include_revoked)))


def own_token(db: Database, actor: Actor) -> ListedToken | None:
    """The token the actor calls with, with its seat; None for a person acting directly."""
    token = actor.token
    if token is None:
        return None
    return db.read(lambda uow: _listed(uow, [token])[0])


def token_screen(db: Database, actor: Actor) -> TokenScreen:
    """The person's tokens (revoked ones too) and the AI seats of the projects open to them,
    for the form that makes a new one."""

    def work(uow: UnitOfWork) -> TokenScreen:
        listed = _listed(uow, uow.tokens.list(actor.user_id, include_revoked=True))
        projects = open_projects(uow, actor, None, ANY_WORKSPACE)
        seats = ai_seats_of_projects(uow, projects)
        keys = {p.id: p.key for p in projects.values()}
        return TokenScreen(
            tokens=tuple(listed),
            seats=tuple(
                sorted(
                    (SeatChoice(keys[s.project_id], s.id, s.name) for s in seats),
                    key=lambda c: (c.project_key, c.name.casefold()),
                )
            ),
        )

    return db.read(work)


def _listed(uow: UnitOfWork, tokens: list[ApiToken]) -> list[ListedToken]:
    seats = token_seats(uow, tokens)
    return [ListedToken(t, seats.get(t.id)) for t in tokens]


def revoke_token(db: Database, token_id: str, *, actor: Actor | None = None) -> ApiToken:
    """Revoke a token at once; revoking a revoked token changes nothing.

    `actor` None is the operator (CLI); a person may revoke only their own tokens.

    Raises:
        NotFound: no such token, or it belongs to someone else.
    """

    def work(uow: UnitOfWork) -> ApiToken:
        token = uow.tokens.get(token_id)
        if token is None or (actor is not None and token.user_id != actor.user_id):
            raise NotFound(f"No token {token_id!r}.", {"resource": "token", "id": token_id})
        if not token.active:
            return token
        uow.tokens.revoke(token.id, uow.now)
        revoked = replace(token, revoked_at=uow.now)
        uow.record_event(
            "token.revoked",
            actor=actor.as_payload() if actor else SYSTEM_ACTOR,
            payload={"tokenId": token.id},
            project_id=token.project_id,
        )
        do_revoke_made_by(uow, token.user_id, token.id)  # its stream tokens end with it
        return revoked

    return db.write(work)
