"""People: accounts, passwords, and acting as one from the operator CLI."""

from __future__ import annotations

import functools

from crewboard.domain.identity.access import ALL_SCOPES
from crewboard.domain.identity.passwords import (
    MAX_PASSWORD_LENGTH,
    MIN_PASSWORD_LENGTH,
    hash_password,
    verify_password,
)
from crewboard.domain.identity.records import Actor, User
from crewboard.domain.ids import new_id
from crewboard.domain.validation import check_email, check_text
from crewboard.errors import (
    AlreadyExists,
    LimitExceeded,
    NotFound,
    Unauthenticated,
    ValidationFailed,
)
from crewboard.services.views import user_view
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

SYSTEM_ACTOR = {"kind": "operator", "userId": None, "tokenId": None}


def check_password(password: str) -> str:
    """Raises: ValidationFailed or LimitExceeded when the password is too short or too long."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValidationFailed.field(
            "password", f"needs at least {MIN_PASSWORD_LENGTH} characters; it has {len(password)}."
        )
    if len(password) > MAX_PASSWORD_LENGTH:
        raise LimitExceeded(
            f"password: over the limit of {MAX_PASSWORD_LENGTH} characters.",
            {"field": "password", "limit": MAX_PASSWORD_LENGTH},
        )
    return password


def do_create_user(
    uow: UnitOfWork, *, email: str, display_name: str, password_hash: str, is_owner: bool = False
) -> User:
    """Raises: AlreadyExists when the email is taken."""
    if uow.users.get_by_email(email) is not None:
        raise AlreadyExists(f"A user with email {email} already exists.", {"email": email})
    user = User(
        id=new_id("usr"),
        email=email,
        display_name=display_name,
        created_at=uow.now,
        is_owner=is_owner,
    )
    uow.users.add(user, password_hash)
    uow.record_event("user.created", actor=SYSTEM_ACTOR, payload={"user": user_view(user)})
    return user


MAX_DISPLAY_NAME = 120


def check_display_name(value: str) -> str:
    """A person's name as shown: 1-120 characters, no NUL.

    Raises:
        ValidationFailed, LimitExceeded: naming displayName.
    """
    return check_text("displayName", value, max_length=MAX_DISPLAY_NAME, required=True)


def create_user(
    db: Database,
    *,
    email: str,
    password: str,
    display_name: str | None = None,
    is_owner: bool = False,
) -> User:
    """Create a person's account.

    Raises:
        ValidationFailed, LimitExceeded: on a bad email, name or password.
        AlreadyExists: when the email is taken.
    """
    email = check_email(email)
    name = check_display_name(display_name or email.split("@")[0])
    password_hash = hash_password(check_password(password))  # slow on purpose: outside the lock
    return db.write(
        lambda uow: do_create_user(
            uow, email=email, display_name=name, password_hash=password_hash, is_owner=is_owner
        )
    )


def list_users(db: Database) -> list[User]:
    return db.read(lambda uow: uow.users.list())


def get_user_by_email(db: Database, email: str) -> User:
    """Raises: NotFound when no account has this email."""
    address = check_email(email)
    user = db.read(lambda uow: uow.users.get_by_email(address))
    if user is None:
        raise NotFound(f"No user with email {address}.", {"resource": "user", "email": address})
    return user


def set_password(db: Database, *, email: str, password: str) -> User:
    """Raises: NotFound, ValidationFailed, LimitExceeded."""
    user = get_user_by_email(db, email)
    password_hash = hash_password(check_password(password))

    def work(uow: UnitOfWork) -> User:
        uow.users.set_password_hash(user.id, password_hash, uow.now)
        uow.record_event("user.password_changed", actor=SYSTEM_ACTOR, payload={"userId": user.id})
        return user

    return db.write(work)


def authenticate_password(db: Database, *, email: str, password: str) -> User:
    """Check a person's email and password.

    Raises:
        Unauthenticated: the same answer for an unknown email and a wrong password.
    """
    try:
        address = check_email(email)
    except ValidationFailed:
        address = ""
    found = db.read(
        lambda uow: (
            (u, uow.users.password_hash(u.id)) if (u := uow.users.get_by_email(address)) else None
        )
    )
    if found is None:
        verify_password(_dummy_hash(), password)  # same cost as a real check: no email probing
        raise Unauthenticated("The email or password is not right.")
    user, password_hash = found
    if password_hash is None or not verify_password(password_hash, password):
        raise Unauthenticated("The email or password is not right.")
    return user


@functools.cache
def _dummy_hash() -> str:
    return hash_password("not a password anyone has")


def person_actor(user: User) -> Actor:
    """A person acting directly (web session, operator CLI `--as`): every scope, their own roles."""
    return Actor(user_id=user.id, scopes=ALL_SCOPES, display_name=user.display_name)
