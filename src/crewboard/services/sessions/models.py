"""The model providers and models sessions run on: configured by the server's owner, chosen
per session (`modelId`), per project (its default), or the server's default.

A provider's API key is never stored: the owner names an environment variable or a file, and
the key is read from there each time a turn runs, so rotating it needs no restart. No view,
log line or error shows it, nor a password written into a provider's base URL. A key is one
line of visible ASCII characters (what an HTTP header can carry): a key file of two lines is
refused before anything is sent, naming the file and never its content.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from crewboard.domain.identity.access import Role, Scope
from crewboard.domain.identity.records import Actor
from crewboard.domain.sessions import (
    ModelChoice,
    ModelConfig,
    ProjectModel,
    Provider,
    ProviderSettings,
)
from crewboard.errors import NotFound, PermissionDenied, ValidationFailed
from crewboard.services.identity.access import access_project
from crewboard.services.sessions.providers import ProviderConfig
from crewboard.storage.database import Database
from crewboard.storage.sessions.repository import ModelConfigRepository
from crewboard.storage.uow import UnitOfWork

KINDS = ("openai", "anthropic")
_SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}")
DEFAULT_BASE = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}


def config_of(uow: UnitOfWork) -> ModelConfigRepository:
    return ModelConfigRepository(uow.conn)


@dataclass(frozen=True)
class ResolvedModel:
    """A model ready to call: the provider's settings with the key read just now."""

    id: str
    model: str
    max_tokens: int
    provider: ProviderConfig


class NoModel(Exception):
    """No model can run this session's turn; the message says why, for the person."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# --- records ----------------------------------------------------------------------------------


def provider_of(row: dict[str, Any]) -> Provider:
    """A stored provider as its record (where its key is read from, never the key)."""
    return Provider(
        id=row["id"], kind=row["kind"], base_url=row["base_url"], key_env=row["key_env"],
        key_file=row["key_file"], timeout_seconds=row["timeout_seconds"],
        max_retries=row["max_retries"], stream=row["stream"], updated_at=row["updated_at"],
    )  # fmt: skip


def model_of(row: dict[str, Any]) -> ModelChoice:
    return ModelChoice(id=row["id"], provider_id=row["provider_id"], model=row["model"],
                       label=row["label"], max_tokens=row["max_tokens"],
                       is_default=row["is_default"])  # fmt: skip


def models_of(repo: ModelConfigRepository) -> tuple[ModelChoice, ...]:
    return tuple(model_of(m) for m in repo.models())


def config_read(repo: ModelConfigRepository) -> ModelConfig:
    return ModelConfig(tuple(provider_of(p) for p in repo.providers()), models_of(repo))


# --- owner's configuration --------------------------------------------------------------------


def _owner_only(uow: UnitOfWork, actor: Actor) -> None:
    user = uow.users.get(actor.user_id)
    if user is None or not user.is_owner or actor.token is not None:
        raise PermissionDenied(
            "Only the server's owner configures model providers, signed in to the web app or "
            "at the CLI.",
            {"requiredRole": "owner"},
        )


def list_config(db: Database) -> ModelConfig:
    """Every provider and model (no keys): for the owner's settings page and the CLI."""
    return db.read(lambda uow: config_read(config_of(uow)))


def check_provider(
    *,
    provider_id: str,
    kind: str,
    base_url: str | None,
    key_env: str | None,
    key_file: str | None,
    timeout: float,
    max_retries: int,
) -> ProviderSettings:
    """A provider's settings, checked.

    Raises:
        ValidationFailed: naming the field and what it accepts.
    """
    if not _SLUG.fullmatch(provider_id):
        raise ValidationFailed.field(
            "id", "use 1 to 64 lowercase letters, digits, dots, hyphens or underscores."
        )
    if kind not in KINDS:
        raise ValidationFailed.field("kind", f"{kind!r} is not a provider kind.", list(KINDS))
    url = (base_url or DEFAULT_BASE[kind]).strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise ValidationFailed.field(
            "baseUrl",
            "must be an http or https URL without a query, e.g. http://127.0.0.1:11434/v1.",
        )
    if key_env and key_file:
        raise ValidationFailed.field("keyEnv", "give the key's variable or its file, not both.")
    if key_env is not None and not _ENV.fullmatch(key_env):
        raise ValidationFailed.field("keyEnv", "must be an environment variable's name.")
    if key_file is not None and not Path(key_file).is_absolute():
        raise ValidationFailed.field("keyFile", "must be an absolute path.")
    if not 1 <= timeout <= 600:
        raise ValidationFailed.field("timeoutSeconds", "must be 1 to 600 seconds.")
    if not 0 <= max_retries <= 10:
        raise ValidationFailed.field("maxRetries", "must be 0 to 10.")
    return ProviderSettings(id=provider_id, kind=kind, base_url=url, key_env=key_env or None,
                            key_file=key_file or None, timeout_seconds=float(timeout),
                            max_retries=max_retries)  # fmt: skip


def do_put_provider(
    db: Database, actor: Actor | None, values: ProviderSettings, *, stream: bool = True
) -> Provider:
    """Add or replace a provider (`values` from `check_provider`); actor None is the CLI.

    Raises:
        PermissionDenied: not the owner.
    """

    def work(uow: UnitOfWork) -> Provider:
        if actor is not None:
            _owner_only(uow, actor)
        repo = config_of(uow)
        repo.put_provider({**asdict(values), "stream": stream, "created_at": uow.now,
                           "updated_at": uow.now})  # fmt: skip
        found = repo.provider(values.id)
        assert found is not None  # noqa: S101 - just written
        return provider_of(found)

    return db.write(work)


def do_put_model(
    db: Database,
    actor: Actor | None,
    *,
    model_id: str,
    provider_id: str,
    model: str,
    label: str | None = None,
    max_tokens: int = 4096,
    is_default: bool = False,
) -> ModelChoice:
    """Add or replace a model of a configured provider.

    Raises:
        ValidationFailed, NotFound (the provider), PermissionDenied.
    """
    if not _SLUG.fullmatch(model_id):
        raise ValidationFailed.field(
            "id", "use 1 to 64 lowercase letters, digits, dots, hyphens or underscores."
        )
    name = model.strip()
    if not name or len(name) > 200 or any(ord(c) < 32 for c in name):
        raise ValidationFailed.field("model", "must be the provider's model name (1-200 chars).")
    if not 256 <= max_tokens <= 200_000:
        raise ValidationFailed.field("maxTokens", "must be 256 to 200000.")

    def work(uow: UnitOfWork) -> ModelChoice:
        if actor is not None:
            _owner_only(uow, actor)
        repo = config_of(uow)
        if repo.provider(provider_id) is None:
            known = [p["id"] for p in repo.providers()]
            raise ValidationFailed.field(
                "providerId", f"{provider_id!r} is not a configured provider.", known
            )
        repo.put_model({"id": model_id, "provider_id": provider_id, "model": name,
                        "label": (label or "").strip()[:200] or name, "max_tokens": max_tokens,
                        "is_default": is_default, "created_at": uow.now})  # fmt: skip
        found = repo.model(model_id)
        assert found is not None  # noqa: S101 - just written
        return model_of(found)

    return db.write(work)


def do_delete(db: Database, actor: Actor | None, *, what: str, ident: str) -> None:
    """Remove a provider (and its models) or a model.

    Raises:
        NotFound, PermissionDenied.
    """

    def work(uow: UnitOfWork) -> None:
        if actor is not None:
            _owner_only(uow, actor)
        repo = config_of(uow)
        gone = repo.delete_provider(ident) if what == "provider" else repo.delete_model(ident)
        if not gone:
            raise NotFound(f"No {what} {ident!r} is configured.", {"resource": what, "ref": ident})

    db.write(work)


def set_project_model(
    db: Database, actor: Actor, *, project: str, model_id: str | None
) -> ProjectModel:
    """A project's default model (None: the server's default). Needs the project's admin role.

    Raises:
        ValidationFailed: an unknown model, naming the configured ones. NotFound,
        PermissionDenied.
    """

    def work(uow: UnitOfWork) -> ProjectModel:
        access = access_project(uow, actor, project, scope=Scope.PROJECTS_ADMIN, role=Role.ADMIN)
        repo = config_of(uow)
        if model_id is not None and repo.model(model_id) is None:
            known = [m["id"] for m in repo.models()]
            raise ValidationFailed.field("modelId", f"{model_id!r} is not configured.", known)
        repo.set_project_model(access.project.id, model_id, uow.now)
        return ProjectModel(access.project.id, model_id)

    return db.write(work)


def get_project_model(db: Database, actor: Actor, *, project: str) -> ProjectModel:
    """A project's default model for new sessions (None: the server's default).

    Raises:
        NotFound.
    """

    def work(uow: UnitOfWork) -> ProjectModel:
        access = access_project(uow, actor, project)
        return ProjectModel(access.project.id, config_of(uow).project_model(access.project.id))

    return db.read(work)


# --- choosing and resolving ---------------------------------------------------------------------


def check_model_choice(uow: UnitOfWork, model_id: str | None) -> str | None:
    """The model a new session names, checked against the configured ones (None: choose later).

    Raises:
        ValidationFailed: an unknown id, naming the configured ones.
    """
    if model_id is None:
        return None
    repo = config_of(uow)
    if repo.model(model_id) is None:
        known = [m["id"] for m in repo.models()]
        if not known:
            raise ValidationFailed.field(
                "modelId", f"{model_id!r}: no model is configured on this server yet; leave "
                "modelId out, and an admin can configure one in Settings.",
            )  # fmt: skip
        raise ValidationFailed.field("modelId", f"{model_id!r} is not a configured model.", known)
    return model_id


def resolve_model(uow: UnitOfWork, *, chosen: str | None, project_id: str) -> ResolvedModel:
    """The model a turn runs on: the session's, else the project's default, else the server's.

    Raises:
        NoModel: none configured, the chosen one was removed, or its key cannot be read.
    """
    repo = config_of(uow)
    model_id = chosen or repo.project_model(project_id)
    row = repo.model(model_id) if model_id else None
    if row is None and model_id is None:
        row = next((m for m in repo.models() if m["is_default"]), None) or next(
            iter(repo.models()), None
        )
    if row is None:
        if model_id is not None:
            raise NoModel("model_removed", f"The model {model_id!r} is no longer configured.")
        raise NoModel(
            "no_provider",
            "No model provider is configured on this server. An admin adds one in Settings → "
            "Models (or with `crewboard model add`); then send the message again.",
        )
    provider = repo.provider(row["provider_id"])
    assert provider is not None  # noqa: S101 - the foreign key cascades
    return ResolvedModel(
        id=row["id"], model=row["model"], max_tokens=row["max_tokens"],
        provider=ProviderConfig(
            id=provider["id"], kind=provider["kind"], base_url=provider["base_url"],
            api_key=read_key(provider), timeout=provider["timeout_seconds"],
            max_retries=provider["max_retries"], stream=provider["stream"],
        ),
    )  # fmt: skip


def read_key(provider: dict[str, Any]) -> str | None:
    """The provider's key, read now from where the owner said it is.

    Raises:
        NoModel: the variable is unset or the file cannot be read (the message names where,
        never a value).
    """
    if provider["key_env"]:
        value = os.environ.get(provider["key_env"], "").strip()
        if not value:
            raise NoModel(
                "no_key",
                f"The key of provider {provider['id']!r} is read from the environment "
                f"variable {provider['key_env']}, which is not set on this server.",
            )
        return _one_line(value, provider, f"the environment variable {provider['key_env']}")
    if provider["key_file"]:
        try:
            value = Path(provider["key_file"]).read_text(encoding="utf-8").strip()
        except OSError as error:
            raise NoModel(
                "no_key",
                f"The key file of provider {provider['id']!r} ({provider['key_file']}) cannot "
                f"be read: {error.strerror or type(error).__name__}.",
            ) from None
        if not value:
            raise NoModel("no_key", f"The key file {provider['key_file']} is empty.")
        return _one_line(value, provider, f"the key file {provider['key_file']}")
    return None


_NOT_IN_A_KEY = re.compile(r"[^\x21-\x7e]")  # what an HTTP header's value cannot carry


def _one_line(value: str, provider: dict[str, Any], where: str) -> str:
    """The key, when it is one line of visible characters.

    Raises:
        NoModel: it holds a line break, a space, a control character or a character outside
        ASCII (never shown).
    """
    if _NOT_IN_A_KEY.search(value):
        raise NoModel(
            "no_key",
            f"The key of provider {provider['id']!r} in {where} holds a line break, a space, a "
            "control character or a character outside ASCII; a key is one line of visible ASCII "
            "characters. Fix it there and send the message again.",
        )
    return value
