"""The low-level MCP server: per-caller tool lists and instructions, gated and validated calls."""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Any

from anyio import to_thread
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    Tool,
    ToolAnnotations,
)
from pydantic import ValidationError

from crewboard import __version__
from crewboard.config import Settings
from crewboard.contract.args import argument_error, validate_arguments
from crewboard.contract.catalogue import Catalogue, default_catalogue
from crewboard.contract.operation import Call, Operation
from crewboard.contract.reply import Reply
from crewboard.domain.identity.access import Toolset
from crewboard.errors import CrewboardError, PermissionDenied, Unauthenticated, ValidationFailed
from crewboard.http.metrics import Record
from crewboard.mcp.caller import (
    CURRENT_CALLER,
    PENDING_CHECK,
    STDIO_SECRET,
    STDIO_TOOLSETS,
    Caller,
    TokenCheck,
)
from crewboard.mcp.counting import CountCalls
from crewboard.mcp.instructions import INTRO, instructions_for
from crewboard.mcp.prompts import Prompts
from crewboard.mcp.render import failure, success
from crewboard.mcp.resources import Resources
from crewboard.services.identity.access import highest_role
from crewboard.services.identity.tokens import authenticate_token
from crewboard.storage.database import Database
from crewboard.storage.outages import unavailable

log = logging.getLogger("crewboard.mcp")

UNAUTHORIZED = -32001  # JSON-RPC server error: the token is missing, unknown or revoked


def tool_listing(tool: Operation) -> Tool:
    """A tool as `tools/list` shows it. The hints say only what differs from the protocol's
    defaults (not read-only, destructive, not idempotent, open world): the title is the tool's
    own, and a read-only tool needs no destructive or idempotent hint."""
    read_only = tool.read_only and not tool.writes_locally
    return Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.schema(),
        annotations=ToolAnnotations(
            read_only_hint=True if read_only else None,
            destructive_hint=tool.destructive if not read_only else None,
            idempotent_hint=(tool.idempotent or None) if not read_only else None,
            open_world_hint=False,
        ),
    )


async def shown_tools(db: Database, tools: Catalogue, caller: Caller) -> list[Operation]:
    """What `tools/list`, the instructions and the prompts show this caller: its scopes, its
    highest project role and the toolsets it asked for (see Catalogue.visible)."""
    role = await to_thread.run_sync(highest_role, db, caller.actor)
    shown = tools.visible(caller.actor, role, toolsets=caller.toolsets, names=caller.tool_names)
    return _for_transport(shown)


def _for_transport(shown: list[Operation]) -> list[Operation]:
    """Tools that work with the caller's own disk only on stdio, where the server runs on it."""
    if STDIO_SECRET.get() is not None:
        return shown
    return [tool for tool in shown if not tool.stdio_only]


async def caller_instructions(db: Database, tools: Catalogue, caller: Caller) -> str:
    """The server instructions for this caller: the rules about the tools it is shown, and the
    toolsets it could add (it may use tools there) unless it picked its tools one by one."""
    role = await to_thread.run_sync(highest_role, db, caller.actor)
    visible = _for_transport(
        tools.visible(caller.actor, role, toolsets=caller.toolsets, names=caller.tool_names)
    )
    more: set[str] = set()
    if caller.tool_names is None:
        usable = tools.visible(caller.actor, role, toolsets=tuple(Toolset))
        more = {str(t.toolset) for t in usable} - {str(t.toolset) for t in visible}
    return instructions_for((t.name for t in visible), more)


def current_caller() -> Caller:
    caller = CURRENT_CALLER.get()
    if caller is None:
        raise MCPError(code=UNAUTHORIZED, message="No token: send Authorization: Bearer cb_….")
    return caller


class RunCall:
    """A tool call in a worker thread: the token (when only it is known yet), the tool, its
    scopes, its arguments, then the tool itself; one thread hop in all."""

    def __init__(
        self, db: Database, settings: Settings, tools: Catalogue, schemas: dict[str, Any]
    ) -> None:
        self.db, self.settings, self.tools, self.schemas = db, settings, tools, schemas

    def __call__(
        self, name: str, arguments: dict[str, Any], who: Caller | TokenCheck
    ) -> CallToolResult | Reply:
        """The tool's result; or its Reply when that still has to wait (`Reply.follow`).

        Raises:
            MCPError: the token is unknown or revoked (recorded in `who.refused` too), the
                tool unknown, or an internal failure.
        """
        caller = who if isinstance(who, Caller) else self._check(who)
        tool = self.tools.find(name)
        if tool is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        try:
            tool.check_scopes(caller.actor)
        except PermissionDenied as error:
            return failure(error)
        try:
            parsed = validate_arguments(tool.args, arguments)
        except ValidationFailed as error:
            return failure(error)
        except ValidationError as error:
            return failure(argument_error(error, self.schemas[tool.name]))
        except Exception:
            log.exception("checking the arguments of %s failed", tool.name)
            raise MCPError(
                code=INTERNAL_ERROR, message="Internal error; the server has logged it."
            ) from None
        # On stdio the server runs on the caller's machine, in the caller's working folder.
        local_root = Path.cwd() if isinstance(who, TokenCheck) and who.local else None
        call = Call(db=self.db, actor=caller.actor, settings=self.settings, local_root=local_root)
        try:
            reply = tool.run(call, parsed)
        except CrewboardError as error:
            return failure(error)
        except Exception as error:
            if (outage := unavailable(error)) is not None:  # the database, not a bug
                log.warning("tool %s: %s", tool.name, type(error).__name__)
                return failure(outage)
            log.exception("tool %s failed", tool.name)
            raise MCPError(
                code=INTERNAL_ERROR, message="Internal error; the server has logged it."
            ) from None
        return reply if reply.follow is not None else success(reply)

    def _check(self, check: TokenCheck) -> Caller:
        check.checked = True
        try:
            actor = authenticate_token(self.db, check.secret)
        except Unauthenticated as error:
            check.refused = error.message
            raise MCPError(code=UNAUTHORIZED, message=error.message) from None
        except Exception as error:  # the database away
            if check.local:  # stdio: as any failure of a call
                raise
            check.failed = error  # HTTP: the front raises it, as before the call (a 503)
            raise MCPError(code=INTERNAL_ERROR, message="The token could not be checked.") from None
        return Caller(actor=actor, toolsets=check.toolsets, tool_names=check.tool_names)


async def settle(result: CallToolResult | Reply) -> CallToolResult:
    """Await a reply that waits (on the event loop, holding no worker thread)."""
    if not isinstance(result, Reply):
        return result
    assert result.follow is not None  # noqa: S101 - RunCall returns a Reply only then
    try:
        return success(await result.follow())
    except CrewboardError as error:
        return failure(error)
    except Exception as error:
        if (outage := unavailable(error)) is not None:
            return failure(outage)
        log.exception("a tool's follow-up failed")
        raise MCPError(
            code=INTERNAL_ERROR, message="Internal error; the server has logged it."
        ) from None


def build_server(
    db: Database,
    settings: Settings,
    catalogue: Catalogue | None = None,
    *,
    record: Record | None = None,
) -> Server[Any]:
    """One MCP server for the app (HTTP) or for a stdio session; `record` counts its requests
    for /metrics (HTTP with metrics on)."""
    tools = catalogue or default_catalogue()
    listings = {tool.name: tool_listing(tool) for tool in tools}
    schemas = {name: listing.input_schema for name, listing in listings.items()}
    run_call = RunCall(db, settings, tools, schemas)

    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        shown = await shown_tools(db, tools, current_caller())
        return ListToolsResult(
            tools=[listings[t.name] for t in shown], ttl_ms=0, cache_scope="private"
        )

    async def call_tool(
        _ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        # One worker-thread hop per call: on stdio, and over HTTP for an API token, the token
        # is checked in it too (see per_caller and McpFront), then the checks and the tool.
        secret = STDIO_SECRET.get()
        who: Caller | TokenCheck
        if secret is not None:
            who = TokenCheck(secret, STDIO_TOOLSETS.get(), local=True)
        else:
            who = PENDING_CHECK.get() or current_caller()
        return await settle(
            await to_thread.run_sync(run_call, params.name, params.arguments or {}, who)
        )

    resources = Resources(db, tools, current_caller)
    prompts = Prompts(db, current_caller, partial(shown_tools, db, tools))
    server: Server[Any] = Server(
        "crewboard",
        version=__version__,
        instructions=INTRO,
        website_url=settings.public_url,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
        on_list_resources=resources.list_resources,
        on_list_resource_templates=resources.list_templates,
        on_read_resource=resources.read_resource,
        on_list_prompts=prompts.list_prompts,
        on_get_prompt=prompts.get_prompt,
    )

    async def per_caller(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        secret = STDIO_SECRET.get()
        if secret is not None and ctx.method != "tools/call":  # a call checks it in run_call
            try:
                actor = await to_thread.run_sync(authenticate_token, db, secret)
            except Unauthenticated as error:
                raise MCPError(code=UNAUTHORIZED, message=error.message) from None
            CURRENT_CALLER.set(Caller(actor=actor, toolsets=STDIO_TOOLSETS.get()))
        result = await call_next(ctx)
        if ctx.method in ("initialize", "server/discover") and isinstance(result, dict):
            result["instructions"] = await caller_instructions(db, tools, current_caller())
        return result

    server.middleware.append(per_caller)
    if record is not None:
        server.middleware.insert(0, CountCalls(record, tools.names))
    return server
