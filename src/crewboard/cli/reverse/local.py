"""`crewboard mcp --code FOLDER --code-project KEY`: the person's code bridge inside the stdio
server, for a machine where no Crewboard server runs for `crewboard reverse` to connect to.

The stdio server already runs the spec session turns on the local database (serve_stdio's
runner); here the same process is also the bridge they read code through. It registers a bridge
for the project as the REST route does (the same service, the same checks: the write role and
the specs.write scope), then exchanges answers for calls with the service directly, answering
each call from the folder exactly as `crewboard reverse` does (folder.py, rules.py, serve_call)
in a worker thread. The serve loop supervises it beside the runner: a database outage backs it
off and it retries with its answers kept; a newer bridge for the project (another `crewboard
reverse` or `crewboard mcp --code`) stops it, and the MCP server goes on without it.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import anyio
import click
from anyio import to_thread

from crewboard.cli.reverse.client import BATCH_SECONDS, MOST_ANSWERS, WAIT_SECONDS, serve_call
from crewboard.cli.reverse.folder import CodeFolder
from crewboard.config import Settings
from crewboard.errors import (
    Conflict,
    CrewboardError,
    Gone,
    LimitExceeded,
    NotFound,
    ValidationFailed,
)
from crewboard.http.logs import JsonFormatter
from crewboard.services.identity.tokens import authenticate_token
from crewboard.services.sessions.bridges import (
    BridgeAnswer,
    CallOut,
    close_bridge,
    exchange,
    register_bridge,
)
from crewboard.services.supervisor import LoopHealth
from crewboard.storage.database import Database

log = logging.getLogger(__name__)

CLIENT = "crewboard mcp"
LOOP = "code bridge"  # the supervised loop's name, which its outage lines start with


class _Stop(Exception):
    """The bridge stops for good (the MCP server goes on): the line that says why."""


class LocalBridge:
    """The person's bridge for one project, answered from one folder, in this process."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        secret: str,
        project: str,
        root: Path,
        *,
        wait: float = WAIT_SECONDS,
    ) -> None:
        self.db = db
        self.settings = settings
        self.secret = secret
        self.project = project
        self.root = root
        self.folder = CodeFolder(root, [settings.data_dir])
        self.wait = wait
        self.bridge_id: str | None = None
        self.todo: list[CallOut] = []  # calls taken and not answered yet
        self.answers: list[BridgeAnswer] = []  # answered, not yet delivered
        self.stopped = False

    def register(self) -> None:
        """A new bridge for the project (replacing the person's older one there); the token
        is checked again first, as every stdio message checks it.

        Raises:
            Unauthenticated, NotFound, PermissionDenied, ValidationFailed: as register_bridge.
        """
        actor = authenticate_token(self.db, self.secret)
        made = register_bridge(
            self.db, actor, project=self.project, folder=self.root.name[:200] or "folder",
            client=CLIENT, node=self.settings.node_name,
        )  # fmt: skip
        self.bridge_id = made.bridge.id
        self.todo, self.answers = [], []  # a new bridge: the old one's calls are back in the queue
        log.info(
            "offering %s to project %s's spec sessions (bridge %s), read-only: secrets (.env, "
            "keys, credentials) and files your .gitignore ignores are never read",
            self.root, made.project_key, made.bridge.id,
        )  # fmt: skip

    async def run(self, health: LoopHealth) -> None:
        """The supervised loop: exchange answers for calls until cancelled. A failing pass
        (the database out of reach) is reported to `health` and retried after its back-off,
        the answers kept; once stopped for good it waits to be cancelled (a loop that returns
        would be started again)."""
        while not self.stopped:
            try:
                await self._pass()
            except _Stop as stop:
                log.warning("%s", stop)
                self.stopped = True
            except Exception as error:  # an outage or a bug: back off, try again
                await anyio.sleep(health.failed(error))
            else:
                health.ok()
        await anyio.sleep_forever()

    async def _pass(self) -> None:
        """Register when there is no bridge; else answer some calls, then one exchange.

        Raises:
            _Stop: the bridge cannot go on (replaced, the token or the access gone).
        """
        if self.bridge_id is None:
            await to_thread.run_sync(self._register_again)
            return
        await self._answer_some()
        sent = self.answers[:MOST_ANSWERS]
        busy = bool(self.todo) or len(self.answers) > len(sent)
        try:
            actor = await to_thread.run_sync(authenticate_token, self.db, self.secret)
            calls = await exchange(
                self.db, actor, self.bridge_id, sent, 0 if busy else self.wait,
                taken_for=self.settings.bridge_call_timeout,
            )  # fmt: skip
        except Conflict as replaced:
            raise _Stop(
                f"another bridge for project {self.project} took over (a `crewboard reverse` "
                f"or another `crewboard mcp --code`): {self.root} is no longer offered from "
                "here; the MCP server goes on."
            ) from replaced
        except (Gone, NotFound):
            log.info("the bridge was closed; registering a new one")
            self.bridge_id = None
            return
        except (ValidationFailed, LimitExceeded) as refused:
            # A call answered here that is no longer there to answer (its session deleted):
            # these answers are dropped; the calls still waiting are handed out again.
            log.warning("answers dropped: %s", refused.message)
            del self.answers[: len(sent)]
            return
        except CrewboardError as refused:  # the token revoked, the write role taken away
            raise _Stop(f"stopped: {refused.message}") from refused
        del self.answers[: len(sent)]
        known = {call.call_id for call in self.todo}
        self.todo += [call for call in calls if call.call_id not in known]

    def _register_again(self) -> None:
        try:
            self.register()
        except CrewboardError as refused:
            raise _Stop(f"stopped: {refused.message}") from refused

    async def _answer_some(self) -> None:
        """Answer the first calls taken, for at most BATCH_SECONDS (a call unanswered for 30 s
        is handed out again), each in a worker thread and logged as one line."""
        started = anyio.current_time()
        while self.todo and len(self.answers) < MOST_ANSWERS:
            if anyio.current_time() - started >= BATCH_SECONDS:
                break
            call = self.todo[0]
            served = await to_thread.run_sync(
                serve_call, self.folder, call.tool, call.arguments, abandon_on_cancel=True
            )
            log.info("%s", served.line)
            self.todo.pop(0)
            self.answers.append(BridgeAnswer(call.call_id, served.result, served.error))

    def close(self) -> None:
        """The server stops: close the bridge, so a session stops waiting on it at once (when
        this fails it goes stale by itself, not live once unseen for 45 s)."""
        if self.bridge_id is None:
            return
        try:
            close_bridge(self.db, authenticate_token(self.db, self.secret), self.bridge_id)
        except Exception as error:  # closing is a courtesy; the process is ending anyway
            log.warning("could not close the bridge (%s); it lapses within 45 s", error)
        else:
            log.info("stopped: %s is no longer offered", self.root)
        self.bridge_id = None


def open_bridge(
    db: Database, settings: Settings, secret: str, project: str, root: Path
) -> LocalBridge:
    """The bridge, registered now, before the stdio server serves: an unknown project or a
    token without the write role fails the command here, and the first session started over
    stdio finds the bridge live (no warning, no wait).

    Raises:
        click.ClickException: the project refused, naming what `--code` needs.
    """
    _log_to_stderr(settings)
    bridge = LocalBridge(db, settings, secret, project, root)
    try:
        bridge.register()
    except NotFound as refused:
        raise click.ClickException(f"--code-project {project}: {refused.message}") from refused
    except CrewboardError as refused:
        raise click.ClickException(
            f"--code cannot offer the folder to project {project}: {refused.message} A code "
            "bridge needs the write role on the project and a token with the read and "
            "specs.write scopes, as starting a spec session does."
        ) from refused
    return bridge


def _log_to_stderr(settings: Settings) -> None:
    """This module's lines (each call served) on stderr, never stdout (it carries protocol);
    the stdio server configures no logging of its own."""
    if log.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(f"{LOOP}: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
