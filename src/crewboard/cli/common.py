"""What every command shares: settings, the database, errors, output and who acts."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from crewboard.config import Settings, load_settings
from crewboard.contract.args import Args, argument_error, input_schema, validate_arguments
from crewboard.domain.identity.records import Actor
from crewboard.domain.validation import INT32_MAX
from crewboard.errors import CrewboardError
from crewboard.services.identity import users
from crewboard.services.notifications.notify import enable_email
from crewboard.services.specs.tasks_md import install as install_tasks_md
from crewboard.services.webhooks.sending import configure_from as configure_webhooks
from crewboard.storage import migrate
from crewboard.storage.database import Database

A = TypeVar("A", bound=Args)
# What a command acting as a person answers: its data (printed as JSON with --json) and the
# human text of it.
Shown = tuple[Any, Callable[[], str]]

# Whole numbers at the CLI stay within what the database columns hold, like every other door.
WHOLE = click.IntRange(0, INT32_MAX)
PAGE_LIMIT = click.IntRange(1, 200)

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
as_option = click.option(
    "--as",
    "as_email",
    default=None,
    metavar="EMAIL",
    help="Act as this person (default: the owner).",
)


class State:
    def __init__(self, config_file: Path | None) -> None:
        self.config_file = config_file

    def settings(self, **overrides: Any) -> Settings:
        try:
            return load_settings(self.config_file, **overrides)
        except ValidationError as error:
            problems = "; ".join(_problem(e["loc"], e["msg"]) for e in error.errors())
            raise click.ClickException(f"bad setting: {problems}") from error


def _problem(loc: tuple[int | str, ...], msg: str) -> str:
    """One refused setting: its name and why; a rule over several settings has no name, and
    pydantic's "Value error, " prefix says nothing to an operator."""
    said = msg.removeprefix("Value error, ")
    return f"{'.'.join(str(p) for p in loc)}: {said}" if loc else said


pass_state = click.make_pass_decorator(State)


@contextmanager
def open_database(settings: Settings, *, require_current: bool = True) -> Iterator[Database]:
    """Open the configured database; refuse to work on a schema older than this version's."""
    db = Database.from_settings(settings)
    install_tasks_md(db)  # board status changes rewrite the boxes of tasks.md files
    configure_webhooks(db, settings)  # a webhook made here meets the server's address policy
    if settings.smtp_host is not None:
        # Queue the emails of what the CLI does; the server's mailer sends them.
        enable_email(db, settings.public_url)
    try:
        if require_current:
            current, head = migrate.current_revision(db), migrate.head_revision()
            if current != head:
                raise click.ClickException(
                    f"the database schema is at {current or 'nothing'}, this version needs "
                    f"{head}: run `crewboard migrate` (or `crewboard serve`, which migrates)."
                )
        yield db
    finally:
        db.dispose()


def emit(as_json: bool, data: Any, text: Callable[[], str]) -> None:
    """Print `data` as JSON for scripts, or the human text."""
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=False))
    else:
        click.echo(text())


def echo_error(code: str, message: str, details: dict[str, Any] | None = None) -> None:
    """A failure as a script reads it with `--json`: one `{"error": …}` line on stderr."""
    body = {"code": code, "message": message, "details": details or {}}
    click.echo(json.dumps({"error": body}), err=True)


def run_guarded(action: Callable[[], None], as_json: bool = False) -> None:
    """Turn a CrewboardError into a message on stderr and exit status 1."""
    try:
        action()
    except CrewboardError as error:
        if as_json:
            echo_error(str(error.code), error.message, error.details)
        else:
            click.echo(f"error: {error.message} [{error.code}]", err=True)
        sys.exit(1)


def guarded(state: State, as_json: bool, work: Callable[[Database], None]) -> None:
    """Run `work` on the configured database, a CrewboardError (opening included) becoming
    the refusal on stderr and exit status 1: the frame of every hand-written command."""
    with open_database(state.settings()) as db:
        run_guarded(lambda: work(db), as_json)


def as_person(work: Callable[..., Shown]) -> Callable[..., None]:
    """A hand-written command that acts as a person (`--as EMAIL`, else the owner) and prints
    what `work(db, actor, **its arguments)` answers, with `--json` its data as JSON; declare
    the command's own arguments above this decorator, its name and help on `work`."""

    def command(state_: State, /, as_email: str | None, as_json: bool, **given: Any) -> None:
        def act(db: Database) -> None:
            data, text = work(db, acting_person(db, as_email), **given)
            emit(as_json, data, text)

        guarded(state_, as_json, act)

    functools.update_wrapper(command, work)  # the name and help click shows are work's
    return as_option(json_option(pass_state(command)))


def check_args(model: type[A], arguments: dict[str, Any]) -> A:
    """`arguments` checked by an operation's argument model, as MCP checks them, so a bad
    value is refused with the code, field and accepted values MCP gives (not a usage error).
    Values left as None are not sent, so the model's defaults apply.

    Raises:
        ValidationFailed, LimitExceeded: naming the field.
    """
    sent = {key: value for key, value in arguments.items() if value is not None}
    try:
        return validate_arguments(model, sent)
    except ValidationError as error:
        raise argument_error(error, input_schema(model)) from None


def read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    return str(click.prompt("Password", hide_input=True, confirmation_prompt=True))


def split_list(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def acting_person(db: Database, email: str | None) -> Actor:
    """The person an operator command acts as: `--as EMAIL`, else the instance owner."""
    if email is not None:
        return users.person_actor(users.get_user_by_email(db, email))
    owner = next((u for u in users.list_users(db) if u.is_owner), None)
    if owner is None:
        raise click.ClickException("no owner account yet: run `crewboard init` first")
    return users.person_actor(owner)
