"""Following the broker over Server-Sent Events: the part the web app's `/events` and the REST
door's `/api/v1/projects/{id}/events` share.

A stream subscribes to the broker first, then (when the client sent `Last-Event-ID`) catches
up from the log up to where the broker stood when it joined, then takes the rest from its
queue. Ids only grow, so nothing is sent twice and nothing falls between the two. An id this
server cannot resume after gets an `event: reset` naming where the stream goes on from. A
comment line every HEARTBEAT seconds keeps proxies from closing a quiet stream, and a stream
that is cut (its credential ended, too slow, server stopping) ends with an `event: end` and the
reason. The end of a credential reaches the broker through the event log at once; every CHECK
seconds the stream also asks again whether its credential still works (`Stream.recheck`), which
ends it when one runs out (an expiry writes no event) and backs the log up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from crewboard.services.live import Broker, Claim, StreamRefused, Subscription
from crewboard.storage.outages import is_outage

HEARTBEAT = 15.0  # seconds between comments on a quiet stream
CHECK = 10.0  # seconds between checks that the stream's credential still works
BACKFILL = 500  # events read from the log at a time while catching up
RETRY_MS = 2000  # how long a browser waits before it reconnects

Row = dict[str, Any]


def control(kind: str, reason: str, **more: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'reason': reason, **more})}\n\n"


def resume_point(request: Request) -> int | None:
    """The id the client wants to resume after: None when it sent none, -1 when it is not an
    event id at all."""
    raw = request.headers.get("last-event-id") or request.query_params.get("after")
    if raw is None:
        return None
    raw = raw.strip()
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
        return -1
    return int(raw)


@dataclass(frozen=True)
class Stream:
    """One open stream and what it needs besides the broker's queue."""

    request: Request
    sub: Subscription
    line: Callable[[Row], str]  # one event as SSE lines
    read_log: Callable[[int], list[Row]]  # the stream's events after an id (blocking)
    # Why the stream's credential no longer works, or None while it does (every CHECK seconds;
    # blocking).
    recheck: Callable[[], str | None] | None = None


def open_stream(
    broker: Broker,
    request: Request,
    projects: frozenset[str],
    claim: Claim,
    make: Callable[[Subscription], Stream],
) -> Response:
    """Subscribe and answer with the event stream, or with 429/503 (naming the limit) when
    there is no room."""
    try:
        sub = broker.subscribe(projects, claim)
    except StreamRefused as refused:
        details = {"limit": refused.limit, "max": refused.cap}
        return JSONResponse(
            {"error": {"code": "LIMIT_EXCEEDED", "message": refused.reason, "details": details}},
            status_code=refused.status,
            headers={"retry-after": "5"},
        )
    stream = make(sub)
    wanted = resume_point(request)

    async def body() -> AsyncIterator[str]:
        try:
            async for chunk in follow(stream, wanted):
                yield chunk
        finally:
            broker.unsubscribe(sub)

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


async def follow(stream: Stream, wanted: int | None) -> AsyncIterator[str]:
    yield f"retry: {RETRY_MS}\n\n"
    if wanted is not None and (wanted < 0 or wanted > stream.sub.start):
        yield control(
            "reset",
            "Last-Event-ID names no event this server can resume after; the stream goes on from "
            "the newest event. Read the project again to catch up.",
            resumeFrom=stream.sub.start,
        )
    elif wanted is not None:
        async for chunk in _catch_up(stream, wanted):
            yield chunk
    async for chunk in _live(stream):
        yield chunk


async def _catch_up(stream: Stream, after: int) -> AsyncIterator[str]:
    """From the log, up to where the broker stood when the stream joined; what came after is
    in the stream's queue."""
    while True:
        rows = await to_thread.run_sync(stream.read_log, after)
        rows = [r for r in rows if r["id"] <= stream.sub.start]
        for row in rows:
            after = row["id"]
            yield stream.line(row)
        if len(rows) < BACKFILL:
            return


def _text(stream: Stream, row: Row) -> str:
    """The event's lines, made once per event and kind of stream: the broker hands every
    stream of a project the same row."""
    key = f"sse:{stream.line.__module__}.{stream.line.__qualname__}"
    text = row.get(key)
    if text is None:
        text = row[key] = stream.line(row)
    return str(text)


async def _recheck(check: Callable[[], str | None]) -> str | None:
    """Why the stream's credential no longer works, or None; while the database cannot say (an
    outage), the stream goes on and asks again at the next check, as the broker goes on after
    it."""
    try:
        return await to_thread.run_sync(check)
    except Exception as error:
        if is_outage(error):
            return None
        raise


async def _live(stream: Stream) -> AsyncIterator[str]:
    sub = stream.sub
    last = sub.start
    loop = asyncio.get_running_loop()
    checked = quiet = loop.time()
    while sub.cut is None and not await stream.request.is_disconnected():
        if stream.recheck is not None and loop.time() - checked >= CHECK:
            checked = loop.time()
            ended = await _recheck(stream.recheck)
            if ended is not None:
                yield control("end", f"The stream ended: {ended}.")
                return
        sub.woken.clear()  # before draining: a wake-up during a yield below is not lost
        last, batch = _drain(stream, last)
        if batch:
            quiet = loop.time()
            yield batch
            continue
        if loop.time() - quiet >= HEARTBEAT:
            quiet = loop.time()
            yield ": heartbeat\n\n"
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(sub.woken.wait(), min(CHECK, HEARTBEAT))
    if sub.cut is not None:
        # What the broker queued before the cut came before the event that ended the stream.
        _, batch = _drain(stream, last)
        yield batch + control("end", sub.cut)


def _drain(stream: Stream, last: int) -> tuple[int, str]:
    """Everything waiting in the stream's queue after `last`, as one write."""
    batch = []
    queue = stream.sub.queue
    while not queue.empty():
        row = queue.get_nowait()
        if row["id"] > last:
            last = row["id"]
            batch.append(_text(stream, row))
    return last, "".join(batch)
