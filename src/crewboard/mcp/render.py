"""How every tool answers: compact JSON in the first text part, a second part only when there is
more to say; errors as `isError` results with `{code, message, details}`.

A success carries its JSON once, as text, with no `structuredContent` and no `outputSchema`.
Clients disagree on which of the two they hand the model (Claude Code passes only the
structured copy and drops the text; others pass only the text; clients of the 2024-11-05 and
2025-03-26 protocols know no structured content at all), so sending both either doubles the
bytes on the wire or loses the second text part for some client. Text is the one form every
client of every protocol version reads. An error is a sentence as text plus its
`{code, message, details}` as structured content: the sentence is not a second copy of the JSON,
and clients that prefer the structured form still see the sentence inside it.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp import MCPError
from mcp.types import INTERNAL_ERROR, CallToolResult, ImageContent, TextContent

from crewboard.errors import CrewboardError
from crewboard.services import paging
from crewboard.services.paging import next_offset
from crewboard.services.text_windows import ANSWER_BUDGET
from crewboard.storage.outages import unavailable

log = logging.getLogger(__name__)

RESPONSE_BUDGET = ANSWER_BUDGET  # every answer fits in 48 KiB (services/text_windows.py)
ROWS_BUDGET = RESPONSE_BUDGET - 2048  # a page's rows; the rest is the answer around them
WINDOW_ROOM = ROWS_BUDGET - 2048  # bytes of text one read answers, leaving room for the rest


@dataclass(frozen=True)
class Reply:
    body: dict[str, Any]
    note: str | None = None  # the optional second text part
    text: str | None = None  # `compact(body)`, when the tool has made it already
    image: tuple[bytes, str] | None = None  # an image part after the text (bytes, media type)
    # A reply that must wait on something (a spec session's first turn): awaited on the event
    # loop after the tool's thread returns, so the wait holds no worker thread; its Reply is
    # the answer.
    follow: Callable[[], Awaitable[Reply]] | None = None


def compact(value: Any) -> str:
    # allow_nan=False: a non-finite number is not JSON; failing loudly beats a reply no client parses.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def success(reply: Reply) -> CallToolResult:
    text = reply.text if reply.text is not None else compact(reply.body)
    content: list[TextContent | ImageContent] = [TextContent(type="text", text=text)]
    if reply.note:
        content.append(TextContent(type="text", text=reply.note))
    if reply.image is not None:
        data, media_type = reply.image
        encoded = base64.b64encode(data).decode("ascii")
        content.append(ImageContent(type="image", data=encoded, mime_type=media_type))
    return CallToolResult(content=content, is_error=False)


def failure(error: CrewboardError) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=error.message)],
        structured_content=error.to_dict(),
        is_error=True,
    )


def unexpected(error: Exception, doing: str) -> MCPError:
    """The protocol error for a failure that is not a refusal (resources, prompts): the database
    out of reach says so with code UNAVAILABLE in its data and is not logged as a bug; anything
    else is logged with its traceback and answered as an internal error."""
    if (outage := unavailable(error)) is not None:
        log.warning("%s: %s", doing, outage.details["cause"])
        return MCPError(code=INTERNAL_ERROR, message=outage.message, data=outage.to_dict())
    log.error("%s failed", doing, exc_info=error)
    return MCPError(code=INTERNAL_ERROR, message="Internal error; the server has logged it.")


def page_note(*, shown: int, offset: int, total: int) -> str | None:
    """The second text part of a list cut short: how many there are and where to go on."""
    following = offset + shown
    if following >= total:
        return None
    return f"Showing {shown} of {total} from offset {offset}; pass offset {following} for the next page."


def window_note(body: dict[str, Any]) -> str | None:
    """The second text part of a window of lines that stops before the end: where to go on."""
    if body["nextOffset"] is None:
        return None
    last = body["offset"] + body["lines"] - 1
    return (
        f"Lines {body['offset']}–{last} of {body['totalLines']}; pass offset "
        f"{body['nextOffset']} for more."
    )


def paged_reply(found: dict[str, Any], key: str, offset: int) -> Reply:
    """A service's page (`key`: its rows, `total`) as an answer within the budget: the rows
    that fit, `nextOffset` after them, and a note when the page is cut short."""
    total = found["total"]

    def answer(rows: list[Any]) -> dict[str, Any]:
        return {key: rows, "total": total, "nextOffset": next_offset(offset, len(rows), total)}

    body, text = fitted_answer(found[key], answer)
    return Reply(body, page_note(shown=len(body[key]), offset=offset, total=total), text)


def fitted_answer(
    rows: list[Any],
    answer: Callable[[list[Any]], dict[str, Any]],
    budget: int = ROWS_BUDGET,
) -> tuple[dict[str, Any], str]:
    """`answer` for as many leading rows as fit in `budget` (as `fit_rows` keeps them), and its
    JSON. The usual page fits whole, and is then dumped once: its answer holds every row, so
    when the answer fits, so do the rows (measured: a 200-row page cost two dumps of 0.5 ms)."""
    body = answer(rows)
    text = compact(body)
    if len(text.encode()) + 1 <= budget:
        return body, text
    body = answer(fit_rows(rows, budget))
    return body, compact(body)


def fit_rows(rows: list[Any], budget: int = ROWS_BUDGET) -> list[Any]:
    """Keep leading rows while their JSON stays inside the budget (a page may hold fewer)."""
    return paging.fit_rows(rows, budget)
