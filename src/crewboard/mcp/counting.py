"""The MCP door's count for /metrics: one server middleware sees every JSON-RPC request,
whichever path served it (the single exchange, the SDK's transport, a batch's messages)."""

from __future__ import annotations

from time import perf_counter
from typing import Any

from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, CallToolResult
from pydantic import ValidationError

from crewboard.http.metrics import INTERNAL, OK, Record, outcome_of_code

UNKNOWN_TOOL = "unknown_tool"
OTHER_METHOD = "other"
# The methods counted under their own name (a client may send any string: the rest is "other").
METHODS = frozenset({
    "initialize", "ping", "server/discover", "tools/list", "resources/list",
    "resources/templates/list", "resources/read", "resources/subscribe",
    "resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete",
    "logging/setLevel",
})  # fmt: skip
# Protocol errors by JSON-RPC code; the server's own -32001 is a missing or refused token.
_RPC_OUTCOMES = {
    INVALID_PARAMS: "VALIDATION",
    METHOD_NOT_FOUND: "NOT_FOUND",
    INTERNAL_ERROR: INTERNAL,
    -32001: "UNAUTHENTICATED",
}


class CountCalls:
    """Server middleware recording each request (not notifications): for `tools/call` under
    the tool's name (unknown tools together), for other methods under the method."""

    def __init__(self, record: Record, tool_names: frozenset[str]) -> None:
        self.record = record
        self.tool_names = tool_names

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.request_id is None:
            return await call_next(ctx)
        operation = self._operation(ctx)
        start = perf_counter()
        outcome = INTERNAL
        try:
            result = await call_next(ctx)
        except MCPError as error:
            outcome = _RPC_OUTCOMES.get(error.error.code, INTERNAL)
            raise
        except ValidationError:
            outcome = "VALIDATION"
            raise
        else:
            outcome = _outcome(result)
        finally:
            self.record(operation, outcome, perf_counter() - start)
        return result

    def _operation(self, ctx: ServerRequestContext[Any, Any]) -> str:
        if ctx.method == "tools/call":
            name = ctx.params.get("name") if ctx.params else None
            return name if isinstance(name, str) and name in self.tool_names else UNKNOWN_TOOL
        return ctx.method if ctx.method in METHODS else OTHER_METHOD


def _outcome(result: HandlerResult) -> str:
    """ok, or the error code of a tool's `isError` result."""
    if isinstance(result, CallToolResult):
        if not result.is_error:
            return OK
        return outcome_of_code((result.structured_content or {}).get("code"))
    if isinstance(result, dict) and result.get("isError") is True:
        structured = result.get("structuredContent")
        return outcome_of_code(structured.get("code") if isinstance(structured, dict) else None)
    return OK
