"""Reading a JSON request body on any door: bounded in size and in nesting, strict numbers.

Python's parser takes `NaN`, `Infinity` and nesting until the interpreter's recursion limit
breaks; neither is JSON a client should send, and a body nested thousands deep costs far more
to walk than it can mean. Every door (the MCP front, REST) reads bodies through `parse_json`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request

from crewboard.errors import BodyTooLarge

MAX_BODY = 4 * 1024 * 1024  # bytes; larger bodies are refused with 413 before parsing
# Bytes a body that may carry a file holds: the MCP door (an attachment of up to 10 MiB as
# base64 is about 13.4 MiB), and the REST and web routes that upload or save a file. Every
# other route keeps MAX_BODY.
MAX_UPLOAD_BODY = 16 * 1024 * 1024
MAX_DEPTH = 64  # arrays and objects inside one another; the deepest schema needs fewer than 10


class BadJson(ValueError):
    """The body is not JSON (`kind` "parse") or nests deeper than MAX_DEPTH ("depth")."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


async def read_request_body(request: Request, limit: int = MAX_BODY) -> bytes:
    """The whole body of a request, refused once it passes `limit` bytes (declared or sent).

    Starlette keeps what was read, so a later `request.form()` parses these same bytes.

    Raises:
        BodyTooLarge: over the limit.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge.of(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge.of(limit)
        chunks.append(chunk)
    body = b"".join(chunks)
    request._body = body  # Starlette's own cache of the body: form() reads it from here
    return body


def _refuse_constant(name: str) -> Any:
    raise BadJson("parse", f"The body is not valid JSON: {name} is not a JSON number.")


def parse_json(raw: bytes | str, *, nesting: bool = True) -> Any:
    """Parse a request body. With `nesting` False the depth is left to the caller's own walk
    of the value (only nesting the parser itself cannot take is refused).

    Raises:
        BadJson: not JSON, `NaN`/`Infinity`, or nested deeper than MAX_DEPTH.
    """
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except BadJson:
        raise
    except RecursionError:
        raise _too_deep() from None
    except ValueError as error:
        raise BadJson("parse", f"The body is not valid JSON: {error}.") from None
    if nesting:
        check_depth(value)
    return value


def check_depth(value: Any) -> None:
    """Refuse a value whose arrays and objects nest deeper than MAX_DEPTH.

    Raises:
        BadJson: kind "depth".
    """
    if not isinstance(value, dict | list):
        return
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep()
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def first_problem(error: ValidationError) -> tuple[str, str]:
    """Where the first of a pydantic model's errors is (`files[0].size`) and what it says, in
    a document's terms (an object, not the model's class name)."""
    first = error.errors()[0]
    place = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
    message = "must be an object" if first["type"] == "model_type" else str(first["msg"])
    return place.lstrip("."), f"{message[:1].lower()}{message[1:]}."


def _too_deep() -> BadJson:
    return BadJson(
        "depth",
        f"The body nests arrays and objects more than {MAX_DEPTH} deep; no request needs that.",
    )
