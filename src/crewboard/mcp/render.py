"""How every tool answers: compact JSON first (also as structured content), a second part only
when there is more to say; errors as `isError` results with `{code, message, details}`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from crewboard.errors import CrewboardError, LimitExceeded, ValidationFailed

RESPONSE_BUDGET = 48 * 1024  # every answer fits in 48 KiB


@dataclass(frozen=True)
class Reply:
    body: dict[str, Any]
    note: str | None = None  # the optional second text part


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def success(reply: Reply) -> CallToolResult:
    content = [TextContent(type="text", text=compact(reply.body))]
    if reply.note:
        content.append(TextContent(type="text", text=reply.note))
    return CallToolResult(content=content, structured_content=reply.body, is_error=False)


def failure(error: CrewboardError) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=error.message)],
        structured_content=error.to_dict(),
        is_error=True,
    )


def validation_failure(error: ValidationError, model_fields: list[str]) -> CrewboardError:
    """Turn pydantic's complaint about the arguments into one error naming the field."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "arguments"
    kind = first["type"]
    if kind == "extra_forbidden":
        return ValidationFailed.field(field, "is not an argument of this tool.", model_fields)
    if kind == "missing":
        return ValidationFailed(f"{field}: is required.", {"field": field})
    ctx = first.get("ctx") or {}
    if kind in ("string_too_long", "too_long"):
        limit = ctx.get("max_length")
        return LimitExceeded(
            f"{field}: over the limit of {limit}.", {"field": field, "limit": limit}
        )
    if kind == "literal_error":
        accepted = [
            part.strip(" '")
            for part in str(ctx.get("expected", "")).replace(" or ", ",").split(",")
        ]
        return ValidationFailed.field(field, f"{first['input']!r} is not accepted.", accepted)
    return ValidationFailed(f"{field}: {first['msg']}.", {"field": field})


def page_note(*, shown: int, offset: int, total: int) -> str | None:
    """The second text part of a list cut short: how many there are and where to go on."""
    following = offset + shown
    if following >= total:
        return None
    return f"Showing {shown} of {total} from offset {offset}; pass offset {following} for the next page."


def fit_rows(rows: list[Any], budget: int = RESPONSE_BUDGET - 2048) -> list[Any]:
    """Keep leading rows while their JSON stays inside the budget (a page may hold fewer)."""
    kept: list[Any] = []
    used = 0
    for row in rows:
        used += len(compact(row).encode()) + 1
        if used > budget and kept:
            break
        kept.append(row)
    return kept
