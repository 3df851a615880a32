"""A real SMTP server on loopback (aiosmtpd) that keeps what it receives, for the mail tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Received:
    """Each message the server accepted: its envelope recipients and the parsed message."""

    messages: list[tuple[list[str], EmailMessage]] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's hook name
        parsed = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        with self.arrived:
            self.messages.append((list(envelope.rcpt_tos), parsed))
            self.arrived.notify_all()
        return "250 Message accepted for delivery"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[EmailMessage]:
        """The messages, once at least `count` have arrived; fails after `timeout` seconds."""
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.messages) >= count, timeout):
                raise AssertionError(
                    f"{len(self.messages)} message(s) arrived in {timeout} s, not {count}"
                )
            return [message for _, message in self.messages]

    def to(self, address: str) -> list[EmailMessage]:
        with self.arrived:
            return [message for rcpt, message in self.messages if address in rcpt]


@contextmanager
def smtp_server(port: int) -> Iterator[Received]:
    """An SMTP server on 127.0.0.1:`port` for the length of the block."""
    received = Received()
    controller = Controller(received, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield received
    finally:
        controller.stop()
