"""What an operation answers, whatever door carries it: a JSON body, an optional second part
(a note), and the helpers that keep an answer inside the 48 KiB budget an agent reads.

The doors turn a `Reply` into their own form: MCP into a tool result (`mcp/render.py`), REST
into a JSON response, the CLI into printed JSON or text.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from crewboard.domain.files import TextWindow
from crewboard.domain.images import ShownImage
from crewboard.services import paging
from crewboard.services.paging import next_offset
from crewboard.services.text_windows import ANSWER_BUDGET

RESPONSE_BUDGET = ANSWER_BUDGET  # every answer fits in 48 KiB (services/text_windows.py)
ROWS_BUDGET = RESPONSE_BUDGET - 2048  # a page's rows; the rest is the answer around them
WINDOW_ROOM = ROWS_BUDGET - 2048  # bytes of text one read answers, leaving room for the rest


@dataclass(frozen=True)
class Reply:
    body: dict[str, Any]
    note: str | None = None  # the optional second text part
    text: str | None = None  # `compact(body)`, when the tool has made it already
    # An image part after the text, held to the server's bounds: made by contract/images.py.
    image: ShownImage | None = None
    # A reply that must wait on something (a spec session's first turn): awaited on the event
    # loop after the tool's thread returns, so the wait holds no worker thread; its Reply is
    # the answer.
    follow: Callable[[], Awaitable[Reply]] | None = None


def compact(value: Any) -> str:
    # allow_nan=False: a non-finite number is not JSON; failing loudly beats a reply no client parses.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def page_note(*, shown: int, offset: int, total: int) -> str | None:
    """The second text part of a list cut short: how many there are and where to go on."""
    following = offset + shown
    if following >= total:
        return None
    return f"Showing {shown} of {total} from offset {offset}; pass offset {following} for the next page."


def window_view(window: TextWindow) -> dict[str, Any]:
    """A window of lines as every read words it (`window_note` reads these fields)."""
    return {
        "offset": window.offset,
        "lines": window.lines,
        "totalLines": window.total_lines,
        "text": window.text,
        "truncated": window.truncated,
        "nextOffset": window.next_offset,
    }


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
