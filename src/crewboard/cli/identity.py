"""Operator commands for identity: people's accounts and API tokens. Each takes --json."""

from __future__ import annotations

import click

from crewboard.cli.common import (
    State,
    emit,
    guarded,
    json_option,
    open_database,
    pass_state,
    read_password,
    run_guarded,
    split_list,
)
from crewboard.contract.catalogue import DEFAULT_SET_WORDS
from crewboard.domain.identity.access import Role, Scope, TokenKind, Toolset
from crewboard.domain.identity.records import ListedToken
from crewboard.services.identity import tokens, users
from crewboard.services.views import seat_note, token_view, user_view
from crewboard.storage.database import Database


@click.group("user")
def user_group() -> None:
    """People's accounts."""


@user_group.command("create")
@click.argument("email")
@click.option("--name", default=None, help="Display name (default: the part before @).")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@json_option
@pass_state
def user_create(
    state: State, email: str, name: str | None, password_stdin: bool, as_json: bool
) -> None:
    """Create a person's account."""
    with open_database(state.settings()) as db:
        password = read_password(password_stdin)

        def act() -> None:
            user = users.create_user(db, email=email, password=password, display_name=name)
            emit(as_json, user_view(user), lambda: f"created user {user.email} ({user.id})")

        run_guarded(act, as_json)


@user_group.command("list")
@json_option
@pass_state
def user_list(state: State, as_json: bool) -> None:
    """List accounts."""
    with open_database(state.settings()) as db:
        found = users.list_users(db)
        emit(
            as_json,
            [user_view(u) for u in found],
            lambda: (
                "\n".join(
                    f"{u.id}  {u.email}  {u.display_name}{'  (owner)' if u.is_owner else ''}"
                    for u in found
                )
                or "no users"
            ),
        )


@user_group.command("set-password")
@click.argument("email")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@pass_state
def user_set_password(state: State, email: str, password_stdin: bool) -> None:
    """Set a person's password."""
    with open_database(state.settings()) as db:
        password = read_password(password_stdin)
        run_guarded(
            lambda: click.echo(
                f"password set for {users.set_password(db, email=email, password=password).email}"
            )
        )


@click.group("token")
def token_group() -> None:
    """API tokens for MCP clients and scripts."""


@token_group.command("create")
@click.option("--user", "email", required=True, metavar="EMAIL", help="Whose token it is.")
@click.option(
    "--scopes",
    required=True,
    help=f"Comma-separated: {', '.join(s.value for s in Scope)}.",
)
@click.option(
    "--kind",
    default="personal",
    show_default=True,
    help="personal or agent.",
    type=click.Choice([k.value for k in TokenKind]),
)
@click.option("--project", default=None, metavar="KEY", help="Limit the token to one project.")
@click.option(
    "--role",
    default=None,
    type=click.Choice([r.value for r in Role]),
    help="Cap the token's role on --project.",
)
@click.option(
    "--toolsets",
    default=None,
    help=f"The toolsets MCP shows the token, comma-separated: "
    f"{', '.join(t.value for t in Toolset)}. None given: {DEFAULT_SET_WORDS}.",
)
@click.option(
    "--seat",
    default=None,
    metavar="SEAT",
    help="For an agent token: the AI seat of --project it acts as (its id or name).",
)
@click.option("--name", default=None, help="A label to recognise the token by.")
@json_option
@pass_state
def token_create(
    state: State,
    email: str,
    scopes: str,
    kind: str,
    project: str | None,
    role: str | None,
    toolsets: str | None,
    seat: str | None,
    name: str | None,
    as_json: bool,
) -> None:
    """Issue a token; its secret is printed once. An agent token without --seat acts as its
    project's only AI seat while there is exactly one, else as none."""

    def act(db: Database) -> None:
        actor = users.person_actor(users.get_user_by_email(db, email))
        issued = tokens.issue_token(
            db,
            actor,
            kind=kind,
            scopes=split_list(scopes),
            name=name,
            project=project,
            role=role,
            toolsets=split_list(toolsets),
            seat=seat,
        )
        seat_line = f"; {seat_note(issued.seat)}" if issued.seat else ""
        emit(
            as_json,
            {**token_view(issued.token, issued.seat), "token": issued.secret},
            lambda: (
                f"{issued.secret}\n(token {issued.token.id}{seat_line}; "
                "the secret is shown only now)\n"
                f"toolsets: {_toolsets_words(issued.token.toolsets)}"
            ),
        )

    guarded(state, as_json, act)


def _toolsets_words(toolsets: tuple[Toolset, ...]) -> str:
    """The toolsets a token's MCP client is shown, said truly when it names none."""
    return ", ".join(toolsets) if toolsets else f"none named, so {DEFAULT_SET_WORDS}"


@token_group.command("list")
@click.option("--user", "email", default=None, metavar="EMAIL", help="Only this person's tokens.")
@click.option("--revoked", is_flag=True, help="Include revoked tokens.")
@json_option
@pass_state
def token_list(state: State, email: str | None, revoked: bool, as_json: bool) -> None:
    """List tokens (never their secrets)."""

    def act(db: Database) -> None:
        if email is None:
            found = tokens.list_all_tokens(db, include_revoked=revoked)
        else:
            actor = users.person_actor(users.get_user_by_email(db, email))
            found = tokens.list_tokens(db, actor, include_revoked=revoked)
        emit(
            as_json,
            [token_view(t.token, t.seat) for t in found],
            lambda: "\n".join(_token_line(t) for t in found) or "no tokens",
        )

    guarded(state, as_json, act)


def _token_line(listed: ListedToken) -> str:
    t = listed.token
    return (
        f"{t.id}  {t.display_prefix}…  {t.kind}  {','.join(sorted(t.scopes))}  "
        f"last used {t.last_used_at.isoformat() if t.last_used_at else 'never'}"
        f"{'  REVOKED' if t.revoked_at else ''}  {t.name}"
        + (f"  ({seat_note(listed.seat)})" if listed.seat else "")
    )


@token_group.command("revoke")
@click.argument("token_id")
@json_option
@pass_state
def token_revoke(state: State, token_id: str, as_json: bool) -> None:
    """Revoke a token at once."""

    def act(db: Database) -> None:
        token = tokens.revoke_token(db, token_id)
        emit(as_json, token_view(token), lambda: f"revoked {token.id}")

    guarded(state, as_json, act)


def register(cli: click.Group) -> None:
    for group in (user_group, token_group):
        cli.add_command(group)
