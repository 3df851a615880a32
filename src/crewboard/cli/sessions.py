"""Operator commands for the models spec sessions run on: providers (where a model API is and
where its key is read from) and the models of each. They act on the server's database as its
operator (no person signs in here). No command prints a key: a provider shows only where its
key is read from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from crewboard.cli.common import State, emit, json_option, open_database, pass_state, run_guarded
from crewboard.contract.sessions import present
from crewboard.services.sessions import models


@click.group("model")
def model_group() -> None:
    """Models spec sessions run on, and their providers."""


@model_group.group("provider")
def provider_group() -> None:
    """Model providers: an OpenAI- or Anthropic-compatible API and where its key is read from."""


def _provider_line(p: dict[str, Any]) -> str:
    return (
        f"{p['id']}  {p['kind']}  {p['baseUrl']}  key {p['keyFrom'] or 'none'}  "
        f"timeout {p['timeoutSeconds']:g}s  retries {p['maxRetries']}"
        f"{'' if p['stream'] else '  no stream'}"
    )


def _model_line(m: dict[str, Any]) -> str:
    return (
        f"{m['id']}  {m['providerId']}  {m['model']}  {m['label']}  max {m['maxTokens']} tokens"
        f"{'  (default)' if m['isDefault'] else ''}"
    )


@provider_group.command("add")
@click.argument("provider_id", metavar="ID")
@click.option(
    "--kind", required=True, help=f"The API it speaks: {', '.join(models.KINDS)}."
)  # checked by the service, which names the field and the kinds
@click.option("--base-url", default=None, help="The API's URL (default: the kind's public one).")
@click.option("--key-env", default=None, metavar="NAME", help="Read the key from this variable.")
@click.option(
    "--key-file",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the key from this file (an absolute path).",
)
@click.option("--timeout", type=float, default=120.0, show_default=True, help="Seconds a call.")
@click.option("--retries", type=int, default=2, show_default=True, help="Retries of a call.")
@click.option("--no-stream", is_flag=True, help="Ask for whole answers, not streamed ones.")
@json_option
@pass_state
def provider_add(
    state: State,
    provider_id: str,
    kind: str,
    base_url: str | None,
    key_env: str | None,
    key_file: Path | None,
    timeout: float,
    retries: int,
    no_stream: bool,
    as_json: bool,
) -> None:
    """Add a provider, or replace the one with this id. The key is read when a turn runs."""
    with open_database(state.settings()) as db:

        def act() -> None:
            values = models.check_provider(
                provider_id=provider_id, kind=kind, base_url=base_url, key_env=key_env,
                key_file=None if key_file is None else str(key_file), timeout=timeout,
                max_retries=retries,
            )  # fmt: skip
            view = present.provider_view(
                models.do_put_provider(db, None, values, stream=not no_stream)
            )
            emit(as_json, view, lambda: f"provider {_provider_line(view)}")

        run_guarded(act, as_json)


@provider_group.command("list")
@json_option
@pass_state
def provider_list(state: State, as_json: bool) -> None:
    """List providers and where each reads its key from (never the key)."""
    with open_database(state.settings()) as db:
        found = present.config_view(models.list_config(db))["providers"]
        emit(as_json, found, lambda: "\n".join(map(_provider_line, found)) or "no providers")


@provider_group.command("remove")
@click.argument("provider_id", metavar="ID")
@json_option
@pass_state
def provider_remove(state: State, provider_id: str, as_json: bool) -> None:
    """Remove a provider and its models."""
    with open_database(state.settings()) as db:

        def act() -> None:
            models.do_delete(db, None, what="provider", ident=provider_id)
            emit(as_json, {"removed": provider_id}, lambda: f"removed provider {provider_id}")

        run_guarded(act, as_json)


@model_group.command("add")
@click.argument("model_id", metavar="ID")
@click.option("--provider", "provider_id", required=True, metavar="PID", help="Its provider.")
@click.option("--model", "name", required=True, help="The provider's name for the model.")
@click.option("--label", default=None, help="What people see (default: the model's name).")
@click.option("--max-tokens", type=int, default=4096, show_default=True, help="Of a reply.")
@click.option("--default", "is_default", is_flag=True, help="The server's default model.")
@json_option
@pass_state
def model_add(
    state: State,
    model_id: str,
    provider_id: str,
    name: str,
    label: str | None,
    max_tokens: int,
    is_default: bool,
    as_json: bool,
) -> None:
    """Add a model of a configured provider, or replace the one with this id."""
    with open_database(state.settings()) as db:

        def act() -> None:
            view = present.model_view(models.do_put_model(
                db, None, model_id=model_id, provider_id=provider_id, model=name, label=label,
                max_tokens=max_tokens, is_default=is_default,
            ))  # fmt: skip
            emit(as_json, view, lambda: f"model {_model_line(view)}")

        run_guarded(act, as_json)


@model_group.command("list")
@json_option
@pass_state
def model_list(state: State, as_json: bool) -> None:
    """List models with their providers."""
    with open_database(state.settings()) as db:
        found = present.config_view(models.list_config(db))["models"]
        emit(as_json, found, lambda: "\n".join(map(_model_line, found)) or "no models")


@model_group.command("remove")
@click.argument("model_id", metavar="ID")
@json_option
@pass_state
def model_remove(state: State, model_id: str, as_json: bool) -> None:
    """Remove a model (sessions that named it say so on their next turn)."""
    with open_database(state.settings()) as db:

        def act() -> None:
            models.do_delete(db, None, what="model", ident=model_id)
            emit(as_json, {"removed": model_id}, lambda: f"removed model {model_id}")

        run_guarded(act, as_json)


def register(cli: click.Group) -> None:
    cli.add_command(model_group)
