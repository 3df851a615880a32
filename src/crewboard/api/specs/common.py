"""What the spec file, attachment and comment routes share: the fields the path carries,
the bytes of an upload, and the content version an `If-Match` names."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import Field
from starlette.requests import Request

from crewboard.api.common import query_params, refuse_carried
from crewboard.contract import args as a
from crewboard.errors import ValidationFailed
from crewboard.jsonbody import MAX_UPLOAD_BODY

TEXT = "text/plain; charset=utf-8"
BINARY = "application/octet-stream"
# Fields the path carries: the project, and the file (by id, so neither fileId nor path).
NOT_IN_BODY = ("projectId", "fileId", "path")


def body_of(data: dict[str, Any], carried: tuple[str, ...]) -> dict[str, Any]:
    """The body, refusing the fields the path carries and `localFilePath`.

    Raises:
        ValidationFailed: naming the field.
    """
    if "localFilePath" in data:
        raise ValidationFailed.field(
            "localFilePath",
            "is taken only by the stdio server, which runs on your machine; over REST send "
            "content (text) or contentBase64 (bytes).",
        )
    return refuse_carried(data, tuple(carried), "the path names the project and the file")


def content_of(text: str | None, encoded: str | None) -> bytes:
    """The bytes to save, from the one source given.

    Raises:
        ValidationFailed: neither or both given, or bad base64.
    """
    if (text is None) == (encoded is None):
        raise ValidationFailed.field(
            "content", "give exactly one of content (text) or contentBase64 (bytes)."
        )
    if text is not None:
        return text.encode("utf-8")
    return decoded(encoded or "")


def decoded(encoded: str) -> bytes:
    """The bytes `contentBase64` holds.

    Raises:
        ValidationFailed: bad base64.
    """
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationFailed.field(
            "contentBase64", "is not valid base64 (standard alphabet, with padding)."
        ) from None


def if_match_version(request: Request, source: str = "GET …/specs/{fileId}") -> str | None:
    """The contentVersion an `If-Match` header names, quoted as an entity tag or bare;
    `source` says where the caller reads it.

    Raises:
        ValidationFailed: not one content version (`*`, a list, a weak tag, empty).
    """
    raw = request.headers.get("if-match")
    if raw is None:
        return None
    tag = raw.strip()
    if len(tag) >= 2 and tag[0] == tag[-1] == '"':
        tag = tag[1:-1]
    if not tag or len(tag) > 64 or any(c in tag for c in '"*, '):
        raise ValidationFailed.field(
            "If-Match",
            f'must name one contentVersion, as {source} gives it: If-Match: "<contentVersion>".',
        )
    return tag


def named(request: Request, model: type[a.Args]) -> dict[str, Any]:
    """The query with the project and file the path names."""
    path = request.path_params
    return {**query_params(request, model), "projectId": path["project"], "fileId": path["file"]}


def no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def expected_version(description: str) -> tuple[Any, Any]:
    """A REST body's `expectedVersion` (as `model_without` takes a field): optional, since
    `If-Match` may carry it instead, but never null, so the schema shows no null for it."""
    return (
        str,
        Field(
            default=None,
            min_length=1,
            max_length=64,
            description=description,
            json_schema_extra=no_default,
        ),
    )


CAP = f"a body of at most {MAX_UPLOAD_BODY // (1024 * 1024)} MiB: 12 MiB of text or 9 MiB of bytes"
