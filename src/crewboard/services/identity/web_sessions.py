"""Signing people in to the web app: sessions, their CSRF tokens, password changes.

The browser holds a random secret in an HttpOnly cookie; the database keeps only its SHA-256.
Every sign-in makes a new session (the id is renewed, never reused from before the login).
A session ends at sign-out, after SESSION_LIFETIME, or after IDLE_LIMIT without a request.
Its end is in the event log (`user.signed_out`, naming the session by `session_ref`, never by
its key), so its live streams end on every node at once.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from crewboard.domain.identity.passwords import hash_password, verify_password
from crewboard.domain.identity.records import Actor, User, WebSession
from crewboard.errors import Unauthenticated
from crewboard.services.identity.users import authenticate_password, check_password, person_actor
from crewboard.storage.database import Database
from crewboard.storage.identity.sessions import SessionRepository
from crewboard.storage.uow import UnitOfWork

SESSION_LIFETIME = timedelta(days=14)
IDLE_LIMIT = timedelta(days=3)
TOUCH_EVERY = timedelta(minutes=5)  # how stale last_seen_at may get before a request writes it


@dataclass(frozen=True)
class SignedIn:
    """A live session: who it is, and the token its forms must carry."""

    secret: str
    session: WebSession
    user: User

    @property
    def actor(self) -> Actor:
        return person_actor(self.user)

    @property
    def csrf_token(self) -> str:
        return self.session.csrf_token


def sessions_of(uow: UnitOfWork) -> SessionRepository:
    return SessionRepository(uow.conn)


def session_id_of(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def session_ref(session_id: str) -> str:
    """How events and live streams name a session: derived from its id, and no key to it."""
    return hashlib.sha256(f"stream:{session_id}".encode()).hexdigest()[:32]


def _record_end(uow: UnitOfWork, session: WebSession) -> None:
    uow.record_event(
        "user.signed_out",
        actor={"kind": "person", "userId": session.user_id, "tokenId": None},
        payload={"sessionRef": session_ref(session.id)},
    )


def session_ends(uow: UnitOfWork, session_id: str) -> str | None:
    """Why a session no longer works (signed out, expired, idle too long), or None."""
    session = sessions_of(uow).get(session_id)
    if session is None:
        return "you signed out"
    if session.expires_at <= uow.now or session.last_seen_at + IDLE_LIMIT <= uow.now:
        return "your session has expired; sign in again"
    return None


def sign_in(db: Database, *, email: str, password: str, replacing: str | None = None) -> SignedIn:
    """Check the password and open a new session (ending `replacing`, the browser's old one).

    Raises:
        Unauthenticated: the same answer for an unknown email and a wrong password.
    """
    user = authenticate_password(db, email=email, password=password)
    secret = secrets.token_urlsafe(32)

    def work(uow: UnitOfWork) -> WebSession:
        repo = sessions_of(uow)
        if replacing and (old := repo.get(session_id_of(replacing))) is not None:
            repo.delete(old.id)
            _record_end(uow, old)
        repo.delete_expired(user.id, uow.now)
        session = WebSession(
            id=session_id_of(secret),
            user_id=user.id,
            csrf_token=secrets.token_urlsafe(32),
            created_at=uow.now,
            last_seen_at=uow.now,
            expires_at=uow.now + SESSION_LIFETIME,
        )
        repo.add(session)
        uow.record_event("user.signed_in", actor=person_actor(user).as_payload(), payload={})
        return session

    return SignedIn(secret, db.write(work), user)


def session_of(db: Database, secret: str | None) -> SignedIn | None:
    """The live session a cookie names, or None (unknown, expired, idle too long)."""
    if not secret or len(secret) > 128:
        return None
    session_id = session_id_of(secret)

    def look(uow: UnitOfWork) -> tuple[WebSession, User] | None:
        repo = sessions_of(uow)
        session = repo.get(session_id)
        if session is None:
            return None
        if session.expires_at <= uow.now or session.last_seen_at + IDLE_LIMIT <= uow.now:
            return None
        user = uow.users.get(session.user_id)
        return (session, user) if user else None

    found = db.read(look)
    if found is None:
        return None
    session, user = found
    if session.last_seen_at + TOUCH_EVERY <= db.clock.now():
        db.write(lambda uow: sessions_of(uow).touch(session.id, uow.now))
    return SignedIn(secret, session, user)


def sign_out(db: Database, secret: str | None) -> None:
    """End the session (its live streams end with it, on every node)."""
    if not secret or len(secret) > 128:
        return

    def work(uow: UnitOfWork) -> None:
        repo = sessions_of(uow)
        session = repo.get(session_id_of(secret))
        if session is not None:
            repo.delete(session.id)
            _record_end(uow, session)

    db.write(work)


def change_password(db: Database, signed_in: SignedIn, *, current: str, new: str) -> None:
    """Set a new password after checking the current one; the person's other sessions end.

    Raises:
        Unauthenticated: the current password is wrong. ValidationFailed, LimitExceeded: the
            new one is too short or too long.
    """
    new_hash = hash_password(check_password(new))
    user = signed_in.user
    stored = db.read(lambda uow: uow.users.password_hash(user.id))
    # Checked outside the write: argon2 is slow on purpose and must not hold the write lock.
    if stored is None or not verify_password(stored, current):
        raise Unauthenticated("The current password is not right.")

    def work(uow: UnitOfWork) -> None:
        uow.users.set_password_hash(user.id, new_hash, uow.now)
        sessions_of(uow).delete_for_user(user.id, keep=signed_in.session.id)
        uow.record_event(
            "user.password_changed",
            actor=signed_in.actor.as_payload(),
            # The other sessions end: their streams too (see crewboard.services.live).
            payload={"userId": user.id, "keptSessionRef": session_ref(signed_in.session.id)},
        )

    db.write(work)
