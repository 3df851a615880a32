"""Build people, projects and tokens through the real services."""

from __future__ import annotations

import functools
import itertools

from crewboard.contract.projects import present
from crewboard.domain.identity.access import Role
from crewboard.domain.identity.passwords import hash_password
from crewboard.domain.identity.records import Actor, User
from crewboard.services.board import tasks
from crewboard.services.identity import tokens
from crewboard.services.identity.users import do_create_user, person_actor
from crewboard.storage.database import Database

PASSWORD = "correct horse battery"
_TASK_KEYS = itertools.count()


@functools.cache
def _password_hash() -> str:
    return hash_password(PASSWORD)


def count_rows(db: Database, table: str) -> int:
    with db.engine.connect() as conn:
        return int(conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar_one())


def make_user(db: Database, email: str, *, is_owner: bool = False) -> User:
    """A user whose password is PASSWORD (hashed once per run: argon2 is slow on purpose)."""
    name = email.split("@", maxsplit=1)[0]
    return db.write(
        lambda uow: do_create_user(
            uow, email=email, display_name=name, password_hash=_password_hash(), is_owner=is_owner
        )
    )


def make_project(db: Database, owner: User, key: str, **fields: object) -> str:
    result = present.create_project(
        db, person_actor(owner), workspace_id=None, key=key, name=f"Project {key}", **fields
    )
    return str(result.body["project"]["id"])


def make_task(db: Database, owner: User, project: str, title: str = "A task") -> str:
    """A task made by `owner` in `project` (its key), through create_task; its id."""
    result = tasks.create_task(
        db,
        person_actor(owner),
        project=project,
        workspace_id=None,
        idempotency_key=f"make-task-{next(_TASK_KEYS)}",  # two calls make two tasks
        title=title,
    )
    return str(result.body["task"]["id"])


def grant(db: Database, admin: User, project: str, member: User, role: Role) -> None:
    present.set_project_member(
        db, person_actor(admin), project=project, email=member.email, role=role.value
    )


def token_actor(db: Database, user: User, scopes: list[str], **options: object) -> Actor:
    """Issue a token for `user` and authenticate with it, as a door would."""
    issued = tokens.issue_token(db, person_actor(user), scopes=scopes, kind="personal", **options)  # type: ignore[arg-type]
    return tokens.authenticate_token(db, issued.secret)


def personal_secret(db: Database, person: Actor, scopes: list[str]) -> str:
    """The secret of a new personal token of `person` (acting as themselves, signed in)."""
    user = db.read(lambda uow: uow.users.get(person.user_id))
    assert user is not None
    return tokens.issue_token(db, person_actor(user), kind="personal", scopes=scopes).secret
