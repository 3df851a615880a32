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
import logging

from mcp import MCPError
from mcp.types import INTERNAL_ERROR, CallToolResult, ImageContent, TextContent

from crewboard.contract.reply import Reply, compact
from crewboard.errors import CrewboardError
from crewboard.storage.outages import unavailable

log = logging.getLogger(__name__)


def success(reply: Reply) -> CallToolResult:
    text = reply.text if reply.text is not None else compact(reply.body)
    content: list[TextContent | ImageContent] = [TextContent(type="text", text=text)]
    if reply.note:
        content.append(TextContent(type="text", text=reply.note))
    if reply.image is not None:
        encoded = base64.b64encode(reply.image.data).decode("ascii")
        content.append(ImageContent(type="image", data=encoded, mime_type=reply.image.media_type))
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
