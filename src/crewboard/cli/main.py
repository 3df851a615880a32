"""`crewboard` entry point: serve, init, migrate, and the admin groups."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import click

from crewboard import __version__
from crewboard.cli import backup as backup_cli
from crewboard.cli import board as repos
from crewboard.cli import doctor as doctor_cli
from crewboard.cli import handoffs as handoff_cli
from crewboard.cli import identity, memory, operations, projects, reverse, transfer
from crewboard.cli import sessions as session_cli
from crewboard.cli.common import State, echo_error, emit, open_database, pass_state
from crewboard.cli.firststart import print_first_start, print_reuse
from crewboard.cli.review import drafts as review
from crewboard.cli.review import inbox, proposals
from crewboard.config import Settings
from crewboard.contract.catalogue import default_catalogue
from crewboard.domain.identity.access import parse_toolsets
from crewboard.errors import CrewboardError
from crewboard.services.identity.tokens import authenticate_token
from crewboard.services.projects.bootstrap import initialise
from crewboard.storage import migrate as migrations
from crewboard.storage.database import Database


@click.group()
@click.version_option(__version__, prog_name="crewboard")
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="CREWBOARD_CONFIG_FILE",
    help="TOML settings file (environment variables CREWBOARD_* win over it).",
)
@click.pass_context
def cli(ctx: click.Context, config_file: Path | None) -> None:
    """Crewboard: one shared project for a team and its AI agents."""
    ctx.obj = State(config_file)


def _migrate_and_initialise(settings: Settings, db: Database) -> None:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    migrations.upgrade(db)
    if migrations.repair_search_index(db):
        click.echo("The task search index did not match the tasks table; it has been rebuilt.")
    migrations.refresh_statistics(db)
    first = initialise(db, owner_email=settings.owner_email)
    if first is not None:
        print_first_start(settings, first)
    else:
        print_reuse(settings)


@cli.command()
@click.option("--host", default=None, help="Interface to listen on (CREWBOARD_HOST).")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Port to listen on (CREWBOARD_PORT).",
)
@pass_state
def serve(state: State, host: str | None, port: int | None) -> None:
    """Migrate, initialise an empty instance, and serve HTTP (web, REST, MCP)."""
    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = state.settings(**overrides)
    from crewboard.cli import serving  # noqa: PLC0415 - the app loads only to serve

    sock = serving.listen(settings)  # a taken port stops here, before anything is printed
    with sock, open_database(settings, require_current=False) as db:
        _migrate_and_initialise(settings, db)
        serving.serve(settings, db, sock)


@cli.command()
@pass_state
def init(state: State) -> None:
    """Migrate and, on an empty instance, make the owner, a demo project and a first token."""
    settings = state.settings()
    with open_database(settings, require_current=False) as db:
        _migrate_and_initialise(settings, db)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_state
def migrate(state: State, as_json: bool) -> None:
    """Bring the database schema up to date."""
    settings = state.settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    with open_database(settings, require_current=False) as db:
        before, after = migrations.upgrade(db)
    emit(
        as_json,
        {"from": before, "to": after, "changed": before != after},
        lambda: (
            f"schema {before or 'empty'} → {after}"
            if before != after
            else f"schema is current ({after})"
        ),
    )


@cli.command("mcp")
@click.option(
    "--token",
    envvar="CREWBOARD_TOKEN",
    help="API token (default: $CREWBOARD_TOKEN; the variable keeps it out of process lists).",
)
@click.option(
    "--toolsets",
    envvar="CREWBOARD_TOOLSETS",
    help="Toolsets to show, comma-separated, or 'all' (default: the token's own, else board "
    "and memory; $CREWBOARD_TOOLSETS).",
)
@click.option(
    "--code",
    "code_folder",
    type=click.Path(path_type=Path),
    metavar="FOLDER",
    help="Also offer FOLDER, read-only, to the spec sessions you start in --code-project, "
    "as `crewboard reverse` does, from this process (no server needed).",
)
@click.option(
    "--code-project",
    metavar="KEY",
    help="The project whose spec sessions read --code's folder (needed with --code).",
)
@pass_state
def mcp_stdio(
    state: State,
    token: str | None,
    toolsets: str | None,
    code_folder: Path | None,
    code_project: str | None,
) -> None:
    """Serve MCP over stdio for a client on this machine (stdout carries protocol only)."""
    if code_folder is not None and not code_project:
        raise click.UsageError(
            "--code needs --code-project KEY: the project whose sessions read it."
        )
    if code_project and code_folder is None:
        raise click.UsageError("--code-project is for --code FOLDER: name the folder to offer.")
    settings = state.settings()
    root = (
        None
        if code_folder is None
        else reverse.checked_folder(code_folder, settings.data_dir, "--code")
    )
    if not token:
        raise click.ClickException("set CREWBOARD_TOKEN (or pass --token) to the token to act with")
    try:
        chosen = parse_toolsets(toolsets, "--toolsets") if toolsets else None
    except CrewboardError as error:
        raise click.ClickException(error.message) from error
    with open_database(settings) as db:
        try:
            authenticate_token(db, token)
        except CrewboardError as error:
            raise click.ClickException(error.message) from error
        from crewboard.cli.reverse import local  # noqa: PLC0415 - loaded only to serve
        from crewboard.mcp.stdio import serve_stdio  # noqa: PLC0415 - loaded only to serve

        bridge = None
        if root is not None and code_project:  # before serving: a refusal ends the command
            bridge = local.open_bridge(db, settings, token, code_project, root)
        loops = {local.LOOP: bridge.run} if bridge is not None else {}
        try:
            anyio.run(
                serve_stdio, db, settings, token, chosen, loops,
                backend_options=_event_loop_options(),
            )  # fmt: skip
        finally:
            if bridge is not None:
                bridge.close()


def _event_loop_options() -> dict[str, bool]:
    """uvloop where it is installed (not on Windows), as uvicorn picks it for `serve`: the
    event loop is a good part of what a small MCP call costs."""
    try:
        import uvloop  # noqa: F401, PLC0415 - only to learn whether it is there
    except ImportError:
        return {}
    return {"use_uvloop": True}


backup_cli.register(cli)
doctor_cli.register(cli)
identity.register(cli)
projects.register(cli)
repos.register(cli)
handoff_cli.register(cli)
review.register(cli)
proposals.register(cli)
memory.register(cli)
inbox.register(cli)
session_cli.register(cli)
reverse.register(cli)
transfer.register(cli)
# Last: a command written by hand at an operation's words is kept in place of the built one.
operations.register(cli, default_catalogue())


def main() -> None:
    """The `crewboard` command. With `--json`, a failure click reports itself (a usage error,
    a command that cannot start: an old schema, no owner yet, a bad setting) comes out as the
    same `{"error": …}` line on standard error as Crewboard's own refusals, so a script
    reads one shape whatever went wrong."""
    try:
        status = cli.main(prog_name="crewboard", standalone_mode=False)
    except click.ClickException as error:
        if "--json" not in sys.argv[1:]:
            error.show()
        else:
            code = "USAGE" if isinstance(error, click.UsageError) else "COMMAND_FAILED"
            echo_error(code, error.format_message())
        sys.exit(error.exit_code)
    except click.Abort:
        click.echo("Aborted!", err=True)
        sys.exit(1)
    if isinstance(status, int):  # click's own exit (--help, --version): its status
        sys.exit(status)
