"""`crewboard doctor`: what an operator checks before (or instead of) asking for help.

Each check says ok, warn or FAIL, what it found, and for anything not ok what to do about it.
It reads and connects, and changes nothing: no migration, no email sent, no model called.
"""

from __future__ import annotations

import json
import shutil
import smtplib
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import click
import httpx2

from crewboard.cli.common import State, pass_state
from crewboard.config import LOOPBACK_HOSTS, Settings
from crewboard.services.sessions.models import list_config
from crewboard.storage import migrate
from crewboard.storage.database import Database
from crewboard.storage.outages import unavailable

Status = Literal["ok", "warn", "fail"]
DISK_WARN_BYTES = 1024**3  # free space under this in the data folder's file system: warn
DISK_FAIL_BYTES = 100 * 1024**2  # and under this: fail
NETWORK_WAIT = 5.0  # seconds each connection (SMTP, a model provider) may take
MIN_METRICS_TOKEN = 16  # characters a metrics token should have at least


@dataclass(frozen=True)
class Check:
    check: str
    status: Status
    detail: str
    fix: str | None = None

    def line(self) -> str:
        shown = {"ok": "ok", "warn": "warn", "fail": "FAIL"}[self.status]
        detail = self.detail if self.detail.endswith((".", ")")) else f"{self.detail}."
        return f"{shown:<4}  {self.check}: {detail}" + (f" Fix: {self.fix}" if self.fix else "")


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON for scripts.")
@pass_state
def doctor(state: State, as_json: bool) -> None:
    """Check the settings, the database, email, model providers and free disk space."""
    results: list[Check] = []
    for result in run_checks(state):
        results.append(result)
        if not as_json:
            click.echo(result.line())
    if as_json:
        click.echo(json.dumps([asdict(r) for r in results], indent=2))
    if any(r.status == "fail" for r in results):
        click.get_current_context().exit(1)


def run_checks(state: State) -> Iterator[Check]:
    """Every check, in order; those that need the settings or the database stop short when
    those fail."""
    try:
        settings = state.settings()
    except click.ClickException as error:
        yield Check(
            "settings",
            "fail",
            error.format_message(),
            "correct the named CREWBOARD_* variable or key of the settings file.",
        )
        return
    yield Check("settings", "ok", "loaded.")
    yield _address(settings)
    yield _metrics(settings)
    yield from _storage(settings)
    yield _smtp(settings)
    yield _disk(settings)


# --- settings -----------------------------------------------------------------------------


def _loopback(host: str) -> bool:
    return host.strip("[]") in {h.strip("[]") for h in LOOPBACK_HOSTS}


def _address(settings: Settings) -> Check:
    name = "public address"
    url = settings.public_url
    if settings.base_url is None and not _loopback(settings.host):
        return Check(
            name,
            "warn",
            f"the server listens on {settings.host} but knows itself as {url}.",
            "set CREWBOARD_BASE_URL to the address people and agents use "
            "(links in emails and OAuth name it).",
        )
    parts = urlsplit(url)
    if parts.scheme == "http" and not _loopback(parts.hostname or ""):
        return Check(
            name,
            "warn",
            f"{url} is plain http on a network address: sign-ins and tokens cross it unencrypted.",
            "serve behind a TLS proxy and set CREWBOARD_BASE_URL to its https address.",
        )
    return Check(name, "ok", f"{url} (listening on {settings.host}:{settings.port}).")


def _metrics(settings: Settings) -> Check:
    name = "metrics"
    token = settings.metrics_token
    if settings.metrics == "off":
        if token is not None:
            return Check(
                name,
                "warn",
                "CREWBOARD_METRICS_TOKEN is set but metrics are off.",
                "set CREWBOARD_METRICS=on, or drop the token.",
            )
        return Check(name, "ok", "off (/metrics answers 404).")
    if token is None:
        if _loopback(settings.host):
            return Check(name, "ok", "on, open to whoever reaches this loopback port.")
        return Check(
            name,
            "warn",
            f"on and open to anyone who reaches {settings.host}:{settings.port}.",
            "set CREWBOARD_METRICS_TOKEN and give Prometheus the same token.",
        )
    if len(token.get_secret_value()) < MIN_METRICS_TOKEN:
        return Check(
            name,
            "warn",
            f"on, with a token shorter than {MIN_METRICS_TOKEN} characters.",
            "use a long random token (e.g. `openssl rand -hex 24`).",
        )
    return Check(name, "ok", "on, behind a bearer token.")


# --- the database and what it holds ---------------------------------------------------------


def _storage(settings: Settings) -> Iterator[Check]:
    sqlite = settings.resolved_database_url.startswith("sqlite")
    if sqlite:
        yield _writable("data folder", settings.data_dir)
    if settings.blob_dir is not None:
        yield _writable("blob folder", settings.blob_dir)
    if settings.database_url is None and not (settings.data_dir / "crewboard.db").exists():
        yield _no_database(settings.data_dir / "crewboard.db")
        return
    db = Database.from_settings(settings)  # no connection is made until one is asked for
    try:
        file = db.engine.url.database if sqlite else None
        if file and file != ":memory:" and not Path(file).exists():
            yield _no_database(Path(file))  # connecting would make an empty file
            return
        yield from _database(db)
    finally:
        db.dispose()


def _no_database(file: Path) -> Check:
    return Check(
        "database",
        "fail",
        f"no database yet at {file}.",
        "run `crewboard init` (or `crewboard serve`, which makes it).",
    )


def _writable(name: str, folder: Path) -> Check:
    if not folder.exists():
        return Check(name, "fail", f"{folder} does not exist.", f"create it: mkdir -p {folder}")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-"):
            pass
    except OSError as error:
        return Check(
            name,
            "fail",
            f"cannot write in {folder} ({error.strerror or type(error).__name__}).",
            "give the user running Crewboard write access to it.",
        )
    return Check(name, "ok", f"{folder} is writable.")


def _database(db: Database) -> Iterator[Check]:
    try:
        current = migrate.current_revision(db)
    except Exception as error:  # any failure to connect is the finding
        cause = unavailable(error)
        why = str(cause.details["cause"]) if cause is not None else type(error).__name__
        yield Check(
            "database",
            "fail",
            f"{db.dialect} at {db.engine.url.render_as_string(hide_password=True)} did not "
            f"answer ({why}).",
            "start the database server or correct CREWBOARD_DATABASE_URL.",
        )
        return
    yield Check("database", "ok", f"{db.dialect} answers.")
    head = migrate.head_revision()
    if current != head:
        yield Check(
            "migrations",
            "fail",
            f"the schema is at {current or 'nothing'}, this version needs {head}.",
            "run `crewboard migrate` (`crewboard serve` migrates too).",
        )
        return
    yield Check("migrations", "ok", f"the schema is current ({head}).")
    yield from _providers(db)


def _providers(db: Database) -> Iterator[Check]:
    providers = list_config(db).providers
    if not providers:
        yield Check("model providers", "ok", "none configured (spec sessions cannot run turns).")
        return
    for provider in providers:
        yield _reach(f"model provider {provider.id}", provider.base_url)


def _reach(name: str, url: str) -> Check:
    """Any HTTP answer (even 401 or 404) means the provider's server is there."""
    try:
        with httpx2.Client(timeout=NETWORK_WAIT, follow_redirects=False) as client:
            status = client.get(url).status_code
    except httpx2.HTTPError as error:
        return Check(
            name,
            "fail",
            f"{_shown(url)} cannot be reached ({type(error).__name__}).",
            "start the provider's server, or correct its base URL with "
            "`crewboard model provider add`.",
        )
    return Check(name, "ok", f"{_shown(url)} answers (HTTP {status}).")


def _shown(url: str) -> str:
    """A URL without any user or password in it."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


# --- email and disk ---------------------------------------------------------------------------


def _smtp(settings: Settings) -> Check:
    name = "smtp"
    if settings.smtp_host is None:
        return Check(name, "ok", "not configured: notifications stay in the app.")
    where = f"{settings.smtp_host}:{settings.smtp_port} ({settings.smtp_security})"
    try:
        _greet(settings)
    except smtplib.SMTPAuthenticationError:
        return Check(
            name,
            "fail",
            f"{where} refused the login of {settings.smtp_user}.",
            "correct CREWBOARD_SMTP_USER and the password.",
        )
    except (OSError, smtplib.SMTPException, ssl.SSLError) as error:
        return Check(
            name,
            "fail",
            f"{where}: {type(error).__name__}: {str(error)[:200]}",
            "check CREWBOARD_SMTP_HOST, CREWBOARD_SMTP_PORT and CREWBOARD_SMTP_SECURITY "
            "(465 is usually tls, 587 starttls).",
        )
    return Check(
        name, "ok", f"{where} answers" + (" and accepts the login." if settings.smtp_user else ".")
    )


def _greet(settings: Settings) -> None:
    """Connect, EHLO, STARTTLS and log in as configured; send nothing.

    Raises:
        OSError, smtplib.SMTPException: what the server or the network refused.
    """
    assert settings.smtp_host is not None  # noqa: S101 - _smtp checks it first
    wait = min(NETWORK_WAIT, settings.smtp_timeout)
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if settings.smtp_security == "tls":
        smtp = smtplib.SMTP_SSL(
            settings.smtp_host, settings.smtp_port, timeout=wait, context=context
        )
    else:
        smtp = smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=wait)
    with smtp:
        smtp.ehlo()
        if settings.smtp_security == "starttls":
            smtp.starttls(context=context)
            smtp.ehlo()
        if settings.smtp_user is not None:
            smtp.login(settings.smtp_user, settings.smtp_password_value() or "")


def _disk(settings: Settings) -> Check:
    name = "disk"
    folder = _existing(settings.data_dir)
    free = shutil.disk_usage(folder).free
    shown = _size(free)
    if free < DISK_FAIL_BYTES:
        return Check(
            name,
            "fail",
            f"{shown} free where {folder} is.",
            f"free space there: Crewboard needs at least {_size(DISK_FAIL_BYTES)} to write.",
        )
    if free < DISK_WARN_BYTES:
        return Check(
            name,
            "warn",
            f"{shown} free where {folder} is.",
            f"free space there before it runs out (warns under {_size(DISK_WARN_BYTES)}).",
        )
    return Check(name, "ok", f"{shown} free where {folder} is.")


def _existing(folder: Path) -> Path:
    """`folder`, or its nearest parent that exists (where it would be made)."""
    path = folder.resolve()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _size(count: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def register(cli: click.Group) -> None:
    cli.add_command(doctor)
