"""Settings: environment variables with the `CREWBOARD_` prefix, over an optional TOML file.

Nothing here is built at import time: `load_settings()` is called by the CLI (or a test)
and the result is passed to `create_app(settings)`.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from crewboard.domain.images import DEFAULT_IMAGE_MAX_BYTES, DEFAULT_IMAGE_MAX_EDGE, ImageBounds

ENV_PREFIX = "CREWBOARD_"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")

CommaList = Annotated[list[str], NoDecode]
SmtpSecurity = Literal["starttls", "tls", "none"]
SMTP_SECURITY: tuple[SmtpSecurity, ...] = ("starttls", "tls", "none")
MetricsMode = Literal["off", "on"]
LogFormat = Literal["text", "json"]
AccessLog = Literal["on", "off"]


class Settings(BaseSettings):
    """Everything an operator can set. Each field is also `CREWBOARD_<FIELD>` in the environment."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True)

    data_dir: Path = Field(
        default=Path(".crewboard"), description="Folder for the database and files."
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; default is an SQLite file in the data folder. "
        "PostgreSQL: postgresql+psycopg://user@host:5432/dbname",
    )
    blob_dir: Path | None = Field(
        default=None,
        description="Folder for file contents (spec files, attachments); default: in the database.",
    )
    host: str = Field(default="127.0.0.1", description="Interface to listen on.")
    port: int = Field(
        default=8787, ge=0, le=65535, description="Port to listen on (0: any free port)."
    )
    base_url: str | None = Field(
        default=None, description="Public URL people and agents use, e.g. https://crew.example.com"
    )
    allowed_hosts: CommaList = Field(
        default_factory=list,
        description="Extra Host names accepted besides loopback and the base URL; '*': any.",
    )
    allowed_origins: CommaList = Field(
        default_factory=list,
        description="Extra browser origins accepted besides the base URL's; '*' accepts any.",
    )
    owner_email: str = Field(
        default="owner@crewboard.local",
        description="Email of the owner account made on first start.",
    )
    log_level: str = Field(
        default="info",
        description="How much the server logs: critical, error, warning, info, debug or trace.",
    )
    log_format: LogFormat = Field(
        default="text",
        description="text (uvicorn's lines) or json (one JSON object a line, with the request "
        "id; the server's own access log replaces uvicorn's).",
    )
    access_log: AccessLog = Field(
        default="on",
        description="on: one log line for every HTTP request (uvicorn's, or with log_format "
        "json the server's own); off: none, a little less CPU a request.",
    )
    metrics: MetricsMode = Field(
        default="off",
        description="on: serve Prometheus metrics at /metrics (open unless metrics_token is "
        "set); off: /metrics answers 404.",
    )
    metrics_token: SecretStr | None = Field(
        default=None,
        description="When set, /metrics asks for `Authorization: Bearer <this token>`.",
    )
    node_name: str = Field(
        default="",
        max_length=64,
        description="This process's name behind a load balancer, sent as X-Crewboard-Node.",
    )
    smtp_host: str | None = Field(
        default=None, description="SMTP server for notification emails; unset: no email."
    )
    smtp_port: int = Field(default=587, ge=1, le=65535, description="SMTP server port.")
    smtp_security: SmtpSecurity = Field(
        default="starttls",
        description="starttls (upgrade a plain connection), tls (TLS from the start) or none.",
    )
    smtp_user: str | None = Field(default=None, description="SMTP login name, if it needs one.")
    smtp_password: SecretStr | None = Field(default=None, description="SMTP password.")
    smtp_password_file: Path | None = Field(
        default=None, description="A file holding the SMTP password (instead of smtp_password)."
    )
    smtp_sender: str | None = Field(
        default=None, description="From address of notification emails (needed with smtp_host)."
    )
    smtp_timeout: float = Field(
        default=30.0, gt=0, le=600, description="Seconds to wait on the SMTP server."
    )

    oauth_enabled: bool = Field(
        default=True,
        description="Let MCP clients connect by a person signing in and approving (OAuth 2.1).",
    )
    oauth_dynamic_registration: bool = Field(
        default=True,
        description="Let clients register themselves (RFC 7591); off: only clients known by the "
        "URL of their metadata document can connect.",
    )
    oauth_client_documents: bool = Field(
        default=True,
        description="Accept clients identified by the https URL of their metadata document.",
    )
    oauth_documents_private: bool = Field(
        default=False,
        description="Fetch client metadata documents from private and loopback addresses too "
        "(for a client on your own network).",
    )
    oauth_documents_ca_file: Path | None = Field(
        default=None,
        description="Extra CA certificates (PEM) to trust when fetching client metadata documents.",
    )
    oauth_redirect_hosts: CommaList = Field(
        default_factory=list,
        description="Host names a client may redirect to after consent; empty: any https host, "
        "loopback, or an app's private scheme.",
    )

    session_runners: int = Field(
        default=4, ge=0, le=64,
        description="Spec session turns this process runs at once (0: none; another node runs "
        "them).",
    )  # fmt: skip
    session_turn_lease: float = Field(
        default=30.0, ge=1, le=600,
        description="Seconds a running turn stays claimed without news from its node; after "
        "that another node (or this one restarted) runs it again.",
    )  # fmt: skip
    session_turn_deadline: float = Field(
        default=600.0, ge=5, le=3600,
        description="Seconds one turn may take in all, retries included.",
    )  # fmt: skip
    session_first_turn_wait: float = Field(
        default=75.0, ge=0, le=600,
        description="Seconds start_spec_session waits for the first reply before it answers "
        "(the reply goes on in the background).",
    )  # fmt: skip
    session_turn_limit: int = Field(
        default=80, ge=1, le=10_000, description="Turns one spec session may run."
    )
    session_token_budget: int = Field(
        default=2_000_000, ge=1_000, le=1_000_000_000,
        description="Input plus output tokens one spec session may spend; it stops there.",
    )  # fmt: skip
    session_code_calls: int = Field(
        default=40, ge=1, le=1_000,
        description="Code tool calls (list a folder, read a file, search) one turn of a "
        "code-reading spec session may make; then it writes from what it read.",
    )  # fmt: skip
    session_code_chars: int = Field(
        default=400_000, ge=1_000, le=10_000_000,
        description="Characters of code answers one turn of a code-reading spec session may "
        "read in all.",
    )  # fmt: skip
    session_bridge_wait: float = Field(
        default=120.0, ge=0, le=3600,
        description="Seconds a turn of a code-reading spec session waits for its creator's "
        "`crewboard reverse` to connect before it fails.",
    )  # fmt: skip
    bridge_call_timeout: float = Field(
        default=30.0, ge=1, le=600,
        description="Seconds a code call waits for a `crewboard reverse` to take it, and again "
        "to answer it once taken; a call taken and not answered by then goes back to the "
        "queue.",
    )  # fmt: skip
    image_max_edge: int = Field(
        default=DEFAULT_IMAGE_MAX_EDGE, ge=64, le=16_384,
        description="Pixels on the longest side of an image a tool answers with; a larger one "
        "is scaled down (the original stays downloadable).",
    )  # fmt: skip
    image_max_bytes: int = Field(
        default=DEFAULT_IMAGE_MAX_BYTES, ge=64 * 1024, le=16 * 1024 * 1024,
        description="Bytes of an image a tool answers with (before base64); a larger one is "
        "scaled down until it fits.",
    )  # fmt: skip
    claim_sweep_interval: float = Field(
        default=5.0, ge=0.05, le=300,
        description="Seconds between two looks for task claims whose lease ran out (their "
        "lapse is recorded and the project's people told).",
    )  # fmt: skip

    webhook_allow_networks: str = Field(
        default="", max_length=2000,
        description="Networks (comma-separated CIDRs, e.g. 10.0.0.0/8) webhooks may deliver "
        "to although private, loopback or link-local; empty: none.",
    )  # fmt: skip
    webhook_timeout: float = Field(
        default=10.0, ge=1, le=60,
        description="Seconds one webhook delivery attempt may take, answer included.",
    )  # fmt: skip
    webhook_max_body: int = Field(
        default=262_144, ge=4096, le=4_194_304,
        description="Bytes of a webhook delivery's body; a larger event goes out without its "
        "payload (marked truncated).",
    )  # fmt: skip
    webhook_retry_hours: float = Field(
        default=24.0, ge=0.01, le=168,
        description="Hours a webhook keeps retrying a failing delivery before it is paused "
        "and the project's admins are told.",
    )  # fmt: skip
    webhook_workers: int = Field(
        default=8, ge=1, le=256,
        description="Webhooks one process sends for at once.",
    )  # fmt: skip

    live_streams: int = Field(
        default=500, ge=10, le=100_000,
        description="Live event streams one process holds (a tenth of them kept for the web "
        "app's own).",
    )  # fmt: skip
    live_streams_per_person: int = Field(
        default=20, ge=1, le=100_000,
        description="Live event streams one person's tokens and stream tokens hold together on "
        "one process.",
    )  # fmt: skip
    live_streams_per_project: int = Field(
        default=100, ge=2, le=100_000,
        description="Live event streams (other than the web app's) following one project on one "
        "process (a twentieth of them kept for its admins).",
    )  # fmt: skip
    # --- PostgreSQL: how long a node waits on the database (storage/database.py `Waits`) ---
    db_connect_timeout: float = Field(
        default=5.0, ge=1, le=300,
        description="PostgreSQL: seconds to wait for a new connection to the server.",
    )  # fmt: skip
    db_statement_timeout: float = Field(
        default=60.0, ge=0, le=86_400,
        description="PostgreSQL: seconds one statement may run (0: no limit). Exports, backups, "
        "imports and migrations lift it for their own transaction.",
    )  # fmt: skip
    db_lock_timeout: float = Field(
        default=10.0, ge=0, le=3600,
        description="PostgreSQL: seconds a statement waits for a lock before it gives up and the "
        "call answers 'unavailable, retry' (0: no limit).",
    )  # fmt: skip
    db_idle_in_transaction_timeout: float = Field(
        default=5.0, ge=0, le=3600,
        description="PostgreSQL: seconds a transaction may sit between two statements before the "
        "server ends its session and releases its locks (a node cut off mid-write; 0: no "
        "limit).",
    )  # fmt: skip
    db_keepalives_idle: float = Field(
        default=5.0, ge=1, le=3600,
        description="PostgreSQL: seconds a connection is quiet before TCP keepalive probes start "
        "(then every 2 s; 3 unanswered end it), on the node's side and the server's.",
    )  # fmt: skip
    db_tcp_user_timeout: float = Field(
        default=10.0, ge=0, le=3600,
        description="PostgreSQL: seconds sent data may go unacknowledged before the connection is "
        "dropped, on both sides (0: the system's default).",
    )  # fmt: skip
    db_pool_recycle: float = Field(
        default=1800.0, ge=60, le=86_400,
        description="PostgreSQL: seconds after which a pooled connection is replaced.",
    )  # fmt: skip
    # --- end of the PostgreSQL waits ---

    @field_validator("allowed_hosts", "allowed_origins", "oauth_redirect_hosts", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("webhook_allow_networks")
    @classmethod
    def _check_networks(cls, value: str) -> str:
        for part in value.split(","):
            if part.strip():
                try:
                    ipaddress.ip_network(part.strip(), strict=False)
                except ValueError as error:
                    raise ValueError(
                        f"webhook_allow_networks (CREWBOARD_WEBHOOK_ALLOW_NETWORKS): {part.strip()!r} "
                        "is no network; give CIDRs separated by commas, e.g. 127.0.0.1/32,10.0.0.0/8"
                    ) from error
        return value

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("base_url must be an http:// or https:// URL with a host name")
        return value.rstrip("/")

    @field_validator("smtp_security", mode="before")
    @classmethod
    def _check_smtp_security(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in SMTP_SECURITY:
            return value.strip().lower()
        raise ValueError(
            f"smtp_security (CREWBOARD_SMTP_SECURITY) must be one of {', '.join(SMTP_SECURITY)}; "
            f"got {value!r}"
        )

    @field_validator("metrics", "log_format", "access_log", mode="before")
    @classmethod
    def _lower_case(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("metrics_token", mode="before")
    @classmethod
    def _blank_token_is_unset(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("smtp_host", "smtp_user", "smtp_sender", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value.strip() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check_smtp(self) -> Settings:
        if self.smtp_password is not None and self.smtp_password_file is not None:
            raise ValueError(
                "smtp_password and smtp_password_file (CREWBOARD_SMTP_PASSWORD, "
                "CREWBOARD_SMTP_PASSWORD_FILE) are both set; set one of them"
            )
        if self.smtp_password_file is not None and not self.smtp_password_file.is_file():
            raise ValueError(
                f"smtp_password_file (CREWBOARD_SMTP_PASSWORD_FILE): no file at "
                f"{str(self.smtp_password_file)!r}"
            )
        if self.smtp_host is None:
            return self
        sender = self.smtp_sender or ""
        local, _, domain = sender.rpartition("@")
        if not local or not domain or any(c.isspace() or c in "<>," for c in sender):
            raise ValueError(
                "smtp_sender (CREWBOARD_SMTP_SENDER) must be an email address such as "
                f"crewboard@example.com when smtp_host is set; got {self.smtp_sender!r}"
            )
        return self

    def smtp_password_value(self) -> str | None:
        """The SMTP password, read from `smtp_password_file` when that is how it was given."""
        if self.smtp_password_file is not None:
            return self.smtp_password_file.read_text(encoding="utf-8").strip()
        return None if self.smtp_password is None else self.smtp_password.get_secret_value()

    @property
    def image_bounds(self) -> ImageBounds:
        """What an image a tool answers with is held to (services/images.py)."""
        return ImageBounds(self.image_max_edge, self.image_max_bytes)

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'crewboard.db').resolve()}"

    @property
    def public_url(self) -> str:
        if self.base_url:
            return self.base_url
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host  # noqa: S104
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def accepted_hosts(self) -> frozenset[str]:
        """Host header names (without port) that requests may carry."""
        names = {*LOOPBACK_HOSTS, *(h.lower() for h in self.allowed_hosts)}
        if self.base_url:
            names.add((urlsplit(self.base_url).hostname or "").lower())
        if self.host not in ("0.0.0.0", "::", ""):  # noqa: S104
            names.add(self.host.lower())
        return frozenset(names)

    def accepted_origins(self) -> frozenset[str]:
        """Browser origins (scheme://host[:port]) whose requests are accepted."""
        origins = {o.rstrip("/").lower() for o in self.allowed_origins}
        origins.add(_origin_of(self.public_url))
        for name in ("127.0.0.1", "localhost", "[::1]"):
            origins.add(f"http://{name}:{self.port}")
        return frozenset(origins)


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build settings from (lowest first) a TOML file, the environment, then `overrides`.

    The file is `config_file`, else `$CREWBOARD_CONFIG_FILE` when set. Its keys are the
    field names (`data_dir`, `database_url`, ...).
    """
    path = config_file or _env_path("CONFIG_FILE")
    from_file: dict[str, Any] = {}
    if path is not None:
        with path.open("rb") as handle:
            from_file = tomllib.load(handle)
    # The environment wins over the file: drop the file's value where a variable is set.
    file_values = {
        key: value
        for key, value in from_file.items()
        if f"{ENV_PREFIX}{key.upper()}" not in os.environ
    }
    return Settings(**{**file_values, **overrides})


def _env_path(name: str) -> Path | None:
    value = os.environ.get(f"{ENV_PREFIX}{name}")
    return Path(value) if value else None
