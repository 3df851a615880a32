"""Who may open a live stream, whose room it takes, what ends it, and whether its credential
still works: for the REST stream (`/api/v1/projects/{p}/events`: a stream token, an API token
or a signed-in browser) and the web app's own (`/events`).

A stream lives as long as the credential it was opened with, and a stream token as long as
the token or OAuth approval that made it: each stream's `Claim` names them, and the broker
ends the stream when the event log says one ended (see `crewboard.services.live`). `recheck`
asks the database again (an expiry writes no event).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from crewboard.domain.identity.access import Role
from crewboard.domain.identity.tokens import STREAM_PREFIX
from crewboard.errors import NotFound, Unauthenticated
from crewboard.services.identity.access import access_project
from crewboard.services.identity.stream_tokens import stream_grant, stream_token_ends
from crewboard.services.identity.tokens import authenticate_token
from crewboard.services.identity.web_sessions import (
    SignedIn,
    session_ends,
    session_of,
    session_ref,
)
from crewboard.services.live import SESSION, Claim
from crewboard.services.oauth.grants import grant_active
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

ROLE_REMOVED = "your role on this project was removed"
MAX_WEB_PROJECTS = 200  # projects one web app stream follows


@dataclass(frozen=True)
class StreamAccess:
    """What a stream may follow, whose room it takes, and how to ask whether it still may."""

    project_ids: tuple[str, ...]
    claim: Claim
    recheck: Callable[[], str | None]  # why it may no longer, or None (reads the database)


def _session_credential(signed_in: SignedIn) -> str:
    return SESSION + session_ref(signed_in.session.id)


def _maker_ends(uow: UnitOfWork, maker: str) -> str | None:
    """Why the token or OAuth approval that made a stream token no longer works, or None."""
    if maker.startswith("grt_"):
        alive = grant_active(uow, maker)
        return None if alive else "the app approval (OAuth) that made this stream token was revoked"
    token = uow.tokens.get(maker)
    return None if token and token.active else "the token that made this stream token was revoked"


def _role_ends(uow: UnitOfWork, user_id: str, projects: tuple[str, ...]) -> str | None:
    if len(projects) == 1:
        kept = uow.projects.member_role(projects[0], user_id) is not None
    else:
        page = uow.projects.list_for_user(user_id, limit=MAX_WEB_PROJECTS)
        kept = set(projects) <= {p.id for p, _ in page.rows}
    return None if kept else ROLE_REMOVED


Check = Callable[[UnitOfWork], str | None]


def _recheck(db: Database, checks: list[Check]) -> str | None:
    def work(uow: UnitOfWork) -> str | None:
        return next((why for check in checks if (why := check(uow)) is not None), None)

    return db.read(work)


def _token_ends(uow: UnitOfWork, token_id: str) -> str | None:
    token = uow.tokens.get(token_id)
    return None if token and token.active else "the token was revoked"


def rest_stream_access(
    db: Database, ref: str, *, secret: str | None, cookie: str | None
) -> StreamAccess:
    """The REST stream of one project (id or key) for a bearer secret, or else a session.

    Raises:
        Unauthenticated: no credential, or one that no longer works (a stream token whose
            maker was revoked too). NotFound, PermissionDenied: the project is not open to it.
    """
    if secret is None:
        signed_in = session_of(db, cookie)
        if signed_in is None:
            raise Unauthenticated("Sign in again, or send a token.")
        return _as_session(db, ref, signed_in)
    if secret.startswith(STREAM_PREFIX):
        return _as_stream_token(db, ref, secret)
    actor = authenticate_token(db, secret)
    token = actor.token
    assert token is not None  # noqa: S101 - authenticate_token gives a token's actor
    access = db.read(lambda uow: access_project(uow, actor, ref))
    project = access.project.id
    claim = Claim(
        holder=token.id,
        person=actor.user_id,
        credentials={token.id: "the token"},
        admin_of=frozenset({project} if access.role is Role.ADMIN else ()),
    )
    checks: list[Check] = [partial(_token_ends, token_id=token.id), _roles(actor.user_id, project)]
    return StreamAccess((project,), claim, partial(_recheck, db, checks))


def _roles(user_id: str, *projects: str) -> Check:
    return partial(_role_ends, user_id=user_id, projects=projects)


def _as_session(db: Database, ref: str, signed_in: SignedIn) -> StreamAccess:
    access = db.read(lambda uow: access_project(uow, signed_in.actor, ref))
    project, person = access.project.id, signed_in.user.id
    credential = _session_credential(signed_in)
    claim = Claim(
        holder=credential,
        person=person,
        credentials={credential: "your browser session"},
        admin_of=frozenset({project} if access.role is Role.ADMIN else ()),
    )
    checks: list[Check] = [
        partial(session_ends, session_id=signed_in.session.id),
        _roles(person, project),
    ]
    return StreamAccess((project,), claim, partial(_recheck, db, checks))


def _as_stream_token(db: Database, ref: str, secret: str) -> StreamAccess:
    grant = stream_grant(db, secret)
    if grant is None:
        raise Unauthenticated("This stream token is unknown, revoked or expired.")

    def work(uow: UnitOfWork) -> tuple[str, Role]:
        if grant.made_by is not None and (why := _maker_ends(uow, grant.made_by)) is not None:
            raise Unauthenticated(f"This stream token no longer works: {why}.")
        found = None if "\x00" in ref else uow.projects.get_with_role(ref, grant.user_id)
        if found is None or found[0].id not in grant.project_ids or found[1] is None:
            raise NotFound(
                f"This stream token does not follow project {ref!r}.",
                {"resource": "project", "ref": ref},
            )
        return str(found[0].id), found[1]

    project, role = db.read(work)
    credentials = {grant.token_id: "the stream token"}
    checks: list[Check] = [partial(stream_token_ends, token_id=grant.token_id)]
    if grant.made_by is not None:
        made_by = grant.made_by
        credentials[made_by] = (
            "the app approval (OAuth) that made this stream token"
            if made_by.startswith("grt_")
            else "the token that made this stream token"
        )
        checks.append(partial(_maker_ends, maker=made_by))
    claim = Claim(
        holder=grant.token_id,
        person=grant.user_id,
        credentials=credentials,
        admin_of=frozenset({project} if role is Role.ADMIN else ()),
    )
    checks.append(_roles(grant.user_id, project))
    return StreamAccess((project,), claim, partial(_recheck, db, checks))


def web_stream_access(
    db: Database, cookie: str | None, wanted: str | None, *, tabs: int
) -> StreamAccess | None:
    """The web app's stream of the person's projects (or the one `wanted`, by id or key), at
    most `tabs` on one browser session; None when the cookie names no live session."""
    signed_in = session_of(db, cookie)
    if signed_in is None:
        return None
    person = signed_in.user.id

    def work(uow: UnitOfWork) -> list[tuple[str, Role]]:
        page = uow.projects.list_for_user(person, include_archived=False, limit=MAX_WEB_PROJECTS)
        return [(p.id, role) for p, role in page.rows if wanted in (None, p.id, p.key)]

    followed = db.read(work)
    ids = tuple(p for p, _ in followed)
    credential = _session_credential(signed_in)
    claim = Claim(
        holder=credential,
        person=person,
        credentials={credential: "your browser session"},
        web=True,
        admin_of=frozenset(p for p, role in followed if role is Role.ADMIN),
        per_holder=tabs,
    )
    checks: list[Check] = [
        partial(session_ends, session_id=signed_in.session.id),
        _roles(person, *ids),
    ]
    return StreamAccess(ids, claim, partial(_recheck, db, checks))
