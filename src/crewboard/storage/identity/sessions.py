"""Web sessions: rows keyed by the SHA-256 of the secret the browser's cookie holds."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, delete, select, update

from crewboard.domain.identity.records import WebSession
from crewboard.storage.identity import tables as t
from crewboard.storage.rows import record_values


class SessionRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add(self, session: WebSession) -> None:
        self.conn.execute(t.web_sessions.insert().values(**record_values(session, t.web_sessions)))

    def get(self, session_id: str) -> WebSession | None:
        row = self.conn.execute(
            select(t.web_sessions).where(t.web_sessions.c.id == session_id)
        ).first()
        return WebSession(**row._asdict()) if row else None

    def touch(self, session_id: str, at: datetime) -> None:
        s = t.web_sessions
        self.conn.execute(update(s).where(s.c.id == session_id).values(last_seen_at=at))

    def delete(self, session_id: str) -> None:
        self.conn.execute(delete(t.web_sessions).where(t.web_sessions.c.id == session_id))

    def delete_for_user(self, user_id: str, *, keep: str | None = None) -> int:
        s = t.web_sessions
        query = delete(s).where(s.c.user_id == user_id)
        if keep is not None:
            query = query.where(s.c.id != keep)
        return int(self.conn.execute(query).rowcount or 0)

    def delete_expired(self, user_id: str, at: datetime) -> None:
        s = t.web_sessions
        self.conn.execute(delete(s).where(s.c.user_id == user_id, s.c.expires_at <= at))
