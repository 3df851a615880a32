"""The live stream for signed-in people: Server-Sent Events fed by the event log.

Each event goes out as `id: N` and a small JSON line (type, project, task, time; never a
payload's text). A browser that reconnects sends Last-Event-ID and gets what it missed, in
order. The log is read every POLL seconds, so every node sees every node's events.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
from anyio import to_thread
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from crewboard.services.identity.web_sessions import session_of
from crewboard.services.views import iso
from crewboard.storage.database import Database
from crewboard.web.context import SESSION_COOKIE, _projects

POLL = 0.5  # seconds between reads of the event log
HEARTBEAT = 15.0  # seconds between comments that keep proxies from closing the stream
BATCH = 200


def _start(request: Request, db: Database, project_ids: list[str]) -> int:
    raw = request.headers.get("last-event-id") or request.query_params.get("after")
    if raw and raw.isascii() and raw.isdigit() and len(raw) <= 18:
        return int(raw)
    return db.read(lambda uow: uow.events.latest_id(project_ids))


def _line(event: dict[str, Any]) -> str:
    data = {
        "id": event["id"],
        "type": event["type"],
        "projectId": event["project_id"],
        "taskId": event["task_id"],
        "at": iso(event["created_at"]),
    }
    return f"id: {event['id']}\ndata: {json.dumps(data)}\n\n"


def _read(db: Database, project_ids: list[str], after: int) -> list[dict[str, Any]]:
    return db.read(lambda uow: uow.events.list_after_many(project_ids, after_id=after, limit=BATCH))


async def events(request: Request) -> Response:
    db: Database = request.app.state.db
    signed_in = await to_thread.run_sync(session_of, db, request.cookies.get(SESSION_COOKIE))
    if signed_in is None:
        return Response("Sign in first.", status_code=401)
    projects = await to_thread.run_sync(_projects, db, signed_in.actor)
    wanted = request.query_params.get("project")
    ids = [p["id"] for p in projects if wanted in (None, p["id"], p["key"])]
    after = await to_thread.run_sync(_start, request, db, ids)

    async def stream() -> AsyncIterator[str]:
        last = after
        quiet = 0.0
        yield "retry: 2000\n\n"
        while not await request.is_disconnected():
            rows = await to_thread.run_sync(_read, db, ids, last) if ids else []
            for row in rows:
                last = row["id"]
                yield _line(row)
            if rows:
                quiet = 0.0
                continue
            quiet += POLL
            if quiet >= HEARTBEAT:
                quiet = 0.0
                yield ": still here\n\n"
            await anyio.sleep(POLL)

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )
