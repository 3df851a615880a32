"""The CREWBOARD_SMTP_* settings: email off without a host, each bad value refused with the
setting named (and the accepted values), the password from a file, never shown."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from crewboard.config import load_settings
from crewboard.services.notifications.mailer import SmtpServer


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("CREWBOARD_"):
            monkeypatch.delenv(name)


def smtp_env(monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    monkeypatch.setenv("CREWBOARD_SMTP_HOST", "smtp.example.com")
    monkeypatch.setenv("CREWBOARD_SMTP_SENDER", "crewboard@example.com")
    for name, value in values.items():
        monkeypatch.setenv(f"CREWBOARD_SMTP_{name.upper()}", value)


def refusal(monkeypatch: pytest.MonkeyPatch, **values: str) -> str:
    smtp_env(monkeypatch, **values)
    with pytest.raises(ValidationError) as refused:
        load_settings()
    return str(refused.value)


def test_without_a_host_email_is_off() -> None:
    settings = load_settings()
    assert settings.smtp_host is None
    assert SmtpServer.from_settings(settings) is None


def test_the_defaults_are_port_587_with_starttls(monkeypatch: pytest.MonkeyPatch) -> None:
    smtp_env(monkeypatch)
    server = SmtpServer.from_settings(load_settings())
    assert server is not None
    assert (server.host, server.port, server.security) == ("smtp.example.com", 587, "starttls")
    assert server.sender == "crewboard@example.com"
    assert server.password is None


def test_an_unknown_security_is_refused_naming_the_setting_and_the_accepted_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    message = refusal(monkeypatch, security="ssl")
    assert "smtp_security" in message
    assert all(word in message for word in ("starttls", "tls", "none"))


def test_a_host_without_a_sender_is_refused_naming_smtp_sender(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CREWBOARD_SMTP_HOST", "smtp.example.com")
    with pytest.raises(ValidationError) as refused:
        load_settings()
    assert "smtp_sender" in str(refused.value)
    assert "smtp_sender" in refusal(monkeypatch, sender="not an address")


def test_a_bad_port_or_timeout_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "smtp_port" in refusal(monkeypatch, port="70000")
    assert "smtp_timeout" in refusal(monkeypatch, port="465", timeout="0")


def test_password_and_password_file_together_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secret = tmp_path / "smtp-password"
    secret.write_text("from-the-file\n")
    message = refusal(monkeypatch, password="inline", password_file=str(secret))
    assert "smtp_password" in message
    assert "smtp_password_file" in message


def test_a_missing_password_file_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert "smtp_password_file" in refusal(monkeypatch, password_file=str(tmp_path / "absent"))


def test_the_password_comes_from_its_file_and_is_never_shown(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secret = tmp_path / "smtp-password"
    secret.write_text("hunter2-from-file\n")
    smtp_env(monkeypatch, user="crew", password_file=str(secret), security="TLS", port="465")
    settings = load_settings()
    server = SmtpServer.from_settings(settings)
    assert server is not None
    assert (server.user, server.password, server.security) == ("crew", "hunter2-from-file", "tls")
    assert "hunter2" not in repr(server)
    assert "hunter2" not in repr(settings)

    monkeypatch.delenv("CREWBOARD_SMTP_PASSWORD_FILE")
    monkeypatch.setenv("CREWBOARD_SMTP_PASSWORD", "inline-secret")
    settings = load_settings()
    assert "inline-secret" not in repr(settings)
    assert "inline-secret" not in str(settings.model_dump())
    assert settings.smtp_password_value() == "inline-secret"
