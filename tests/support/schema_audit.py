"""Every tool call a test makes is held against the schema `tools/list` publishes.

The published schemas are rewritten to be lean (crewboard/mcp/schema.py); the argument models
stay the one source of validation. `SchemaAudit` wraps the served app: for every `tools/call`
the server answers as a success, the arguments must also be valid under the tool's published
input schema. A call the server takes but its schema refuses would mean the schema an agent
reads says less than the server accepts (a client that validates first could not make the
call). Any such call fails the test that made it, when its server stops.

A call may name an argument by one of its documented other names (snake_case, a reference
product's name: `other_names`); those are not in the published schema (they would cost every
agent listing bytes), so the audit spells the call with the wire names first, as the server
does. Arguments marked UNLISTED (contract/args.py: a check such as workspaceId, or a Pencil
import's task links) are taken but not listed either; the audit leaves them out the same way.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema_rs
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from crewboard.contract.args import wire_names, without_unlisted
from crewboard.contract.catalogue import default_catalogue
from crewboard.errors import ValidationFailed

FORMATS = {"date": lambda _v: True, "date-time": lambda _v: True}  # the server checks ISO text


@cache
def published_validator(name: str) -> Any:
    tool = default_catalogue().find(name)
    if tool is None:
        return None
    return jsonschema_rs.validator_for(tool.schema())


class SchemaAudit:
    """ASGI middleware: records calls the server took whose arguments the schema refuses."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.violations: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/mcp" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        request = bytearray()
        response = bytearray()

        async def tapped_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                request.extend(message.get("body", b""))
            return message

        async def tapped_send(message: Message) -> None:
            if message["type"] == "http.response.body":
                response.extend(message.get("body", b""))
            await send(message)

        await self.app(scope, tapped_receive, tapped_send)
        self._check(bytes(request), bytes(response))

    def _check(self, request: bytes, response: bytes) -> None:
        try:
            sent = json.loads(request)
            answered = json.loads(response)
        except (ValueError, RecursionError):
            return  # not JSON (a refused body, or an event stream): nothing was called
        calls = {m.get("id"): m for m in _messages(sent) if m.get("method") == "tools/call"}
        for answer in _messages(answered):
            call = calls.get(answer.get("id"))
            result = answer.get("result")
            if call is None or not isinstance(result, dict) or result.get("isError"):
                continue
            params = call.get("params") or {}
            validator = published_validator(str(params.get("name")))
            arguments = _wire(str(params.get("name")), params.get("arguments") or {})
            if validator is not None and not validator.is_valid(arguments):
                error = next(iter(validator.iter_errors(arguments)))
                self.violations.append(f"{params.get('name')}: {error.message} in {arguments!r}")


def _wire(name: str, arguments: Any) -> Any:
    """The arguments with their wire names (as they were, when the server would refuse them)."""
    tool = default_catalogue().find(name)
    if tool is None or not isinstance(arguments, dict):
        return arguments
    try:
        return without_unlisted(tool.args, wire_names(tool.args, arguments))
    except ValidationFailed:
        return arguments


def _messages(body: Any) -> list[dict[str, Any]]:
    items = body if isinstance(body, list) else [body]
    return [item for item in items if isinstance(item, dict)]
