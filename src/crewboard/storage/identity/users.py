"""People: look-ups by id and e-mail, creation, passwords."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, bindparam, func, select

from crewboard.domain.identity.records import User
from crewboard.storage.identity import tables as t
from crewboard.storage.rows import record_from_row, record_values

# Built once: constructing a statement costs about as much as running it on SQLite.
_USER_BY_ID = select(t.users).where(t.users.c.id == bindparam("user_id"))
_USERS_BY_IDS = select(t.users).where(t.users.c.id.in_(bindparam("user_ids", expanding=True)))
_USER_BY_EMAIL = select(t.users).where(t.users.c.email == bindparam("email"))
_PASSWORD_HASH = select(t.users.c.password_hash).where(t.users.c.id == bindparam("user_id"))
_ALL_USERS = select(t.users).order_by(t.users.c.created_at, t.users.c.id)
_COUNT_USERS = select(func.count()).select_from(t.users)


def user_from_row(row: Row[Any]) -> User:
    return record_from_row(User, row)


class UserRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, user: User, password_hash: str) -> None:
        self.conn.execute(
            t.users.insert().values(
                **record_values(
                    user, t.users, password_hash=password_hash, updated_at=user.created_at
                )
            )
        )

    def get(self, user_id: str) -> User | None:
        row = self.conn.execute(_USER_BY_ID, {"user_id": user_id}).first()
        return user_from_row(row) if row else None

    def get_many(self, user_ids: Iterable[str]) -> dict[str, User]:
        """The users of these ids that exist, by id (one query)."""
        wanted = list(dict.fromkeys(user_ids))
        if not wanted:
            return {}
        rows = self.conn.execute(_USERS_BY_IDS, {"user_ids": wanted})
        return {row.id: user_from_row(row) for row in rows}

    def get_by_email(self, email: str) -> User | None:
        row = self.conn.execute(_USER_BY_EMAIL, {"email": email}).first()
        return user_from_row(row) if row else None

    def password_hash(self, user_id: str) -> str | None:
        return self.conn.execute(_PASSWORD_HASH, {"user_id": user_id}).scalar_one_or_none()

    def set_password_hash(self, user_id: str, password_hash: str, at: datetime) -> None:
        self.conn.execute(
            t.users.update()
            .where(t.users.c.id == user_id)
            .values(password_hash=password_hash, updated_at=at)
        )

    def list(self) -> list[User]:
        rows = self.conn.execute(_ALL_USERS)
        return [user_from_row(row) for row in rows]

    def count(self) -> int:
        return int(self.conn.execute(_COUNT_USERS).scalar_one())
