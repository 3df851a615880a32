"""The notifications repository: a person's notifications and settings, and the email outbox
(queueing in the writer's transaction; claiming due rows under a lease; recording the result)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, func, insert, or_, select, update

from crewboard.domain.notifications import (
    MailStatus,
    Notification,
    NotificationSettings,
    OutboxMail,
)
from crewboard.storage.identity.tables import users
from crewboard.storage.notifications.tables import (
    email_outbox,
    notification_settings,
    notifications,
)
from crewboard.storage.rows import record_from_row, record_values

_n = notifications.c
_o = email_outbox.c
_s = notification_settings.c
_INSERT_NOTIFICATION = insert(notifications)
_INSERT_MAIL = insert(email_outbox)
_SETTINGS = select(notification_settings).where(_s.user_id.in_(bindparam("ids", expanding=True)))
_ADDRESSES = select(users.c.id, users.c.email).where(
    users.c.id.in_(bindparam("ids", expanding=True))
)
_ALREADY = select(_n.user_id).where(
    _n.user_id.in_(bindparam("ids", expanding=True)),
    _n.source == bindparam("source"),
    _n.kind == bindparam("kind"),
)
_UNREAD = (
    select(func.count())
    .select_from(notifications)
    .where(_n.user_id == bindparam("user_id"), _n.in_app.is_(True), _n.read_at.is_(None))
)
_MAIL_OF = select(email_outbox).where(_o.notification_id == bindparam("notification_id"))


def _notification(row: Row[Any]) -> Notification:
    return record_from_row(Notification, row)


def _mail(row: Row[Any]) -> OutboxMail:
    return record_from_row(OutboxMail, row, status=MailStatus(row.status))


class NotificationRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def settings_of(self, user_ids: Sequence[str]) -> dict[str, NotificationSettings]:
        """Each person's settings; people with no row get the defaults."""
        found = {
            row.user_id: NotificationSettings(in_app=row.in_app, email=row.email)
            for row in self.conn.execute(_SETTINGS, {"ids": list(user_ids)})
        }
        return {user_id: found.get(user_id, NotificationSettings()) for user_id in user_ids}

    def addresses_of(self, user_ids: Sequence[str]) -> dict[str, str]:
        """The email of each person who exists (unknown ids are left out)."""
        rows = self.conn.execute(_ADDRESSES, {"ids": list(user_ids)})
        return {row.id: row.email for row in rows}

    def already_told(self, user_ids: Sequence[str], *, source: str, kind: str) -> set[str]:
        rows = self.conn.execute(_ALREADY, {"ids": list(user_ids), "source": source, "kind": kind})
        return {row.user_id for row in rows}

    def add(self, notification: Notification) -> None:
        self.conn.execute(
            _INSERT_NOTIFICATION,
            record_values(notification, notifications),
        )

    def list_for_user(
        self, user_id: str, *, unread_only: bool, limit: int, offset: int
    ) -> tuple[list[Notification], int]:
        """A page of the person's in-app notifications, newest first, and how many there are."""
        where = [_n.user_id == user_id, _n.in_app.is_(True)]
        if unread_only:
            where.append(_n.read_at.is_(None))
        total = self.conn.execute(
            select(func.count()).select_from(notifications).where(*where)
        ).scalar_one()
        rows = self.conn.execute(
            select(notifications)
            .where(*where)
            .order_by(_n.created_at.desc(), _n.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return [_notification(row) for row in rows], int(total)

    def unread_count(self, user_id: str) -> int:
        return int(self.conn.execute(_UNREAD, {"user_id": user_id}).scalar_one())

    def mark_read(self, user_id: str, ids: Sequence[str] | None, now: datetime) -> int:
        """Mark the person's unread notifications read: these ids, or all (None)."""
        query = update(notifications).where(
            _n.user_id == user_id, _n.in_app.is_(True), _n.read_at.is_(None)
        )
        if ids is not None:
            query = query.where(_n.id.in_(list(ids)))
        return int(self.conn.execute(query.values(read_at=now)).rowcount)

    def save_settings(self, user_id: str, settings: NotificationSettings, now: datetime) -> None:
        values = {"in_app": settings.in_app, "email": settings.email, "updated_at": now}
        changed = self.conn.execute(
            update(notification_settings).where(_s.user_id == user_id).values(**values)
        ).rowcount
        if not changed:
            # Two first saves at once: the loser's insert breaks the primary key and its whole
            # use case runs again (Database.write), then updating the winner's row.
            self.conn.execute(insert(notification_settings).values(user_id=user_id, **values))


class OutboxRepository:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def queue(self, *, mail_id: str, notification_id: str, to_address: str, subject: str,
              body_text: str, now: datetime) -> None:  # fmt: skip
        self.conn.execute(
            _INSERT_MAIL,
            {
                "id": mail_id,
                "notification_id": notification_id,
                "to_address": to_address,
                "subject": subject,
                "body_text": body_text,
                "status": MailStatus.PENDING.value,
                "attempts": 0,
                "next_attempt_at": now,
                "claimed_until": None,
                "last_error": None,
                "created_at": now,
                "sent_at": None,
            },
        )

    def claim_due(self, now: datetime, lease_until: datetime, limit: int) -> list[OutboxMail]:
        """Take up to `limit` due emails no one holds, holding them until `lease_until`.

        On PostgreSQL the rows are locked as they are read and rows another node is claiming
        are skipped (SKIP LOCKED), so two nodes never claim one email; SQLite runs one write
        at a time."""
        due = and_(
            _o.status == MailStatus.PENDING.value,
            _o.next_attempt_at <= now,
            or_(_o.claimed_until.is_(None), _o.claimed_until < now),
        )
        rows = self.conn.execute(
            select(email_outbox)
            .where(due)
            .order_by(_o.next_attempt_at, _o.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        ).all()
        if rows:
            self.conn.execute(
                update(email_outbox)
                .where(_o.id.in_([row.id for row in rows]))
                .values(claimed_until=lease_until)
            )
        return [_mail(row) for row in rows]

    def mark_sent(self, mail_id: str, now: datetime) -> None:
        self.conn.execute(
            update(email_outbox)
            .where(_o.id == mail_id)
            .values(status=MailStatus.SENT.value, sent_at=now, claimed_until=None)
        )

    def mark_failed(
        self, mail_id: str, *, attempts: int, next_attempt_at: datetime, error: str, final: bool
    ) -> None:
        """One more failed try: due again at `next_attempt_at`, or given up (`final`)."""
        status = MailStatus.FAILED if final else MailStatus.PENDING
        self.conn.execute(
            update(email_outbox)
            .where(_o.id == mail_id)
            .values(
                status=status.value,
                attempts=attempts,
                next_attempt_at=next_attempt_at,
                claimed_until=None,
                last_error=error,
            )
        )

    def of_notification(self, notification_id: str) -> dict[str, Any] | None:
        """The outbox row of a notification, as stored (for the operator and the tests)."""
        row = self.conn.execute(_MAIL_OF, {"notification_id": notification_id}).first()
        return None if row is None else dict(row._mapping)
