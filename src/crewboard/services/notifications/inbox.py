"""A person's notifications: the list (paged), the unread count, marking read, and their
settings. Only people have notifications: agent tokens are refused."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crewboard.domain.identity.records import Actor
from crewboard.domain.notifications import Notification, NotificationSettings
from crewboard.errors import ValidationFailed
from crewboard.services.identity.access import require_person
from crewboard.services.notifications.notify import email_setup
from crewboard.services.paging import check_page, next_offset
from crewboard.services.views import iso
from crewboard.storage.database import Database
from crewboard.storage.notifications.repository import NotificationRepository
from crewboard.storage.uow import UnitOfWork

MAX_MARK = 200  # ids one mark_read names


def notification_view(notification: Notification) -> dict[str, Any]:
    return {
        "id": notification.id,
        "kind": notification.kind,
        "projectId": notification.project_id,
        "title": notification.title,
        "body": notification.body,
        "link": notification.link,
        "source": notification.source,
        "createdAt": iso(notification.created_at),
        "readAt": iso(notification.read_at),
    }


def list_notifications(
    db: Database, actor: Actor, *, unread_only: bool = False, limit: int = 50, offset: int = 0
) -> dict[str, Any]:
    """The actor's notifications, newest first, with the total and the next page's offset.

    Raises:
        HumanIdentityRequired: for an agent token.
        ValidationFailed: naming `limit` or `offset`.
    """
    require_person(actor, "Reading notifications")
    check_page(limit, offset)

    def work(uow: UnitOfWork) -> dict[str, Any]:
        repo = NotificationRepository(uow.conn)
        rows, total = repo.list_for_user(
            actor.user_id, unread_only=unread_only, limit=limit, offset=offset
        )
        return {
            "notifications": [notification_view(row) for row in rows],
            "total": total,
            "unread": repo.unread_count(actor.user_id),
            "nextOffset": next_offset(offset, len(rows), total),
        }

    return db.read(work)


def unread_count(db: Database, actor: Actor) -> int:
    """How many of the actor's notifications are unread (the web bell's number).

    Raises:
        HumanIdentityRequired: for an agent token.
    """
    require_person(actor, "Reading notifications")
    return db.read(lambda uow: NotificationRepository(uow.conn).unread_count(actor.user_id))


def mark_read(
    db: Database, actor: Actor, *, ids: Sequence[str] = (), all_unread: bool = False
) -> dict[str, int]:
    """Mark these of the actor's notifications read (or all unread ones); other people's ids
    and ones already read are left as they are. Returns how many changed and how many are
    still unread.

    Raises:
        HumanIdentityRequired: for an agent token.
        ValidationFailed: naming `ids` when none (and not all) or too many are given.
    """
    require_person(actor, "Marking notifications read")
    if not all_unread and not ids:
        raise ValidationFailed.field("ids", "name at least one notification, or mark all read.")
    if len(ids) > MAX_MARK:
        raise ValidationFailed.field("ids", f"at most {MAX_MARK} at a time; got {len(ids)}.")

    def work(uow: UnitOfWork) -> dict[str, int]:
        repo = NotificationRepository(uow.conn)
        marked = repo.mark_read(actor.user_id, None if all_unread else list(ids), uow.now)
        if marked:
            uow.record_event(
                "notification.read",
                actor=actor.as_payload(),
                payload={"userId": actor.user_id, "marked": marked},
            )
        return {"marked": marked, "unread": repo.unread_count(actor.user_id)}

    return db.write(work)


def settings_view(settings: NotificationSettings, *, email_available: bool) -> dict[str, Any]:
    return {
        "inApp": settings.in_app,
        "email": settings.email,
        # False: this server sends no email at all (no SMTP server configured).
        "emailAvailable": email_available,
    }


def get_settings(db: Database, actor: Actor) -> dict[str, Any]:
    """The actor's notification settings (the defaults until they change them).

    Raises:
        HumanIdentityRequired: for an agent token.
    """
    require_person(actor, "Reading notification settings")

    def work(uow: UnitOfWork) -> dict[str, Any]:
        found = NotificationRepository(uow.conn).settings_of([actor.user_id])[actor.user_id]
        return settings_view(found, email_available=email_setup(uow) is not None)

    return db.read(work)


def set_settings(
    db: Database, actor: Actor, *, in_app: bool | None = None, email: bool | None = None
) -> dict[str, Any]:
    """Change the actor's notification settings (None: leave that one as it is).

    Raises:
        HumanIdentityRequired: for an agent token.
    """
    require_person(actor, "Changing notification settings")

    def work(uow: UnitOfWork) -> dict[str, Any]:
        repo = NotificationRepository(uow.conn)
        now = repo.settings_of([actor.user_id])[actor.user_id]
        wanted = NotificationSettings(
            in_app=now.in_app if in_app is None else in_app,
            email=now.email if email is None else email,
        )
        repo.save_settings(actor.user_id, wanted, uow.now)
        uow.record_event(
            "notification.settings_changed",
            actor=actor.as_payload(),
            payload={"userId": actor.user_id, "inApp": wanted.in_app, "email": wanted.email},
        )
        return settings_view(wanted, email_available=email_setup(uow) is not None)

    return db.write(work)
