"""Notification email through a real `crewboard serve` process: a mail queued while the SMTP
server is down, the process killed with SIGKILL before it could send, arrives exactly once
from the next process once the SMTP server is up; bad SMTP settings stop `serve` with the
setting named."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL

from crewboard.domain.identity.records import User
from crewboard.services.identity.users import person_actor
from crewboard.services.notifications import inbox
from crewboard.services.notifications.notify import enable_email, notify
from crewboard.storage.database import Database
from crewboard.storage.notifications.repository import OutboxRepository
from tests.conftest import POSTGRESQL_IN_THE_SLOW_RUN
from tests.support.factories import make_user
from tests.support.serve import kill_serve, serve_env, start_serve, stop_serve, wait_healthy
from tests.support.server import free_port
from tests.support.smtp import smtp_server

SENDER = "crewboard@example.com"
# The mailer looks at the outbox every 5 s and retries 5 s after a failure: well inside this.
MAIL_TIMEOUT = 30.0


def smtp_settings(env: dict[str, str], smtp_port: int) -> dict[str, str]:
    return {
        **env,
        "CREWBOARD_SMTP_HOST": "127.0.0.1",
        "CREWBOARD_SMTP_PORT": str(smtp_port),
        "CREWBOARD_SMTP_SECURITY": "none",
        "CREWBOARD_SMTP_SENDER": SENDER,
        "CREWBOARD_SMTP_TIMEOUT": "5",
    }


def wait_until(what: str, check: Callable[[], Any], timeout: float = MAIL_TIMEOUT) -> Any:
    """Poll another process's effect on the database until `check` returns something true."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.1)  # a row another process writes has no event to wait on; bound above
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def queue_one(db: Database, person: User) -> str:
    """A notification with email for `person`, committed through the service; its id."""
    inbox.set_settings(db, person_actor(person), email=True)
    outcome = db.write(
        lambda uow: notify(
            uow,
            recipients=[person.id],
            kind="handoff.created",
            project_id=None,
            title="Ada handed the shift to you",
            body="Three items wait for you.",
            link="/handoffs/1",
            source="handoff:hof_kill",
            in_app=True,
            email=True,
        )
    )
    assert outcome.emails_queued == 1
    return str(inbox.list_notifications(db, person_actor(person))["notifications"][0]["id"])


@POSTGRESQL_IN_THE_SLOW_RUN  # two servers and two kills: 27 s
def test_a_mail_queued_before_a_kill_9_is_sent_exactly_once_by_the_next_process(
    empty_database_url: URL, tmp_path: Path
) -> None:
    port, smtp_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **smtp_settings(serve_env(empty_database_url, tmp_path / "data", port), smtp_port),
        "CREWBOARD_SMTP_PASSWORD": "hunter2",  # no user: never sent, and never logged
    }
    log = tmp_path / "first.log"
    process = start_serve(env, log)  # nothing listens on smtp_port yet
    db = Database(empty_database_url)
    try:
        wait_healthy(url, process, log)
        enable_email(db, url)  # this handle queues mail as the server's own would
        person = make_user(db, "bo@example.com")
        notification = queue_one(db, person)

        def outbox() -> dict[str, Any]:
            row = db.read(lambda uow: OutboxRepository(uow.conn).of_notification(notification))
            assert row is not None
            return row

        tried = wait_until("the first try", lambda: outbox()["attempts"] >= 1 and outbox())
        assert tried["status"] == "pending"
        assert tried["last_error"]
        assert kill_serve(process) == -9
        assert "hunter2" not in log.read_text()

        with smtp_server(smtp_port) as received:
            log = tmp_path / "second.log"
            process = start_serve(env, log)
            wait_healthy(url, process, log)
            [message] = received.wait_for(1, MAIL_TIMEOUT)
            wait_until("the email marked sent", lambda: outbox()["status"] == "sent")
            assert stop_serve(process) == 0
            assert len(received.messages) == 1
        assert message["To"] == "bo@example.com"
        assert message["Subject"] == "Ada handed the shift to you"
        assert f"{url}/handoffs/1" in message.get_content()
    finally:
        if process.poll() is None:
            kill_serve(process)
        db.dispose()


def test_serve_refuses_bad_smtp_settings_naming_the_setting(tmp_path: Path) -> None:
    """One case through the real process; test_notifications_settings.py has every case."""
    env = serve_env(URL.create("sqlite", database=str(tmp_path / "x.db")), tmp_path, free_port())
    bad = {
        **smtp_settings(env, 2525),
        "CREWBOARD_SMTP_PASSWORD": "hunter2",
        "CREWBOARD_SMTP_SECURITY": "ssl",
    }
    done = subprocess.run(
        [sys.executable, "-m", "crewboard", "serve"],
        env=bad,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "smtp_security" in done.stderr, done.stderr
    assert "starttls" in done.stderr
    assert "hunter2" not in done.stdout + done.stderr
