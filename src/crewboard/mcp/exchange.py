"""One handshake-era JSON-RPC request over HTTP, answered with one JSON body.

The SDK serves a stateless handshake-era POST by building a whole session for it: a transport
with memory streams, a dispatcher with its task group and a read loop, three tasks, about
forty anyio look-ups; that costs more than most tools do. With JSON answers and no session
nothing of that is needed: the request has one answer and no back channel. So the front hands
such a request to the SDK's own single-exchange driver (`serve_one`, which the SDK uses for
2026-07-28 requests): the same runner, middleware, method table, parameter checks and
handlers, and the same mapping of handler errors to the wire as the SDK's dispatcher.

Everything else still goes to the SDK's transport: `initialize`, notifications, responses,
batches, 2026-07-28 requests, malformed envelopes, and any request whose headers that
transport would refuse.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_one
from mcp.server.streamable_http import CONTENT_TYPE_JSON, check_accept_headers
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import (
    handler_exception_to_error_data,
    progress_token_from_params,
)
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    ProgressToken,
    RequestId,
)
from mcp_types.jsonrpc import jsonrpc_message_adapter
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

log = logging.getLogger("crewboard.mcp")

_TRANSPORT = TransportContext(kind="streamable-http", can_send_request=False)


@dataclass
class _OneExchange:
    """The `DispatchContext` of one request answered in one JSON body: no back channel, and
    nowhere for a notification or a progress report to go (the SDK drops them there too)."""

    request_id: RequestId
    message_metadata: ServerMessageMetadata
    progress_token: ProgressToken | None = None
    transport: TransportContext = _TRANSPORT
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)

    @property
    def can_send_request(self) -> bool:
        return False

    # The signatures are DispatchContext's; these use little of what they are given.
    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        del params, opts
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        del params, opts
        log.debug("dropped %s: a JSON answer carries only the response", method)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        del progress, total, message


def single_exchange_request(message: Any, request: Request) -> tuple[JSONRPCRequest, str] | None:
    """`message` as a request, with the protocol version to serve it at on the single-exchange
    path; None when the SDK's transport must take it (see the module's docstring), a message
    that is not a well-formed request included: the SDK answers those in its own words."""
    if not isinstance(message, dict) or "id" not in message:
        return None  # a notification, a response or a batch
    if message.get("method") == "initialize" or not isinstance(message.get("method"), str):
        return None
    version = request.headers.get("mcp-protocol-version")
    if not _handshake_era_json(version, request):
        return None
    try:
        envelope = jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        return None
    if not isinstance(envelope, JSONRPCRequest):  # a method beside a result or an error
        return None
    return envelope, version or DEFAULT_NEGOTIATED_VERSION


class SingleExchange:
    """Serves single-exchange requests for `server`, with the lifespan state the SDK's session
    manager entered (recorded here as it enters, since the manager keeps it to itself)."""

    def __init__(self, server: Server[Any]) -> None:
        self.server = server
        self.state: Any = None
        self.running = False
        inner = server.lifespan

        @asynccontextmanager
        async def recording(app: Server[Any]) -> AsyncIterator[Any]:
            async with inner(app) as state:
                self.state, self.running = state, True
                try:
                    yield state
                finally:
                    self.state, self.running = None, False

        server.lifespan = recording

    async def answer(self, request: Request, envelope: JSONRPCRequest, version: str) -> Response:
        """Serve one request and answer it as the SDK's JSON mode does."""
        if not self.running:
            raise RuntimeError("The MCP session manager is not running.")
        exchange = _OneExchange(
            request_id=envelope.id,
            message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
            progress_token=progress_token_from_params(envelope.params),
        )
        connection = Connection.from_envelope(version, None, None)
        try:
            result = await serve_one(
                self.server,
                exchange,
                envelope.method,
                envelope.params,
                connection=connection,
                lifespan_state=self.state,
            )
        except Exception as error:  # mapped to the wire as the SDK's dispatcher maps it
            data = handler_exception_to_error_data(error)
            if data is None:
                log.exception("handler for %r raised", envelope.method)
                data = ErrorData(code=0, message=str(error))
            return _json(JSONRPCError(jsonrpc="2.0", id=envelope.id, error=data))
        return _json(JSONRPCResponse(jsonrpc="2.0", id=envelope.id, result=result))


def _json(message: JSONRPCResponse | JSONRPCError) -> Response:
    return Response(
        message.model_dump_json(by_alias=True, exclude_unset=True), media_type=CONTENT_TYPE_JSON
    )


def _handshake_era_json(version: str | None, request: Request) -> bool:
    """A handshake-era version (or none: the SDK's default) and JSON accepted and sent; else
    the SDK's transport answers: 2026-07-28 or a version it rejects, 406, 415."""
    if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return False
    accepts_json, _ = check_accept_headers(request)
    return accepts_json and _is_json(request.headers.get("content-type", ""))


def _is_json(content_type: str) -> bool:
    parts = (part.strip() for part in content_type.split(";", maxsplit=1)[0].split(","))
    return any(part == CONTENT_TYPE_JSON for part in parts)
