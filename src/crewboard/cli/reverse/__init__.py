"""`crewboard reverse`: offer a folder of code, read-only, to a project's spec sessions.

Runs on the machine that has the code. It connects out to the server (no port opened here),
and answers the sessions' list_folder, read_file and search_text calls from the folder; secrets
and ignored files are never read (rules.py), and every answer is bounded (folder.py).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import click

from crewboard import __version__
from crewboard.cli.common import State, pass_state
from crewboard.cli.reverse.client import BridgeClient, Server
from crewboard.cli.reverse.folder import CodeFolder
from crewboard.cli.reverse.rules import DATA_MARKERS


@click.command("reverse")
@click.argument(
    "folder", type=click.Path(path_type=Path, file_okay=True, dir_okay=True), metavar="FOLDER"
)
@click.option("--project", required=True, metavar="KEY", help="The project whose sessions read it.")
@click.option(
    "--url",
    envvar="CREWBOARD_URL",
    default=None,
    help="The server's base URL (default: $CREWBOARD_URL, else this machine's server).",
)
@click.option(
    "--token",
    envvar="CREWBOARD_TOKEN",
    help="Your API token (default: $CREWBOARD_TOKEN; the variable keeps it out of process lists).",
)
@click.option("--quiet", is_flag=True, help="Do not print a line for each call served.")
@pass_state
@click.pass_context
def reverse(
    ctx: click.Context,
    state: State,
    folder: Path,
    project: str,
    url: str | None,
    token: str | None,
    quiet: bool,
) -> None:
    """Offer FOLDER, read-only, to the spec sessions you start in a project: they read code
    through this command while it runs (Ctrl-C stops it)."""
    settings = state.settings()
    root = checked_folder(folder, settings.data_dir)
    if not token:
        raise click.ClickException("set CREWBOARD_TOKEN (or pass --token) to your API token")
    base_url = url or settings.public_url
    if not base_url.startswith(("http://", "https://")):
        raise click.ClickException(f"--url must be an http:// or https:// URL, not {base_url!r}")
    server = Server(
        url=base_url,
        token=token,
        project=project,
        folder_name=root.name[:200] or "folder",
        client=f"crewboard {__version__}"[:100],
    )
    code = CodeFolder(root, [settings.data_dir])
    click.echo(
        f"Offering {root} to project {project} at {base_url}, read-only: secrets "
        "(.env, keys, credentials) and files your .gitignore ignores are never read."
    )
    client = BridgeClient(
        server,
        code,
        say=click.echo,
        warn=lambda line: click.echo(line, err=True),
        quiet=quiet,
    )
    with _sigterm_as_interrupt():
        status = client.run()
    ctx.exit(status)


def checked_folder(folder: Path, data_dir: Path, name: str = "FOLDER") -> Path:
    """The folder to offer, resolved; refused (naming it as `name`, the argument or option
    that gave it) when it is missing, a file, or holds Crewboard's own data."""
    if not folder.exists():
        raise click.ClickException(f"{name} {str(folder)!r} does not exist.")
    if not folder.is_dir():
        raise click.ClickException(f"{name} {str(folder)!r} is a file, not a folder.")
    root = Path(os.path.realpath(folder))
    data = Path(os.path.realpath(data_dir))
    if (
        any((root / marker).exists() for marker in DATA_MARKERS)
        or root == data
        or data in root.parents
    ):
        raise click.ClickException(
            f"{name} {str(folder)!r} holds Crewboard's data (its database or key): offer the "
            "folder of your code instead."
        )
    return root


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the bridge as Ctrl-C does: closed on the server, exit status 0."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only (a test runs the command in another)
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def register(cli: click.Group) -> None:
    """Add `crewboard reverse` to the CLI."""
    cli.add_command(reverse)
