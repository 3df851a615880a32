"""Notifications: what a person is told (in the app, and by email through an outbox), their
settings, and the rules of the outbox (back-off, give up, the Message-ID of a notification)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

NOTIFICATION_PREFIX = "ntf"
OUTBOX_PREFIX = "eml"

MAX_KIND = 64
MAX_TITLE = 200
MAX_BODY = 2000
MAX_LINK = 500
MAX_SOURCE = 200
MAX_SUBJECT = 200
MAX_EMAIL_TEXT = 20_000

FIRST_RETRY = timedelta(seconds=5)
LAST_RETRY = timedelta(minutes=15)
MAX_ATTEMPTS = 20  # then the email is marked failed with its last error
MAX_ERROR = 500  # characters of the last error kept


class MailStatus(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


@dataclass(frozen=True)
class Notification:
    id: str
    user_id: str
    project_id: str | None
    kind: str
    title: str
    body: str
    link: str
    source: str
    in_app: bool
    created_at: datetime
    read_at: datetime | None


@dataclass(frozen=True)
class NotificationSettings:
    """A person's choice; a person with no row has the defaults."""

    in_app: bool = True
    email: bool = False


@dataclass(frozen=True)
class OutboxMail:
    """One email waiting in (or done with) the outbox."""

    id: str
    notification_id: str
    to_address: str
    subject: str
    body_text: str
    status: MailStatus
    attempts: int


def retry_delay(attempts: int) -> timedelta:
    """How long to wait after the `attempts`-th failed try: 5 s doubling, at most 15 min."""
    doublings = min(max(attempts - 1, 0), 16)
    delay: timedelta = FIRST_RETRY * (1 << doublings)
    return min(delay, LAST_RETRY)


def gives_up(attempts: int) -> bool:
    return attempts >= MAX_ATTEMPTS


def is_app_link(link: str) -> bool:
    """An app-relative URL: one leading slash, no scheme, no host, no control characters."""
    return (
        link.startswith("/")
        and not link.startswith("//")
        and "\\" not in link
        and not any(ord(c) < 32 or ord(c) == 127 for c in link)
    )


def absolute_link(public_url: str, link: str) -> str:
    return public_url.rstrip("/") + link


def has_address(email: str) -> bool:
    local, _, domain = email.rpartition("@")
    return bool(local) and bool(domain) and not any(c.isspace() for c in email)


def message_id(notification_id: str, sender: str) -> str:
    """The same Message-ID every time this notification is sent: a resend after a crash in
    the middle of a send is the same message to a receiver that keeps the ids it saw."""
    domain = sender.rpartition("@")[2] or "crewboard.invalid"
    return f"<{notification_id}.notification@{domain}>"


def email_text(text: str, url: str) -> str:
    """The plain-text body: the text, the link, and where to turn these emails off."""
    return (
        f"{text.rstrip()}\n\n{url}\n\n-- \n"
        "Crewboard sent this because you turned on email notifications; "
        "turn them off in your notification settings.\n"
    )


# "@ada@example.com" or "@ada" (an email's part before the @), not inside a word or an email.
_MENTION = re.compile(r"(?<![\w.@])@([A-Za-z0-9._+-]+(?:@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)?)")
MAX_MENTIONS = 20  # people one text may tell


def mentions(text: str) -> list[str]:
    """Who a text mentions, as written (lowercase, in order, once each): emails, or the part
    of an email before the @."""
    found = [m.group(1).rstrip(".").lower() for m in _MENTION.finditer(text)]
    return list(dict.fromkeys(found))[:MAX_MENTIONS]
