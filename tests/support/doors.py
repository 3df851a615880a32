"""One call, three doors: an operation of the catalogue run over MCP (the official SDK client on
Streamable HTTP), REST (real HTTP) or the CLI (click's runner, in this process), so one test
body checks that every door gives the same answer and the same refusal.

Each door finds its way from the operation's own declaration (`Operation.rest`, `.cli`), never
from a list of its own: an operation whose declaration names no route or command is skipped on
that door with the reason, so a missing declaration shows in the run rather than passing.

A test module serves one app for all its tests and hands it to `door` through a fixture named
`door_app` (a `DoorApp`); it imports the fixture by name: `from tests.support.doors import door`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import click
import httpx2
import pytest
from click.testing import CliRunner
from pydantic.alias_generators import to_camel

from crewboard.cli.main import cli as crewboard_cli
from crewboard.contract.catalogue import default_catalogue
from crewboard.contract.operation import Cli, NoDoor, Operation, Rest
from crewboard.domain.identity.access import Toolset
from tests.support.mcp_client import body_of, mcp_client

CATALOGUE = default_catalogue()
TIMEOUT = 30.0
ALL_TOOLSETS = {"X-MCP-Toolsets": ",".join(t.value for t in Toolset)}


@dataclass(frozen=True)
class Outcome:
    """What a door answered: the body of a success, or a refusal's code and the field it names."""

    ok: bool
    body: Any = None
    code: str | None = None
    field: str | None = None
    message: str = ""

    @classmethod
    def refusal(cls, error: Any) -> Outcome:
        """From an error body `{code, message, details}` (the same on every door)."""
        if not isinstance(error, dict):
            return cls(ok=False, message=str(error))
        details = error.get("details") or {}
        field = details.get("field") if isinstance(details, dict) else None
        return cls(
            ok=False,
            body=error,
            code=str(error.get("code")),
            field=None if field is None else str(field),
            message=str(error.get("message", "")),
        )


@dataclass(frozen=True)
class DoorApp:
    """The served app the doors call: its base URL, a token of the person every door acts as
    (every scope), that person's email (the CLI's `--as`), and the CLI's environment and working
    folder."""

    url: str
    secret: str
    email: str
    cli_env: dict[str, str | None]  # None: unset
    cli_folder: Path  # the CLI's working folder: what it writes on the caller's disk lands here


class Door(Protocol):
    name: str

    def call(self, op_name: str, arguments: dict[str, Any]) -> Outcome: ...

    def close(self) -> None: ...


def operation(name: str) -> Operation:
    found = CATALOGUE.find(name)
    if found is None:
        raise LookupError(f"{name} is not an operation of the catalogue")
    return found


# --- MCP ---------------------------------------------------------------------------------


class McpDoor:
    """One SDK client for the module, connected once: it lives in a task of its own event loop
    in a thread (the SDK's task groups must be left by the task that entered them), and each
    call is handed to that task."""

    name = "mcp"

    def __init__(self, app: DoorApp) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._calls: asyncio.Queue[
            tuple[str, dict[str, Any], concurrent.futures.Future[Any]] | None
        ]
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._served = asyncio.run_coroutine_threadsafe(self._serve(app, ready), self._loop)
        ready.result(TIMEOUT)

    async def _serve(self, app: DoorApp, ready: concurrent.futures.Future[None]) -> None:
        self._calls = asyncio.Queue()
        try:
            async with mcp_client(app.url, app.secret, "legacy", ALL_TOOLSETS) as client:
                ready.set_result(None)
                while (item := await self._calls.get()) is not None:
                    name, arguments, answer = item
                    try:
                        answer.set_result(await client.call_tool(name, arguments))
                    except Exception as error:  # handed to the caller, which raises it
                        answer.set_exception(error)
        except Exception as error:
            if not ready.done():
                ready.set_exception(error)
            raise

    def call(self, op_name: str, arguments: dict[str, Any]) -> Outcome:
        op = operation(op_name)
        if op.stdio_only:
            pytest.skip(f"{op_name} over mcp: it runs on stdio only (the caller's disk)")
        answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._calls.put_nowait, (op_name, arguments, answer))
        result = answer.result(TIMEOUT)
        if result.is_error:
            return Outcome.refusal(result.structured_content)
        return Outcome(ok=True, body=body_of(result))

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._calls.put_nowait, None)
        try:
            self._served.result(TIMEOUT)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(TIMEOUT)
            self._loop.close()


# --- REST --------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::([a-z]+))?\}")
_PATH_ARGUMENTS = {"project": "projectId", "task": "taskId"}


def rest_request(
    op: Operation, route: Rest, arguments: dict[str, Any]
) -> tuple[str, dict[str, Any], dict[str, Any] | None, dict[str, str]]:
    """The request the route's declaration makes of `arguments`: its path, query, JSON body and
    headers. Each `{name}` fills the argument of that name; `idempotencyKey` goes in its header;
    the rest go in the query string (GET, DELETE) or the body (POST, PATCH, PUT)."""
    left = dict(arguments)
    headers: dict[str, str] = {}
    fields = [field.alias or name for name, field in op.args.model_fields.items()]

    def fill(match: re.Match[str]) -> str:
        name, converter = match.group(1), match.group(2)
        key = path_argument(name, fields)
        if key is None or left.get(key) is None:
            raise AssertionError(
                f"{op.name}: the route {route.path} needs {{{name}}}, which the call does not give"
            )
        value = str(left.pop(key))
        return quote(value, safe="/" if converter == "path" else "")

    path = _PLACEHOLDER.sub(fill, route.path)
    if not path.startswith("/api/"):
        path = "/api/v1" + path
    if "idempotencyKey" in left:
        headers["Idempotency-Key"] = str(left.pop("idempotencyKey"))
    if route.method in ("GET", "DELETE"):
        query = {k: _query_value(v) for k, v in left.items() if v is not None}
        return path, query, None, headers
    return path, {}, left, headers


def path_argument(name: str, fields: list[str]) -> str | None:
    """The argument a `{name}` of a route fills: `{project}` → projectId, `{task}` → taskId,
    else the argument of that name or `<name>Id`, else the one argument ending in `<Name>Id`
    (`{item}` → actionItemId)."""
    for candidate in (_PATH_ARGUMENTS.get(name), to_camel(name), to_camel(name) + "Id"):
        if candidate in fields:
            return candidate
    suffix = name[:1].upper() + to_camel(name)[1:] + "Id"
    ending = [f for f in fields if f.endswith(suffix)]
    return ending[0] if len(ending) == 1 else None


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return [_query_value(v) for v in value]
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


class RestDoor:
    name = "rest"

    def __init__(self, app: DoorApp) -> None:
        self._http = httpx2.Client(
            base_url=app.url,
            headers={"Authorization": f"Bearer {app.secret}"},
            timeout=TIMEOUT,
        )

    def call(self, op_name: str, arguments: dict[str, Any]) -> Outcome:
        op = operation(op_name)
        route = _declared(op, "rest", op.rest)
        assert isinstance(route, Rest)
        path, query, body, headers = rest_request(op, route, arguments)
        response = self._http.request(
            route.method, path, params=query or None, json=body, headers=headers
        )
        try:
            parsed = response.json()
        except ValueError:
            raise AssertionError(
                f"{op_name} over rest: {route.method} {path} answered {response.status_code} "
                f"with no JSON: {response.text[:300]!r}"
            ) from None
        if response.is_success:
            assert response.status_code == route.status, (
                f"{op_name} over rest: {response.status_code}, the route declares {route.status}"
            )
            return Outcome(ok=True, body=parsed)
        return Outcome.refusal(parsed.get("error") if isinstance(parsed, dict) else parsed)

    def close(self) -> None:
        self._http.close()


# --- CLI ---------------------------------------------------------------------------------


def cli_command(words: tuple[str, ...]) -> click.Command:
    """The click command `crewboard <words...>`."""
    command: click.Command = crewboard_cli
    for word in words:
        assert isinstance(command, click.Group), (
            f"crewboard {' '.join(words)}: {word} is not a group"
        )
        found = command.commands.get(word)
        assert found is not None, f"crewboard {' '.join(words)}: there is no command {word}"
        command = found
    return command


def cli_arguments(op: Operation, command: click.Command, arguments: dict[str, Any]) -> list[str]:
    """The words that carry `arguments` to `command`: `--kebab-case` of each field's python
    name; a list of plain values as a repeated option; a bool as `--x` or `--no-x`; an object,
    or a list of objects, as JSON text. A command that takes an argument positionally (its
    python name, or that name without `_id`: PROJECT for project_id) gets it there."""
    fields = {field.alias or name: name for name, field in op.args.model_fields.items()}
    options = {opt: param for param in command.params for opt in param.opts + param.secondary_opts}
    positional = {p.name: p for p in command.params if isinstance(p, click.Argument)}
    words: list[str] = []
    given: dict[str, str] = {}
    for key, value in arguments.items():
        if value is None:
            continue
        name = fields.get(key)
        assert name is not None, f"{op.name}: {key} is not one of its arguments"
        option = "--" + name.replace("_", "-")
        at = next((n for n in (name, name.removesuffix("_id")) if n in positional), None)
        if at is not None and option not in options:
            given[at] = json.dumps(value) if isinstance(value, (dict, list)) else str(value)
            continue
        if isinstance(value, bool):
            flag = option if value else "--no-" + option.removeprefix("--")
            assert flag in options, f"{op.name} over cli: the command has no {flag} for {key}"
            words.append(flag)
            continue
        param = options.get(option)
        assert param is not None, f"{op.name} over cli: the command has no {option} for {key}"
        if isinstance(value, list) and getattr(param, "multiple", False):
            items = [json.dumps(v) if isinstance(v, (dict, list)) else str(v) for v in value]
            words.extend(w for item in items for w in (option, item))
        elif isinstance(value, (dict, list)):
            words.extend((option, json.dumps(value)))
        else:
            words.extend((option, str(value)))
    return words + [given[name] for name in positional if name in given]


class CliDoor:
    name = "cli"

    def __init__(self, app: DoorApp) -> None:
        self._email = app.email
        self._env = app.cli_env
        self._folder = app.cli_folder
        self._folder.mkdir(parents=True, exist_ok=True)
        self._runner = CliRunner()

    def call(self, op_name: str, arguments: dict[str, Any]) -> Outcome:
        op = operation(op_name)
        declared = _declared(op, "cli", op.cli)
        assert isinstance(declared, Cli)
        command = cli_command(declared.words)
        args = [*declared.words, "--json", "--as", self._email]
        args += cli_arguments(op, command, arguments)
        with contextlib.chdir(self._folder):
            result = self._runner.invoke(crewboard_cli, args, env=self._env, catch_exceptions=False)
        if result.exit_code == 0:
            try:
                return Outcome(ok=True, body=json.loads(result.stdout))
            except ValueError:
                raise AssertionError(
                    f"crewboard {' '.join(args)}: not JSON: {result.stdout[:300]!r}"
                ) from None
        error = _cli_error(result.stderr)
        if error is None:  # click's own refusal (a usage error): no code, no field
            assert result.stderr.strip(), f"crewboard {' '.join(args)}: exit {result.exit_code}"
            return Outcome(ok=False, code="USAGE", message=result.stderr.strip())
        return Outcome.refusal(error)

    def close(self) -> None:
        pass


def _cli_error(stderr: str) -> dict[str, Any] | None:
    for line in reversed(stderr.splitlines()):
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            return dict(parsed["error"])
    return None


def _declared(op: Operation, door: str, declared: Rest | Cli | NoDoor | None) -> Rest | Cli:
    if declared is None:
        pytest.skip(f"{op.name} over {door}: its declaration names no {door} door yet")
    if isinstance(declared, NoDoor):
        pytest.skip(f"{op.name} over {door}: none, {declared.reason}")
    return declared


DOORS: dict[str, type[McpDoor] | type[RestDoor] | type[CliDoor]] = {
    "mcp": McpDoor,
    "rest": RestDoor,
    "cli": CliDoor,
}


@pytest.fixture(scope="module", params=list(DOORS))
def door(request: pytest.FixtureRequest, door_app: DoorApp) -> Iterator[Door]:
    """Each door onto the module's served app (ids mcp, rest, cli)."""
    opened: Door = DOORS[str(request.param)](door_app)
    try:
        yield opened
    finally:
        opened.close()
