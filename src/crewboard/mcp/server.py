"""The low-level MCP server: per-caller tool lists and instructions, gated and validated calls."""

from __future__ import annotations

import logging
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
from crewboard.errors import CrewboardError, PermissionDenied, Unauthenticated, ValidationFailed
from crewboard.mcp.args import argument_error, validate_arguments
from crewboard.mcp.caller import CURRENT_CALLER, STDIO_SECRET, Caller
from crewboard.mcp.catalogue import Catalogue, default_catalogue
from crewboard.mcp.instructions import INTRO, instructions_for
from crewboard.mcp.render import failure, success
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.services.identity.tokens import authenticate_token
from crewboard.storage.database import Database

log = logging.getLogger("crewboard.mcp")

UNAUTHORIZED = -32001  # JSON-RPC server error: the token is missing, unknown or revoked


def tool_listing(tool: ToolDef) -> Tool:
    return Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.schema(),
        annotations=ToolAnnotations(
            title=tool.title,
            read_only_hint=tool.read_only,
            destructive_hint=tool.destructive if not tool.read_only else None,
            idempotent_hint=tool.idempotent if not tool.read_only else None,
            open_world_hint=False,
        ),
    )


def current_caller() -> Caller:
    caller = CURRENT_CALLER.get()
    if caller is None:
        raise MCPError(code=UNAUTHORIZED, message="No token: send Authorization: Bearer cb_….")
    return caller


def build_server(
    db: Database, settings: Settings, catalogue: Catalogue | None = None
) -> Server[Any]:
    """One MCP server for the app (HTTP) or for a stdio session."""
    tools = catalogue or default_catalogue()
    listings = {tool.name: tool_listing(tool) for tool in tools}
    schemas = {name: listing.input_schema for name, listing in listings.items()}

    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        caller = current_caller()
        shown = tools.visible(caller.actor, toolsets=caller.toolsets, names=caller.tool_names)
        return ListToolsResult(
            tools=[listings[t.name] for t in shown], ttl_ms=0, cache_scope="private"
        )

    async def call_tool(
        _ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        tool = tools.find(params.name)
        if tool is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        caller = current_caller()
        missing = sorted(tool.needs - caller.actor.scopes)
        if missing:
            return failure(
                PermissionDenied(
                    f"{tool.name} needs the {', '.join(missing)} scope; this token has "
                    f"{', '.join(sorted(caller.actor.scopes))}. Use a token with that scope.",
                    {"tool": tool.name, "requiredScope": missing[0], "missingScopes": missing},
                )
            )
        try:
            parsed = validate_arguments(tool.args, params.arguments or {})
        except ValidationFailed as error:
            return failure(error)
        except ValidationError as error:
            return failure(argument_error(error, schemas[tool.name]))
        except Exception:
            log.exception("checking the arguments of %s failed", tool.name)
            raise MCPError(
                code=INTERNAL_ERROR, message="Internal error; the server has logged it."
            ) from None
        call = Call(db=db, actor=caller.actor, settings=settings)
        try:
            reply = await to_thread.run_sync(tool.run, call, parsed)
        except CrewboardError as error:
            return failure(error)
        except Exception:
            log.exception("tool %s failed", tool.name)
            raise MCPError(
                code=INTERNAL_ERROR, message="Internal error; the server has logged it."
            ) from None
        return success(reply)

    server: Server[Any] = Server(
        "crewboard",
        version=__version__,
        instructions=INTRO,
        website_url=settings.public_url,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )

    async def per_caller(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        secret = STDIO_SECRET.get()
        if secret is not None:
            try:
                actor = await to_thread.run_sync(authenticate_token, db, secret)
            except Unauthenticated as error:
                raise MCPError(code=UNAUTHORIZED, message=error.message) from None
            CURRENT_CALLER.set(Caller(actor=actor))
        result = await call_next(ctx)
        if ctx.method in ("initialize", "server/discover") and isinstance(result, dict):
            caller = current_caller()
            visible = tools.visible(caller.actor, toolsets=caller.toolsets, names=caller.tool_names)
            result["instructions"] = instructions_for(t.name for t in visible)
        return result

    server.middleware.append(per_caller)
    return server
