"""First start: on an empty database, make the owner, a private demo project and a first token."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from crewboard.domain.identity.access import ALL_SCOPES
from crewboard.domain.identity.passwords import hash_password
from crewboard.domain.identity.records import User
from crewboard.domain.projects import Project
from crewboard.domain.validation import check_email
from crewboard.services.identity.tokens import IssuedToken, do_issue_token
from crewboard.services.identity.users import do_create_user, person_actor
from crewboard.services.projects.projects import do_create_project
from crewboard.storage.database import Database
from crewboard.storage.uow import UnitOfWork

DEMO_PROJECT_KEY = "DEMO"


@dataclass(frozen=True)
class FirstStart:
    owner: User
    password: str  # shown once
    project: Project
    token: IssuedToken  # its secret shown once


def initialise(db: Database, *, owner_email: str) -> FirstStart | None:
    """Set up an empty instance; None when it already has users (nothing is made twice)."""
    email = check_email(owner_email)
    if db.read(lambda uow: uow.users.count()) > 0:
        return None  # the usual restart: no password to hash (argon2 is slow on purpose)
    password = secrets.token_urlsafe(12)
    password_hash = hash_password(password)

    def work(uow: UnitOfWork) -> FirstStart | None:
        uow.serialize("first-start")  # two nodes starting at once: one sets up, one finds it done
        if uow.users.count() > 0:
            return None
        owner = do_create_user(
            uow, email=email, display_name="Owner", password_hash=password_hash, is_owner=True
        )
        actor = person_actor(owner)
        do_create_project(
            uow,
            actor,
            workspace_id=None,
            key=DEMO_PROJECT_KEY,
            name="Demo project",
            goal="Try Crewboard: connect an agent, let it hand in work, review it here.",
            phase="exploring",
            description="A private project made on first start to show how Crewboard works.",
            answer=lambda _made: {},  # no idempotency key: no answer is kept or given
        )
        project = uow.projects.get_by_key(DEMO_PROJECT_KEY)
        assert project is not None  # noqa: S101 - created just above in this transaction
        token = do_issue_token(
            uow, actor, kind="personal", scopes=sorted(ALL_SCOPES), name="first token"
        )
        return FirstStart(owner=owner, password=password, project=project, token=token)

    return db.write(work)
