"""The mailer: one per process, it sends the email outbox after the commits that filled it.

`notify` only queues a row in the writer's transaction. The mailer claims due rows under a
lease (on PostgreSQL with `FOR UPDATE SKIP LOCKED`, so several nodes never claim one row),
sends each with smtplib in a worker thread, and marks it sent; a failure counts an attempt
and makes the row due again later (5 s doubling to 15 min), until after MAX_ATTEMPTS it is
marked failed with the last error. It is woken by commits in this process that queued mail,
and looks at the outbox every POLL seconds at the latest (other nodes' commits, retries).

A crash between the send and the mark sends the email again once the lease runs out: every
send of one notification carries the same Message-ID, so receivers can recognise it.
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

from anyio import to_thread

from crewboard.config import Settings
from crewboard.domain.notifications import (
    MAX_ERROR,
    OutboxMail,
    gives_up,
    message_id,
    retry_delay,
)
from crewboard.services.notifications.notify import CREATED, enable_email
from crewboard.services.supervisor import LoopHealth, Wakeup, repeat
from crewboard.storage.database import Database
from crewboard.storage.notifications.repository import OutboxRepository
from crewboard.storage.uow import EventRecord, UnitOfWork

log = logging.getLogger(__name__)

POLL = 5.0  # seconds: the longest a due email waits when nothing wakes the mailer
BATCH = 5  # emails claimed at a time


@dataclass(frozen=True)
class SmtpServer:
    """Where and how to send (from the CREWBOARD_SMTP_* settings)."""

    host: str
    port: int
    security: str
    sender: str
    timeout: float
    user: str | None = None
    password: str | None = field(default=None, repr=False)  # never in a log or a repr

    @classmethod
    def from_settings(cls, settings: Settings) -> SmtpServer | None:
        """None when no SMTP host is set (email off)."""
        if settings.smtp_host is None or settings.smtp_sender is None:
            return None
        return cls(
            host=settings.smtp_host,
            port=settings.smtp_port,
            security=settings.smtp_security,
            sender=settings.smtp_sender,
            timeout=settings.smtp_timeout,
            user=settings.smtp_user,
            password=settings.smtp_password_value(),
        )

    @property
    def lease(self) -> timedelta:
        """How long a claim holds a batch: every step of every send may take the timeout."""
        return timedelta(seconds=max(60.0, BATCH * 4 * self.timeout))


def build_message(server: SmtpServer, mail: OutboxMail, now: datetime) -> EmailMessage:
    message = EmailMessage()
    message["From"] = server.sender
    message["To"] = mail.to_address
    message["Subject"] = mail.subject
    message["Date"] = format_datetime(now)
    message["Message-ID"] = message_id(mail.notification_id, server.sender)
    message["Auto-Submitted"] = "auto-generated"
    message.set_content(mail.body_text)
    return message


def send_message(server: SmtpServer, message: EmailMessage) -> None:
    """Hand one message to the SMTP server (blocking: run it in a worker thread).

    Raises:
        smtplib.SMTPException, OSError: the server could not be reached or refused it.
    """
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if server.security == "tls":
        smtp = smtplib.SMTP_SSL(server.host, server.port, timeout=server.timeout, context=context)
    else:
        smtp = smtplib.SMTP(server.host, server.port, timeout=server.timeout)
    with smtp:
        if server.security == "starttls":
            smtp.starttls(context=context)
        if server.user is not None:
            smtp.login(server.user, server.password or "")
        smtp.send_message(message)


class Mailer:
    def __init__(
        self, db: Database, server: SmtpServer, *, public_url: str, poll: float = POLL
    ) -> None:
        self.db = db
        self.server = server
        self.poll = poll
        self._wakeup = Wakeup()
        self._unmarked: list[OutboxMail] = []
        enable_email(db, public_url)  # from now on `notify` queues emails on this database
        db.add_event_listener(self._heard)

    @classmethod
    def from_settings(cls, db: Database, settings: Settings) -> Mailer | None:
        """The process's mailer, or None when no SMTP server is configured."""
        server = SmtpServer.from_settings(settings)
        return None if server is None else cls(db, server, public_url=settings.public_url)

    def _heard(self, events: list[EventRecord]) -> None:
        """A commit in this process (called in the writer's thread): wake on queued mail."""
        if any(e.type == CREATED and e.payload.get("email") for e in events):
            self.wake()

    def wake(self) -> None:
        self._wakeup.wake()

    async def run(self, health: LoopHealth | None = None) -> None:
        """Send what is due whenever woken, and every `poll` seconds; until cancelled. A pass
        that fails (the database is away for a moment) backs off and tries again: the rows
        wait in the outbox, nothing is lost."""
        health = health or LoopHealth("mail")
        health.wake = self.wake
        await repeat(health, self.drain, self.poll, self._wakeup)

    async def drain(self) -> int:
        """Send every email due now; how many went out."""
        sent = 0
        while self._unmarked:  # sent before the database went away: mark them first
            await to_thread.run_sync(self._sent, self._unmarked[0])
            self._unmarked.pop(0)
        while batch := await to_thread.run_sync(self._claim):
            for mail in batch:
                sent += await self._send(mail)
            if len(batch) < BATCH:
                break
        return sent

    def _claim(self) -> list[OutboxMail]:
        def work(uow: UnitOfWork) -> list[OutboxMail]:
            lease_until = uow.now + self.server.lease
            return OutboxRepository(uow.conn).claim_due(uow.now, lease_until, BATCH)

        return self.db.write(work)

    async def _send(self, mail: OutboxMail) -> int:
        message = build_message(self.server, mail, self.db.clock.now())
        try:
            await to_thread.run_sync(send_message, self.server, message)
        except (smtplib.SMTPException, OSError) as error:
            await to_thread.run_sync(self._failed, mail, f"{type(error).__name__}: {error}")
            return 0
        try:
            await to_thread.run_sync(self._sent, mail)
        except Exception:
            # Sent, but not marked: mark it on the next pass, before its lease runs out and
            # it would be sent again.
            self._unmarked.append(mail)
            raise
        return 1

    def _sent(self, mail: OutboxMail) -> None:
        self.db.write(lambda uow: OutboxRepository(uow.conn).mark_sent(mail.id, uow.now))

    def _failed(self, mail: OutboxMail, error: str) -> None:
        attempts = mail.attempts + 1
        final = gives_up(attempts)
        log.warning(
            "mail: sending %s to the SMTP server failed (attempt %d%s): %s",
            mail.id,
            attempts,
            ", giving up" if final else "",
            error,
        )

        def work(uow: UnitOfWork) -> None:
            OutboxRepository(uow.conn).mark_failed(
                mail.id,
                attempts=attempts,
                next_attempt_at=uow.now + retry_delay(attempts),
                error=error[:MAX_ERROR],
                final=final,
            )

        self.db.write(work)
