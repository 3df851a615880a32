"""`notify`: tell people of something, inside the write that caused it.

Another area's use case calls `notify(uow, …)` in its own transaction: the notifications (and
the emails they queue in the outbox) commit with the change or not at all. Nothing is sent
here; the mailer (`mailer.py`) sends from the outbox after the commit, so a slow or failing
SMTP server never slows or fails a write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from crewboard.domain.ids import new_id
from crewboard.domain.notifications import (
    MAX_BODY,
    MAX_EMAIL_TEXT,
    MAX_KIND,
    MAX_LINK,
    MAX_SOURCE,
    MAX_SUBJECT,
    MAX_TITLE,
    NOTIFICATION_PREFIX,
    OUTBOX_PREFIX,
    Notification,
    NotificationSettings,
    absolute_link,
    has_address,
    is_app_link,
)
from crewboard.domain.notifications import (
    email_text as compose_text,
)
from crewboard.domain.validation import check_text
from crewboard.errors import ValidationFailed
from crewboard.storage.database import Database
from crewboard.storage.notifications.repository import NotificationRepository, OutboxRepository
from crewboard.storage.uow import UnitOfWork

EMAIL_HOOK = "notifications.email"  # in Database.hooks when this process may send email
CREATED = "notification.created"
_SYSTEM = {"kind": "system", "userId": None, "tokenId": None}
NO_SMTP = (
    "no email was sent: this server has no SMTP server configured (CREWBOARD_SMTP_HOST), so "
    "notifications are shown in the app only."
)


@dataclass(frozen=True)
class EmailSetup:
    """What `notify` needs to queue emails: the URL links in them start with."""

    public_url: str


def enable_email(db: Database, public_url: str) -> None:
    """Let `notify` queue emails on this database handle (the mailer calls it)."""
    db.hooks[EMAIL_HOOK] = EmailSetup(public_url=public_url)


def email_setup(uow: UnitOfWork) -> EmailSetup | None:
    setup = uow.hooks.get(EMAIL_HOOK)
    return setup if isinstance(setup, EmailSetup) else None


@dataclass(frozen=True)
class NotifyOutcome:
    """What one `notify` did: notifications shown in the app, emails queued, and, when an
    email that was asked for does not go out, one sentence saying why."""

    in_app: int
    emails_queued: int
    email_not_sent: str | None


@dataclass(frozen=True)
class _Message:
    kind: str
    project_id: str | None
    title: str
    body: str
    link: str
    source: str
    subject: str
    text: str


def notify(
    uow: UnitOfWork,
    *,
    recipients: Sequence[str],
    kind: str,
    project_id: str | None,
    title: str,
    body: str,
    link: str,
    source: str,
    in_app: bool,
    email: bool,
    email_subject: str | None = None,
    email_text: str | None = None,
) -> NotifyOutcome:
    """Tell each recipient (user ids) once per (source, kind), in the caller's transaction.

    `in_app` and `email` are the caller's opt-ins; each person's own settings win over them.
    Unknown user ids are skipped. An event `notification.created` per notification lets open
    pages refresh.

    Raises:
        ValidationFailed / LimitExceeded: naming the field (a caller's mistake).
    """
    message = _checked(
        _Message(
            kind=kind,
            project_id=project_id,
            title=title,
            body=body,
            link=link,
            source=source,
            subject=email_subject or "",
            text=email_text or "",
        )
    )
    people = list(dict.fromkeys(recipients))
    repo = NotificationRepository(uow.conn)
    addresses = repo.addresses_of(people)
    told = repo.already_told(people, source=message.source, kind=message.kind)
    fresh = [person for person in people if person in addresses and person not in told]
    settings = repo.settings_of(fresh)
    setup = email_setup(uow) if email else None
    made = queued = 0
    skipped: dict[str, int] = {}
    for person in fresh:
        show = in_app and settings[person].in_app
        why_not = _why_no_email(email, setup, settings[person], addresses[person])
        if why_not is not None:
            skipped[why_not] = skipped.get(why_not, 0) + 1
        mail = setup if why_not is None else None
        if not show and mail is None:
            continue
        notification_id = _add(uow, repo, person, message, show=show, mail=mail is not None)
        made += show
        if mail is not None:
            _queue(uow, notification_id, addresses[person], message, mail)
            queued += 1
    return NotifyOutcome(made, queued, _email_not_sent(email, setup, skipped, len(told)))


def _checked(raw: _Message) -> _Message:
    """The message as the caller gave it, checked; an empty email subject or text is made
    from the title and body."""
    title = check_text("title", raw.title, max_length=MAX_TITLE, required=True)
    body = check_text("body", raw.body, max_length=MAX_BODY)
    link = check_text("link", raw.link, max_length=MAX_LINK, required=True)
    if not is_app_link(link):
        raise ValidationFailed.field("link", "must be a path inside the app, such as /p/CRW/t/12.")
    return replace(
        raw,
        kind=check_text("kind", raw.kind, max_length=MAX_KIND, required=True),
        title=title,
        body=body,
        link=link,
        source=check_text("source", raw.source, max_length=MAX_SOURCE, required=True),
        # One line: a header cannot carry a line break.
        subject=" ".join(
            check_text("email_subject", raw.subject or title, max_length=MAX_SUBJECT).split()
        ),
        text=check_text("email_text", raw.text or body or title, max_length=MAX_EMAIL_TEXT),
    )


def _why_no_email(
    asked: bool, setup: EmailSetup | None, settings: NotificationSettings, address: str
) -> str | None:
    """Why this person gets no email (a key of `_REASONS`), or None when they get one."""
    if not asked:
        return "not_asked"
    if setup is None:
        return "no_smtp"
    if not settings.email:
        return "email_off"
    if not has_address(address):
        return "no_address"
    return None


def _add(
    uow: UnitOfWork,
    repo: NotificationRepository,
    person: str,
    message: _Message,
    *,
    show: bool,
    mail: bool,
) -> str:
    """The notification row and its event (the mailer wakes on one with `email`)."""
    notification_id = new_id(NOTIFICATION_PREFIX)
    repo.add(
        Notification(
            id=notification_id,
            user_id=person,
            project_id=message.project_id,
            kind=message.kind,
            title=message.title,
            body=message.body,
            link=message.link,
            source=message.source,
            in_app=show,
            created_at=uow.now,
            read_at=None,
        )
    )
    uow.record_event(
        CREATED,
        actor=_SYSTEM,
        project_id=message.project_id,
        payload={
            "notificationId": notification_id,
            "userId": person,
            "kind": message.kind,
            "inApp": show,
            "email": mail,
        },
    )
    return notification_id


def _queue(
    uow: UnitOfWork, notification_id: str, address: str, message: _Message, setup: EmailSetup
) -> None:
    OutboxRepository(uow.conn).queue(
        mail_id=new_id(OUTBOX_PREFIX),
        notification_id=notification_id,
        to_address=address,
        subject=message.subject,
        body_text=compose_text(message.text, absolute_link(setup.public_url, message.link)),
        now=uow.now,
    )


_REASONS = {
    "email_off": "{n} recipient(s) turned email off in their notification settings",
    "no_address": "{n} recipient(s) have no email address",
}


def _email_not_sent(
    asked: bool, setup: EmailSetup | None, skipped: dict[str, int], already: int
) -> str | None:
    if not asked:
        return "no email was sent: this notification did not ask for one."
    if setup is None:
        return NO_SMTP
    parts = [_REASONS[key].format(n=count) for key, count in skipped.items() if key in _REASONS]
    if already:
        parts.append(f"{already} recipient(s) were already told of this")
    return f"no email to some recipients: {'; '.join(parts)}." if parts else None
