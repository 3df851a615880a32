"""The HTTP front of /mcp: bearer auth per message, 405 for GET, toolset headers, and
JSON-RPC batches (split here, since the SDK refuses arrays) for handshake-era clients."""

from __future__ import annotations

import json
from typing import Any

from anyio import to_thread
from mcp_types import JSONRPCRequest
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from crewboard.config import Settings
from crewboard.domain.identity.access import Scope as TokenScope
from crewboard.domain.identity.access import Toolset, parse_toolsets
from crewboard.domain.identity.records import Actor
from crewboard.errors import BodyTooLarge, CrewboardError, Unauthenticated, ValidationFailed
from crewboard.jsonbody import MAX_UPLOAD_BODY, BadJson, parse_json, read_request_body
from crewboard.mcp.caller import CURRENT_CALLER, PENDING_CHECK, Caller, TokenCheck
from crewboard.mcp.exchange import SingleExchange, single_exchange_request
from crewboard.mcp.server import UNAUTHORIZED
from crewboard.services.identity.tokens import authenticate_token
from crewboard.services.oauth.grants import (
    acts_for_grant,
    authenticate_access_token,
    is_access_token,
)
from crewboard.storage.database import Database

MAX_BATCH = 20
INVALID_REQUEST = -32600
PARSE_ERROR = -32700
MODERN_VERSION = "2026-07-28"
METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"
ROOT_METADATA_PATH = "/.well-known/oauth-protected-resource"
# The eras whose authorization rules define a step-up: a call needing a scope the token lacks
# gets HTTP 403 with an `insufficient_scope` challenge naming it (the result says why, too).
SCOPE_CHALLENGE_VERSIONS = frozenset({"2025-11-25", MODERN_VERSION})


def protected_resource_metadata(settings: Settings) -> dict[str, Any]:
    """RFC 9728 metadata for the /mcp resource: tokens go in the Authorization header, and
    this server is its own authorization server (unless OAuth is off: API tokens only)."""
    base = settings.public_url
    return {
        "resource": f"{base}/mcp",
        "resource_name": "Crewboard MCP",
        "authorization_servers": [base] if settings.oauth_enabled else [],
        "bearer_methods_supported": ["header"],
        "scopes_supported": [scope.value for scope in TokenScope],
        "resource_documentation": f"{base}/",
    }


def _rpc_error(id_: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": error}


class McpFront:
    """ASGI app for /mcp in front of the SDK's streamable HTTP handler."""

    def __init__(
        self,
        sdk_app: ASGIApp,
        db: Database,
        settings: Settings,
        tool_names: frozenset[str],
        single: SingleExchange | None = None,
        *,
        tool_scopes: dict[str, frozenset[TokenScope]] | None = None,
    ) -> None:
        self.sdk_app = sdk_app
        self.single = single
        self.db = db
        self.settings = settings
        self.tool_names = tool_names
        self.tool_scopes = tool_scopes or {}
        self.audience = f"{settings.public_url}/mcp"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await Response("Use POST for MCP requests.", 405, headers={"Allow": "POST"})(
                scope, receive, send
            )
            return
        # A field value excludes the whitespace around it (RFC 9110 §5.5). h11 strips it, the
        # httptools parser uvicorn prefers does not, and the SDK compares Mcp-Method and
        # Mcp-Name with the body exactly: strip it here, whichever parser served the request.
        scope = {**scope, "headers": [(k, v.strip(b" \t")) for k, v in scope["headers"]]}
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            secret = _bearer_secret(headers.get("authorization"))
            narrowing = self._narrowing(headers)
        except Unauthenticated as error:
            await self._unauthorized(error, headers)(scope, receive, send)
            return
        except ValidationFailed as error:
            await JSONResponse(
                _rpc_error(None, INVALID_REQUEST, error.message, error.details), 400
            )(scope, receive, send)
            return
        body, messages, refusal = await _read_messages(scope, receive)
        request = Request(scope, _replay(body, receive))
        taken = None
        if refusal is None and self.single is not None and not is_access_token(secret):
            taken = single_exchange_request(messages, request)
        if taken is not None and taken[0].method == "tools/call":
            # The common case, an API token's tool call: the token is checked in the call's own
            # worker-thread hop (as on stdio), not in a hop of its own before it.
            check = TokenCheck(secret, *narrowing)
            await self._deferred(
                scope, receive, send, request=request, taken=taken, check=check, headers=headers
            )
            return
        await self._checked(
            scope, receive, send, secret=secret, body=body, messages=messages, refusal=refusal,
            request=request, taken=taken, narrowing=narrowing, headers=headers,
        )  # fmt: skip

    async def _checked(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        *,
        secret: str,
        body: bytes,
        messages: Any,
        refusal: Response | None,
        request: Request,
        taken: tuple[JSONRPCRequest, str] | None,
        narrowing: tuple[tuple[Toolset, ...] | None, tuple[str, ...] | None],
        headers: dict[str, str],
    ) -> None:
        """Any other request: the token checked first, in a hop of its own."""
        try:
            actor = await self._authenticate(secret)
        except Unauthenticated as error:
            await self._unauthorized(error, headers)(scope, receive, send)
            return
        if refusal is not None:
            await refusal(scope, _replay(b""), send)
            return
        if isinstance(messages, list) and headers.get("mcp-protocol-version") != MODERN_VERSION:
            await self._batch(scope, receive, send, messages, headers=headers, narrowing=narrowing)
            return
        if (challenge := self._scope_challenge(actor, messages, headers)) is not None:
            send = _with_challenge(send, challenge)
        token = CURRENT_CALLER.set(Caller(actor, *narrowing))
        try:
            if self.single is not None and taken is not None:
                response = await self.single.answer(request, *taken)
                await response(scope, receive, send)
            else:
                await self.sdk_app(scope, _replay(body, receive), send)
        finally:
            CURRENT_CALLER.reset(token)

    async def _deferred(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        *,
        request: Request,
        taken: tuple[JSONRPCRequest, str],
        check: TokenCheck,
        headers: dict[str, str],
    ) -> None:
        """A tools/call whose token the call checks (TokenCheck); a token it refuses, or one
        a request the SDK refused before the call never got checked with, answers 401 as
        any other request's would."""
        assert self.single is not None  # noqa: S101 - the caller looked
        token = PENDING_CHECK.set(check)
        try:
            response = await self.single.answer(request, *taken)
        finally:
            PENDING_CHECK.reset(token)
        if check.failed is not None:  # as a check before the call would have failed
            raise check.failed
        if check.refused is not None:
            response = self._unauthorized(Unauthenticated(check.refused), headers)
        elif not check.checked:
            try:
                await self._authenticate(check.secret)
            except Unauthenticated as error:
                response = self._unauthorized(error, headers)
        await response(scope, receive, send)

    async def _authenticate(self, secret: str) -> Actor:
        if is_access_token(secret):
            return await to_thread.run_sync(
                authenticate_access_token, self.db, secret, self.audience
            )
        return await to_thread.run_sync(authenticate_token, self.db, secret)

    def _scope_challenge(self, actor: Actor, messages: Any, headers: dict[str, str]) -> str | None:
        """The `insufficient_scope` challenge for a signed-in app's call of a tool that needs
        a scope its grant lacks, in the eras that define one; else None."""
        if not acts_for_grant(actor) or not isinstance(messages, dict):
            return None
        if headers.get("mcp-protocol-version") not in SCOPE_CHALLENGE_VERSIONS:
            return None
        params = messages.get("params")
        if messages.get("method") != "tools/call" or not isinstance(params, dict):
            return None
        needs = self.tool_scopes.get(str(params.get("name")))
        if needs is None or needs <= actor.scopes:
            return None
        wanted = " ".join(sorted(s.value for s in needs | actor.scopes))
        missing = ", ".join(sorted(s.value for s in needs - actor.scopes))
        return (
            f'Bearer error="insufficient_scope", scope="{wanted}", '
            f'resource_metadata="{self.settings.public_url}{METADATA_PATH}", '
            f'error_description="This tool needs {missing}; approve the app again with it."'
        )

    def _unauthorized(self, error: Unauthenticated, headers: dict[str, str]) -> Response:
        challenge = f'Bearer resource_metadata="{self.settings.public_url}{METADATA_PATH}"'
        if headers.get("authorization"):
            challenge += ', error="invalid_token"'
        return JSONResponse(
            _rpc_error(None, UNAUTHORIZED, error.message),
            401,
            headers={"WWW-Authenticate": challenge},
        )

    def _narrowing(
        self, headers: dict[str, str]
    ) -> tuple[tuple[Toolset, ...] | None, tuple[str, ...] | None]:
        """X-MCP-Toolsets / X-MCP-Tools: choose the toolsets this request shows (`all` for
        every one) and narrow them to some tools. Neither widens what scopes and roles allow."""
        toolsets: tuple[Toolset, ...] | None = None
        names: tuple[str, ...] | None = None
        if raw := headers.get("x-mcp-toolsets"):
            toolsets = parse_toolsets(raw, "X-MCP-Toolsets")
        if raw := headers.get("x-mcp-tools"):
            parts = [p.strip() for p in raw.split(",") if p.strip()]
            unknown = [p for p in parts if p not in self.tool_names]
            if unknown:
                raise ValidationFailed.field(
                    "X-MCP-Tools", f"unknown tool {unknown[0]!r}.", sorted(self.tool_names)
                )
            names = tuple(parts)
        return toolsets, names

    async def _batch(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        messages: list[Any],
        *,
        headers: dict[str, str],
        narrowing: tuple[tuple[Toolset, ...] | None, tuple[str, ...] | None],
    ) -> None:
        if not messages or len(messages) > MAX_BATCH:
            size = "empty" if not messages else f"{len(messages)} messages long"
            await JSONResponse(
                _rpc_error(
                    None,
                    INVALID_REQUEST,
                    f"A batch holds 1 to {MAX_BATCH} messages; this one is {size}. Nothing in it ran.",
                    {"limit": MAX_BATCH, "received": len(messages)},
                ),
                400,
            )(scope, _replay(b""), send)
            return
        answers = [
            answer
            for message in messages
            if (
                answer := await self._one_of_batch(
                    scope, receive, message, headers=headers, narrowing=narrowing
                )
            )
            is not None
        ]
        if not answers:
            await Response(status_code=202)(scope, _replay(b""), send)
            return
        await JSONResponse(answers)(scope, _replay(b""), send)

    async def _one_of_batch(
        self,
        scope: Scope,
        receive: Receive,
        message: Any,
        *,
        headers: dict[str, str],
        narrowing: tuple[tuple[Toolset, ...] | None, tuple[str, ...] | None],
    ) -> dict[str, Any] | None:
        """Run one message on its own, authenticated again: a token revoked mid-batch stops here."""
        if (refusal := _bad_request_id(message)) is not None:
            return refusal
        id_ = message.get("id") if isinstance(message, dict) else None
        is_request = isinstance(message, dict) and "id" in message
        try:
            actor = await self._authenticate(_bearer_secret(headers.get("authorization")))
        except CrewboardError as error:
            return _rpc_error(id_, UNAUTHORIZED, error.message) if is_request else None
        token = CURRENT_CALLER.set(Caller(actor, *narrowing))
        try:
            status, raw = await _capture(self.sdk_app, scope, receive, json.dumps(message).encode())
        finally:
            CURRENT_CALLER.reset(token)
        if not raw.strip():
            return (
                None
                if status == 202 or not is_request
                else _rpc_error(
                    id_, INVALID_REQUEST, f"The message got HTTP {status} and no answer."
                )
            )
        answer = json.loads(raw)
        return answer if isinstance(answer, dict) else None


def _bearer_secret(authorization: str | None) -> str:
    """The secret of an `Authorization: Bearer …` header (not yet checked).

    Raises:
        Unauthenticated: no header, or not a bearer one.
    """
    if not authorization:
        raise Unauthenticated(
            "Send your Crewboard token as `Authorization: Bearer cb_…`, or connect by "
            "signing in (OAuth): the WWW-Authenticate header says where."
        )
    scheme, _, secret = authorization.partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise Unauthenticated("The Authorization header must be `Bearer cb_…`.")
    return secret.strip()


async def _read_messages(scope: Scope, receive: Receive) -> tuple[bytes, Any, Response | None]:
    """The body and its messages, or the answer refusing it: over MAX_UPLOAD_BODY (413), not JSON,
    too deep, a bad id."""
    try:
        body = await read_request_body(Request(scope, receive), MAX_UPLOAD_BODY)
    except BodyTooLarge:
        return b"", None, Response("Request body too large", 413)
    except ClientDisconnect:
        # Gone before its request was whole: the answer goes nowhere, but nothing runs.
        return b"", None, Response(status_code=400)
    return body, *_parse_messages(body)


def _parse_messages(body: bytes) -> tuple[Any, Response | None]:
    """The parsed body, or the answer refusing it: not JSON, too deep, a bad id."""
    try:
        messages = parse_json(body)
    except BadJson as error:
        code = PARSE_ERROR if error.kind == "parse" else INVALID_REQUEST
        return None, JSONResponse(_rpc_error(None, code, error.message), 400)
    if (refusal := _bad_request_id(messages)) is not None:
        return None, JSONResponse(refusal, 400)
    return messages, None


def _bad_request_id(message: Any) -> dict[str, Any] | None:
    """The error answer for a request whose `id` is not a string or an integer, else None.

    The SDK takes such a message for a notification and answers nothing; JSON-RPC asks for an
    Invalid Request error (with a null id, since the one sent cannot be echoed).
    """
    if not isinstance(message, dict) or "id" not in message:
        return None
    id_ = message["id"]
    if isinstance(id_, str) or (isinstance(id_, int) and not isinstance(id_, bool)):
        return None
    return _rpc_error(
        None,
        INVALID_REQUEST,
        f"The request id must be a string or an integer; got {json.dumps(id_)[:40]}.",
        {"field": "id"},
    )


def _with_challenge(send: Send, challenge: str) -> Send:
    """Answer 403 with the challenge; the body (the tool's error result) is left as it is."""

    async def challenged(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {
                **message,
                "status": 403,
                "headers": [
                    *message.get("headers", []),
                    (b"www-authenticate", challenge.encode("latin-1")),
                ],
            }
        await send(message)

    return challenged


def _replay(body: bytes, then: Receive | None = None) -> Receive:
    """Hand `body` over again (it was read here first); afterwards listen to the real client.

    A streaming answer watches `receive()` for the client going away: a made-up disconnect
    right after the body would make the SDK drop its own answer.
    """
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await then() if then is not None else {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _capture(app: ASGIApp, scope: Scope, receive: Receive, body: bytes) -> tuple[int, bytes]:
    """Run `app` for one message and collect its status and body instead of sending them."""
    status = 500
    parts: list[bytes] = []

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            parts.append(message.get("body", b""))

    sub_scope = dict(scope)
    sub_scope["headers"] = [
        (k, str(len(body)).encode() if k.lower() == b"content-length" else v)
        for k, v in scope["headers"]
    ]
    await app(sub_scope, _replay(body, receive), send)
    return status, b"".join(parts)
